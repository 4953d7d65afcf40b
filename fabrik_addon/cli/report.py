"""What happened to each file: results, the JSON report and the lines printed on stderr.

The report's schema::

    {"files": [{"input": path, "output": path or null, "status": "ok" | "error", "error": message or null,
                "chains": [{"armature": name, "tip_bone": name, "frames": [first, last], "max_error": number,
                            "unreachable_frames": [frame, ...], "off_target_frames": [frame, ...],
                            "seconds": number}],
                "plantings": [{"armature": name, "frames": [first, last], "max_error": number,
                               "max_hips_drop": number, "metres_per_unit": number, "seconds": number,
                               "feet": [{"foot": name, "contacts": [[first, last], ...],
                                         "skate_before": [number, ...], "skate_after": [number, ...],
                                         "out_of_reach_frames": [frame, ...],
                                         "off_target_frames": [frame, ...]}]}],
                "targets": [{"armature": name, "targets": {chain: object}, "poles": {chain: object},
                             "frames": [first, last], "seconds": number}],
                "reduced": [{"armature": name, "frames": [first, last], "seconds": number}]}]}

With a ``key_error``, each chain, planting, targets and reduction also has ``"keys": {"keys": number,
"dense_keys": number, "key_error": number, "max_error": number, "p99_error": number}``: the keys written
against a key on every frame, and how far Blender's evaluation of them puts the bones (or Empties) from the
pose they stand for; null without one.

``output`` is null when nothing was written for the file; a failed file lists no chains and no plantings,
since none of them was saved. ``off_target_frames`` are the frames where Blender's evaluation of the keys puts
the tip farther from the target than the tolerance, whatever the cause (``unreachable_frames`` among them).
A planting's lengths are in scene units (``metres_per_unit``, the scene's Unit Scale, turns them into metres);
its ``off_target_frames`` are those where a ball is farther from its goal than the tolerance, its
``out_of_reach_frames`` those whose pin the leg could not reach.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .files import quiet_stdout as quiet_stdout
from .files import write_atomically


@dataclass(frozen=True)
class KeysResult:
    """The keys kept within ``key_error`` against a key on every frame, and the largest and 99th-percentile error
    Blender's evaluation of them shows (world units): of a ``reduction.KeysReport``, or its JSON (``of``)."""

    keys: int
    dense_keys: int
    key_error: float
    max_error: float
    p99_error: float

    @classmethod
    def of(cls, found: Any) -> KeysResult | None:
        values = found if found is None or isinstance(found, dict) else vars(found)
        return None if values is None else cls(*(values[name] for name in cls.__dataclass_fields__))

    def words(self) -> str:
        return f"kept {100 * self.keys / max(self.dense_keys, 1):.0f}% of the keys, max error {self.max_error:.1e}"


@dataclass(frozen=True)
class ChainResult:
    """One baked chain; ``frames`` are the first and last keyed frames, errors in world units."""

    armature: str
    tip_bone: str
    frames: tuple[int, int]
    max_error: float
    unreachable_frames: tuple[int, ...]
    off_target_frames: tuple[int, ...]
    seconds: float
    keys: KeysResult | None = None


@dataclass(frozen=True)
class FootResult:
    """One foot of a planting: its contacts (first and last frames), how far its ball slid in each before and
    after (scene units), and the frames its pin was out of reach or its ball off its goal."""

    foot: str
    contacts: tuple[tuple[int, int], ...]
    skate_before: tuple[float, ...]
    skate_after: tuple[float, ...]
    out_of_reach_frames: tuple[int, ...]
    off_target_frames: tuple[int, ...]


@dataclass(frozen=True)
class PlantResult:
    """Feet planted on one armature; ``frames`` the first and last keyed, lengths in scene units
    (``metres_per_unit`` of them make a metre, as Blender shows lengths)."""

    armature: str
    feet: tuple[FootResult, ...]
    frames: tuple[int, int]
    max_error: float
    max_hips_drop: float
    metres_per_unit: float
    seconds: float
    keys: KeysResult | None = None


@dataclass(frozen=True)
class TargetsResult:
    """Targets made from the animation for one armature's chains: per chain the names of its target and pole
    Empties, and the first and last frame keyed."""

    armature: str
    targets: dict[str, str]
    poles: dict[str, str]
    frames: tuple[int, int]
    seconds: float
    keys: KeysResult | None = None


@dataclass(frozen=True)
class ReduceResult:
    """The keys of one armature's bones reduced, over ``frames`` (first and last)."""

    armature: str
    frames: tuple[int, int]
    seconds: float
    keys: KeysResult


@dataclass(frozen=True)
class FileResult:
    """One input file: ``status`` is "ok" (its output was saved) or "error" (nothing was written)."""

    input: str
    output: str | None
    status: str
    error: str | None = None
    chains: tuple[ChainResult, ...] = field(default=())
    plantings: tuple[PlantResult, ...] = field(default=())
    targets: tuple[TargetsResult, ...] = field(default=())
    reduced: tuple[ReduceResult, ...] = field(default=())

    @classmethod
    def failed(cls, path: Path | str, message: str) -> FileResult:
        return cls(str(path), None, "error", message)


def to_json(results: Sequence[FileResult]) -> dict[str, Any]:
    return {
        "files": [
            {
                "input": r.input,
                "output": r.output,
                "status": r.status,
                "error": r.error,
                "chains": [
                    {
                        "armature": c.armature,
                        "tip_bone": c.tip_bone,
                        "frames": list(c.frames),
                        "max_error": c.max_error,
                        "unreachable_frames": list(c.unreachable_frames),
                        "off_target_frames": list(c.off_target_frames),
                        "seconds": c.seconds,
                        "keys": _keys_json(c.keys),
                    }
                    for c in r.chains
                ],
                "plantings": [_planting_json(p) for p in r.plantings],
                "targets": [
                    {
                        "armature": t.armature,
                        "targets": dict(t.targets),
                        "poles": dict(t.poles),
                        "frames": list(t.frames),
                        "seconds": t.seconds,
                        "keys": _keys_json(t.keys),
                    }
                    for t in r.targets
                ],
                "reduced": [
                    {"armature": k.armature, "frames": list(k.frames), "seconds": k.seconds, "keys": _keys_json(k.keys)}
                    for k in r.reduced
                ],
            }
            for r in results
        ]
    }


def _keys_json(keys: KeysResult | None) -> dict[str, Any] | None:
    return None if keys is None else asdict(keys)


def _planting_json(planting: PlantResult) -> dict[str, Any]:
    feet = [
        {
            "foot": f.foot,
            "contacts": [list(contact) for contact in f.contacts],
            "skate_before": list(f.skate_before),
            "skate_after": list(f.skate_after),
            "out_of_reach_frames": list(f.out_of_reach_frames),
            "off_target_frames": list(f.off_target_frames),
        }
        for f in planting.feet
    ]
    entry = {"armature": planting.armature, "frames": list(planting.frames), "max_error": planting.max_error}
    entry |= {"max_hips_drop": planting.max_hips_drop, "metres_per_unit": planting.metres_per_unit}
    return entry | {"seconds": planting.seconds, "feet": feet, "keys": _keys_json(planting.keys)}


def _planting(data: dict[str, Any]) -> PlantResult:
    feet = tuple(
        FootResult(
            f["foot"],
            tuple((int(first), int(last)) for first, last in f["contacts"]),
            tuple(float(x) for x in f["skate_before"]),
            tuple(float(x) for x in f["skate_after"]),
            tuple(int(x) for x in f["out_of_reach_frames"]),
            tuple(int(x) for x in f["off_target_frames"]),
        )
        for f in data["feet"]
    )
    return PlantResult(
        data["armature"],
        feet,
        (int(data["frames"][0]), int(data["frames"][1])),
        max_error=float(data["max_error"]),
        max_hips_drop=float(data["max_hips_drop"]),
        metres_per_unit=float(data["metres_per_unit"]),
        seconds=float(data["seconds"]),
        keys=KeysResult.of(data.get("keys")),
    )


def from_json(data: dict[str, Any]) -> list[FileResult]:
    """Read back what ``to_json`` wrote (a child process's report)."""
    return [
        FileResult(
            f["input"],
            f["output"],
            f["status"],
            f["error"],
            tuple(
                ChainResult(
                    c["armature"],
                    c["tip_bone"],
                    (int(c["frames"][0]), int(c["frames"][1])),
                    float(c["max_error"]),
                    tuple(int(x) for x in c["unreachable_frames"]),
                    tuple(int(x) for x in c["off_target_frames"]),
                    float(c["seconds"]),
                    KeysResult.of(c.get("keys")),
                )
                for c in f["chains"]
            ),
            tuple(_planting(p) for p in f["plantings"]),
            tuple(
                TargetsResult(
                    t["armature"],
                    dict(t["targets"]),
                    dict(t["poles"]),
                    (int(t["frames"][0]), int(t["frames"][1])),
                    float(t["seconds"]),
                    KeysResult.of(t.get("keys")),
                )
                for t in f.get("targets", ())
            ),
            tuple(
                ReduceResult(k["armature"], (int(k["frames"][0]), int(k["frames"][1])), float(k["seconds"]), keys)
                for k in f.get("reduced", ())
                if (keys := KeysResult.of(k["keys"])) is not None
            ),
        )
        for f in data["files"]
    ]


def write_report(path: Path, results: Sequence[FileResult]) -> None:
    text = json.dumps(to_json(results), indent=2, allow_nan=False) + "\n"  # NaN is not JSON: never written

    def write(temporary: Path) -> None:
        temporary.write_text(text, encoding="utf-8")

    write_atomically(path, write)


def read_report(path: Path) -> list[FileResult]:
    return from_json(json.loads(path.read_text(encoding="utf-8")))


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
        missed = _missed(sum(len(c.unreachable_frames) for c in result.chains), "out of reach")
        missed += _missed(sum(len(c.off_target_frames) for c in result.chains), "off target")
        kept = [c.keys for c in result.chains if c.keys is not None]
        keys = sum(k.keys for k in kept), sum(k.dense_keys for k in kept)
        missed += f", kept {100 * keys[0] / max(keys[1], 1):.0f}% of the keys" if kept else ""
        done.insert(0, f"{_count(len(result.chains), 'chain')}, max error {worst:.1e}{missed}")
    return f"{head}: ok ({seconds:.2f} s): {'; '.join(done)} -> {result.output}"


def _planted(planting: PlantResult) -> str:
    """What a planting did, in a few words: ``planted LeftFoot, RightFoot: 8 contacts, skate up to 27 -> 0.07
    mm, max error 9.9e-04, hips lowered up to 21 mm, 12 frames out of reach``."""
    feet = planting.feet
    mm = 1000 * planting.metres_per_unit
    before = max((s for f in feet for s in f.skate_before), default=0.0) * mm
    after = max((s for f in feet for s in f.skate_after), default=0.0) * mm
    line = f"planted {', '.join(f.foot for f in feet)}: {_count(sum(len(f.contacts) for f in feet), 'contact')}"
    line += f", skate up to {_mm(before)} -> {_mm(after)} mm, max error {planting.max_error:.1e}"
    line += "" if planting.keys is None else f", {planting.keys.words()}"
    if planting.max_hips_drop > 0:
        line += f", hips lowered up to {_mm(planting.max_hips_drop * mm)} mm"
    line += _missed(sum(len(f.out_of_reach_frames) for f in feet), "out of reach")
    return line + _missed(sum(len(f.off_target_frames) for f in feet), "off target")


def _made(made: TargetsResult) -> str:
    """What Targets from Animation did: ``made targets for 4 chains of Rig (3 poles), frames 1-360``."""
    poles = f" ({_count(len(made.poles), 'pole')})" if made.poles else ""
    first, last = made.frames
    return f"made targets for {_count(len(made.targets), 'chain')} of {made.armature}{poles}, frames {first}-{last}"


def _mm(millimetres: float) -> str:
    return f"{millimetres:.1f}" if millimetres >= 1 else f"{millimetres:.2g}"


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'' if number == 1 else 's'}"


def _missed(frames: int, how: str) -> str:
    return f", {frames} frames {how}" if frames else ""


#: How a ``-j N`` child tells its parent that it finished a file (the parent prints the line, numbered).
CHILD_LINE = "@fabrik-file "


def child_line(result: FileResult, seconds: float) -> str:
    """The line a child prints for a finished file, for its parent to read (``read_child_line``)."""
    return CHILD_LINE + json.dumps({"file": to_json([result])["files"][0], "seconds": seconds}, allow_nan=False)


def read_child_line(line: str) -> tuple[FileResult, float] | None:
    """The file and seconds a child's line reports, or None for any other line."""
    if not line.startswith(CHILD_LINE):
        return None
    data = json.loads(line[len(CHILD_LINE) :])
    return from_json({"files": [data["file"]]})[0], float(data["seconds"])


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
        line += f"; {frames} frames off target ({sum(map(len, out))} out of reach) in {' and '.join(where)}"
        line += f" (--strict: exit status {STRICT_STATUS})" if strict and not failed else ""
    return line


#: The exit status of ``--strict`` when every file baked but a frame is off target.
STRICT_STATUS = 3
