"""The lines the command prints on stderr: each file as it finishes (``file_done``), the summary that counts the
frames off target, by cause (``summary``), and ``--strict``'s exit status."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .results import ChainResult, FileResult, FootResult, PlantResult, TargetsResult


def say(message: str, stream: TextIO | None = None) -> None:
    """Progress and results go to stderr (stdout belongs to Blender's own messages)."""
    out = stream or sys.stderr
    print(message, file=out, flush=True)


def file_done(result: FileResult, seconds: float, counter: str = "") -> str:
    """One line for a finished file: ``[3/8] shot_03.blend: ok (0.41 s): 2 chains, max error 3.1e-04 -> ...``,
    with what each planting did (``planted LeftFoot, RightFoot: 8 contacts, skate up to 27 -> 0.07 mm, ...``)."""
    head = f"{counter}{Path(result.input).name}"
    if result.status != "ok":
        return f"{head}: error ({seconds:.2f} s): {result.error}"
    done = [_made(made) for made in result.targets] + [_planted(planting) for planting in result.plantings]
    done += [f"reduced the keys of {k.armature}: {k.keys.words()}" for k in result.reduced]
    if result.chains or not (result.plantings or result.targets or result.reduced):
        worst = max((c.max_error for c in result.chains), default=0.0)
        missed = _missed(sum(len(c.off_target_frames) for c in result.chains), "off target", _by_cause(result.chains))
        kept = [c.keys for c in result.chains if c.keys is not None]
        keys = sum(k.keys for k in kept), sum(k.dense_keys for k in kept)
        missed += f", kept {100 * keys[0] / max(keys[1], 1):.0f}% of the keys" if kept else ""
        done.insert(0, f"{_count(len(result.chains), 'chain')}, max error {worst:.1e}{missed}")
    return f"{head}: ok ({seconds:.2f} s): {'; '.join(done)} -> {result.output}"


def _planted(planting: PlantResult) -> str:
    """What a planting did, in a few words: ``planted LeftFoot, RightFoot: 8 contacts, skate up to 27 -> 0.07
    mm, max error 9.9e-04, hips lowered up to 21 mm, 12 frames out of reach``."""
    feet = planting.feet
    unit, per = planting.length_unit
    before = max((s for f in feet for s in f.skate_before), default=0.0) / per
    after = max((s for f in feet for s in f.skate_after), default=0.0) / per
    line = f"planted {', '.join(f.foot for f in feet)}: {_count(sum(len(f.contacts) for f in feet), 'contact')}"
    line += f", skate up to {_digits(before)} -> {_digits(after)} {unit}, max error {planting.max_error:.1e}"
    line += "" if planting.keys is None else f", {planting.keys.words()}"
    if planting.max_hips_drop > 0:
        line += f", hips lowered up to {_digits(planting.max_hips_drop / per)} {unit}"
    line += _missed(sum(len(f.out_of_reach_frames) for f in feet), "out of reach")
    line += _missed(sum(len(f.off_target_frames) for f in feet), "off target", _by_cause(feet))
    return line + "".join(f"; warning: {warning}" for warning in planting.warnings)


def _made(made: TargetsResult) -> str:
    """What Targets from Animation did: ``made targets for 4 chains of Rig (3 poles), frames 1-360``."""
    poles = f" ({_count(len(made.poles), 'pole')})" if made.poles else ""
    first, last = made.frames
    return f"made targets for {_count(len(made.targets), 'chain')} of {made.armature}{poles}, frames {first}-{last}"


def _digits(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'' if number == 1 else 's'}"


def _missed(frames: int, how: str, why: str = "") -> str:
    return f", {frames} frames {how}{why}" if frames else ""


def _by_cause(results: Sequence[ChainResult | FootResult]) -> str:
    """How many frames missed for each cause, over ``results``: `` (3 out of reach, 1 the scene)``."""
    counts: dict[str, int] = {}
    for result in results:
        for cause, frames in result.why:
            counts[cause] = counts.get(cause, 0) + len(frames)
    return f" ({', '.join(f'{count} {cause}' for cause, count in counts.items())})" if counts else ""


def off_target(results: Sequence[FileResult]) -> list[ChainResult | FootResult]:
    """The baked chains with a frame off target (or out of reach), then the planted feet with a frame off
    target or a pin out of reach: what ``--strict`` fails on."""
    chains: list[ChainResult | FootResult] = [
        c for r in results for c in r.chains if c.off_target_frames or c.unreachable_frames
    ]
    feet = [f for r in results for p in r.plantings for f in p.feet if f.off_target_frames or f.out_of_reach_frames]
    return chains + feet


def summary(results: Sequence[FileResult], seconds: float, *, strict: bool = False) -> str:
    """The last line: files baked and failed, frames off target, and with ``strict`` that they make the exit
    status 3 (when no file failed: then it is 1)."""
    failed = [r for r in results if r.status != "ok"]
    line = f"baked {len(results) - len(failed)} of {len(results)} file(s) in {seconds:.1f} s"
    line += f"; {len(failed)} failed" if failed else ""
    missed = off_target(results)
    if missed:
        out = [c.unreachable_frames if isinstance(c, ChainResult) else c.out_of_reach_frames for c in missed]
        frames = sum(len(set(c.off_target_frames) | set(o)) for c, o in zip(missed, out, strict=True))
        chains = sum(isinstance(c, ChainResult) for c in missed)
        where = [_count(n, word) for n, word in ((chains, "chain"), (len(missed) - chains, "leg")) if n]
        line += f"; {frames} frames off target{_by_cause(missed)} in {' and '.join(where)}"
        line += f" (--strict: exit status {STRICT_STATUS})" if strict and not failed else ""
    return line


#: The exit status of ``--strict`` when every file baked but a frame is off target.
STRICT_STATUS = 3
