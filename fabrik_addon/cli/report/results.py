"""What happened to each file: the results, the JSON report and the lines a ``-j N`` child hands its parent.

The report's schema::

    {"files": [{"input": path, "output": path or null, "status": "ok" | "error", "error": message or null,
                "chains": [{"armature": name, "tip_bone": name, "frames": [first, last], "max_error": number,
                            "unreachable_frames": [frame, ...], "off_target_frames": [frame, ...],
                            "off_target": {cause: [frame, ...]}, "seconds": number,
                            "length_unit": [symbol, number]}],
                "plantings": [{"armature": name, "frames": [first, last], "max_error": number,
                               "max_hips_drop": number, "metres_per_unit": number, "seconds": number,
                               "feet": [{"foot": name, "contacts": [[first, last], ...],
                                         "skate_before": [number, ...], "skate_after": [number, ...],
                                         "out_of_reach_frames": [frame, ...],
                                         "off_target_frames": [frame, ...],
                                         "off_target": {cause: [frame, ...]}}]}],
                "targets": [{"armature": name, "targets": {chain: object}, "poles": {chain: object},
                             "frames": [first, last], "seconds": number}],
                "reduced": [{"armature": name, "frames": [first, last], "seconds": number}]}]}

With a ``key_error``, each chain, planting, targets and reduction also has ``"keys": {"keys": number,
"dense_keys": number, "key_error": number, "max_error": number, "p99_error": number, "length_unit": [symbol,
number]}``: the keys written against a key on every frame, and how far Blender's evaluation of them puts the
bones (or Empties) from the pose they stand for; null without one.

Lengths are in scene units; ``length_unit`` is the unit the printed lines give them in, its symbol and the scene
units in one (the scene's Length unit, or millimetres or inches where that is Adaptive or the system's base:
``["mm", 0.001]`` in a scene of metres).

``output`` is null when nothing was written for the file; a failed file lists no chains and no plantings,
since none of them was saved. ``off_target_frames`` are the frames where Blender's evaluation of the keys puts
the tip farther from the target than the tolerance, whatever the cause (``unreachable_frames``, where the solve
fell short, among them), and ``off_target`` the same by cause ("out of reach", "soft reach", "IK limits", "not
converged", "the scene": ``fabrik_addon.off_target``). A planting's lengths are in scene units
(``metres_per_unit``, the scene's Unit Scale, turns them into metres); its ``off_target_frames`` are those where
a ball is farther from its goal than the tolerance, ``off_target`` the same by cause, its
``out_of_reach_frames`` those whose pin the leg could not reach.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...words import SCENE_UNITS, Unit, kept_words
from ..files import quiet_stdout as quiet_stdout
from ..files import write_atomically


@dataclass(frozen=True)
class KeysResult:
    """The keys kept within ``key_error`` against a key on every frame, and the largest and 99th-percentile error
    Blender's evaluation of them shows (world units), and the unit the lines give lengths in (the scene's): of a
    ``reduction.KeysReport``, or its JSON (``of``)."""

    keys: int
    dense_keys: int
    key_error: float
    max_error: float
    p99_error: float
    length_unit: Unit = SCENE_UNITS

    @classmethod
    def of(cls, found: Any) -> KeysResult | None:
        values = found if found is None or isinstance(found, dict) else vars(found)
        if values is None:
            return None
        unit = _unit(values.get("length_unit", SCENE_UNITS))
        names = ("keys", "dense_keys", "key_error", "max_error", "p99_error")
        return cls(**{name: values[name] for name in names}, length_unit=unit)

    def words(self) -> str:
        return kept_words(self.keys, self.dense_keys, self.max_error, self.length_unit)


@dataclass(frozen=True)
class ChainResult:
    """One baked chain; ``frames`` are the first and last keyed frames, errors in world units; ``why`` the
    frames off target by cause, (cause, frames) pairs, as ``api.BakeReport.off_target``; ``length_unit`` the unit
    the lines give lengths in, (symbol, world units per it), the scene's."""

    armature: str
    tip_bone: str
    frames: tuple[int, int]
    max_error: float
    unreachable_frames: tuple[int, ...]
    off_target_frames: tuple[int, ...]
    seconds: float
    why: tuple[tuple[str, tuple[int, ...]], ...] = ()
    keys: KeysResult | None = None
    length_unit: Unit = SCENE_UNITS


@dataclass(frozen=True)
class FootResult:
    """One foot of a planting: its contacts (first and last frames), how far its ball slid in each before and
    after (scene units), and the frames its pin was out of reach or its ball off its goal, and why (``why``:
    (cause, frames) pairs, as ``api.FootReport.off_target``)."""

    foot: str
    contacts: tuple[tuple[int, int], ...]
    skate_before: tuple[float, ...]
    skate_after: tuple[float, ...]
    out_of_reach_frames: tuple[int, ...]
    off_target_frames: tuple[int, ...]
    why: tuple[tuple[str, tuple[int, ...]], ...] = ()


@dataclass(frozen=True)
class PlantResult:
    """Feet planted on one armature; ``frames`` the first and last keyed, lengths in scene units
    (``metres_per_unit`` of them make a metre, as Blender shows lengths); ``length_unit`` the unit the line
    gives them in, (symbol, scene units per it), the scene's own; ``warnings`` what may not be what was meant."""

    armature: str
    feet: tuple[FootResult, ...]
    frames: tuple[int, int]
    max_error: float
    max_hips_drop: float
    metres_per_unit: float
    seconds: float
    length_unit: tuple[str, float] = ("mm", 0.001)
    warnings: tuple[str, ...] = ()
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
                        "off_target": _causes_json(c.why),
                        "seconds": c.seconds,
                        "keys": _keys_json(c.keys),
                        "length_unit": list(c.length_unit),
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
    return None if keys is None else asdict(keys) | {"length_unit": list(keys.length_unit)}


def _unit(data: Any) -> Unit:
    """A unit read back from its JSON, ``[symbol, scene units per it]``."""
    return str(data[0]), float(data[1])


def _planting_json(planting: PlantResult) -> dict[str, Any]:
    feet = [
        {
            "foot": f.foot,
            "contacts": [list(contact) for contact in f.contacts],
            "skate_before": list(f.skate_before),
            "skate_after": list(f.skate_after),
            "out_of_reach_frames": list(f.out_of_reach_frames),
            "off_target_frames": list(f.off_target_frames),
            "off_target": _causes_json(f.why),
        }
        for f in planting.feet
    ]
    entry = {"armature": planting.armature, "frames": list(planting.frames), "max_error": planting.max_error}
    entry |= {"max_hips_drop": planting.max_hips_drop, "metres_per_unit": planting.metres_per_unit}
    entry |= {"length_unit": list(planting.length_unit), "warnings": list(planting.warnings)}
    return entry | {"seconds": planting.seconds, "feet": feet, "keys": _keys_json(planting.keys)}


def _causes_json(why: tuple[tuple[str, tuple[int, ...]], ...]) -> dict[str, list[int]]:
    return {cause: list(frames) for cause, frames in why}


def _causes(data: dict[str, list[int]]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((str(cause), tuple(int(x) for x in frames)) for cause, frames in data.items())


def _planting(data: dict[str, Any]) -> PlantResult:
    feet = tuple(
        FootResult(
            f["foot"],
            tuple((int(first), int(last)) for first, last in f["contacts"]),
            tuple(float(x) for x in f["skate_before"]),
            tuple(float(x) for x in f["skate_after"]),
            tuple(int(x) for x in f["out_of_reach_frames"]),
            tuple(int(x) for x in f["off_target_frames"]),
            _causes(f["off_target"]),
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
        length_unit=_unit(data["length_unit"]),
        warnings=tuple(str(w) for w in data["warnings"]),
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
                    _causes(c["off_target"]),
                    KeysResult.of(c.get("keys")),
                    _unit(c.get("length_unit", SCENE_UNITS)),
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
