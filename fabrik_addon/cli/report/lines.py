"""The lines the command prints on stderr: each file as it finishes (``file_done``), the summary that counts the
frames off target, by cause (``summary``), and ``--strict``'s exit status."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ...words import SCENE_UNITS, causes_words, counted, length_words, skate_words
from .results import ChainResult, FileResult, FootResult, PlantResult, TargetsResult


def say(message: str, stream: TextIO | None = None) -> None:
    """Progress and results go to stderr (stdout belongs to Blender's own messages)."""
    out = stream or sys.stderr
    print(message, file=out, flush=True)


def file_done(result: FileResult, seconds: float, counter: str = "") -> str:
    """One line for a finished file: ``[3/8] shot_03.blend: ok (0.41 s): 2 chains, max error 0.31 mm -> ...``,
    with what each planting did (``planted LeftFoot, RightFoot: 8 contacts, skate up to 27.4 -> 0.07 mm, ...``),
    lengths in the scene's units."""
    head = f"{counter}{Path(result.input).name}"
    if result.status != "ok":
        return f"{head}: error ({seconds:.2f} s): {result.error}"
    done = [_made(made) for made in result.targets] + [_planted(planting) for planting in result.plantings]
    done += [f"reduced the keys of {k.armature}: {k.keys.words()}" for k in result.reduced]
    if result.chains or not (result.plantings or result.targets or result.reduced):
        worst = max((c.max_error for c in result.chains), default=0.0)
        unit = result.chains[0].length_unit if result.chains else SCENE_UNITS
        missed = _missed(sum(len(c.off_target_frames) for c in result.chains), "off target", _by_cause(result.chains))
        kept = [c.keys for c in result.chains if c.keys is not None]
        keys = sum(k.keys for k in kept), sum(k.dense_keys for k in kept)
        missed += f", kept {100 * keys[0] / max(keys[1], 1):.0f}% of the keys" if kept else ""
        done.insert(0, f"{counted(len(result.chains), 'chain')}, max error {length_words(worst, unit)}{missed}")
    return f"{head}: ok ({seconds:.2f} s): {'; '.join(done)} -> {result.output}"


def _planted(planting: PlantResult) -> str:
    """What a planting did, in a few words: ``planted LeftFoot, RightFoot: 8 contacts, skate up to 27.4 -> 0.07
    mm, max error 0.99 mm, hips lowered up to 21.0 mm, 12 frames out of reach``."""
    feet, unit = planting.feet, planting.length_unit
    before = [s for f in feet for s in f.skate_before]
    after = [s for f in feet for s in f.skate_after]
    line = f"planted {', '.join(f.foot for f in feet)}: {counted(sum(len(f.contacts) for f in feet), 'contact')}"
    line += f", {skate_words(before, after, unit)}, max error {length_words(planting.max_error, unit)}"
    line += "" if planting.keys is None else f", {planting.keys.words()}"
    if planting.max_hips_drop > 0:
        line += f", hips lowered up to {length_words(planting.max_hips_drop, unit)}"
    line += _missed(sum(len(f.out_of_reach_frames) for f in feet), "out of reach")
    line += _missed(sum(len(f.off_target_frames) for f in feet), "off target", _by_cause(feet))
    return line + "".join(f"; warning: {warning}" for warning in planting.warnings)


def _made(made: TargetsResult) -> str:
    """What Targets from Animation did: ``made targets for 4 chains of Rig (3 poles), frames 1-360``."""
    poles = f" ({counted(len(made.poles), 'pole')})" if made.poles else ""
    first, last = made.frames
    kept = "" if made.keys is None else f", {made.keys.words()}"
    return (
        f"made targets for {counted(len(made.targets), 'chain')} of {made.armature}{poles}, frames {first}-{last}{kept}"
    )


def _missed(frames: int, how: str, why: str = "") -> str:
    return f", {frames} frames {how}{why}" if frames else ""


def _by_cause(results: Sequence[ChainResult | FootResult]) -> str:
    """How many frames missed for each cause, over ``results``: `` (3 out of reach, 1 the scene)``."""
    return causes_words(dict(result.why) for result in results)


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
        where = [counted(n, word) for n, word in ((chains, "chain"), (len(missed) - chains, "leg")) if n]
        line += f"; {frames} frames off target{_by_cause(missed)} in {' and '.join(where)}"
        line += f" (--strict: exit status {STRICT_STATUS})" if strict and not failed else ""
    return line


#: The exit status of ``--strict`` when every file baked but a frame is off target.
STRICT_STATUS = 3
