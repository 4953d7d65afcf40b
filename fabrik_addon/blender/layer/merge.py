"""What Apply Layer keys before it keys anything (``plan_merge``): every channel of the FABRIK layer, on every frame
from its first key to its last, keyed in the Action below with what plays there now, and the frames around them
keyed as they play now; refused, naming why, wherever keys merged there would change what plays (an Action
other objects play, F-curves that do not play their keys as keyed or go on past them, a strip that does not play
the frames keyed). Nothing is written here; ``keep_handles`` gives keys beside merged ones their handles back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import bpy
import numpy as np
from numpy.typing import NDArray

from ...layer import base_values, channel_kind, combined
from ...solver import FloatArray
from .. import compat
from ..rig import Keys, check_playing
from .stack import Layer, goes_on
from .writer import key_span

#: The Action a merge keys and its slot (4.4+), or None for a new Action (a string: 4.2 has no ActionSlot).
Into: TypeAlias = "tuple[bpy.types.Action, bpy.types.ActionSlot | None] | None"


@dataclass(frozen=True)
class Channel:
    """One property's merged keys: ``values`` (F, len(indices)) for ``path[indices]`` on frames ``at``, and the
    Action's F-curves of that property with their keys as they were (``kept``)."""

    path: str
    indices: list[int]
    at: NDArray[np.int64]
    values: FloatArray
    kept: list[tuple[bpy.types.FCurve, Keys]]


@dataclass(frozen=True)
class Merge:
    """Apply Layer's plan: the Action it keys (``into``), each property's keys, the span of frames keyed (in the
    Action's time, ``keyed``), and the layer's F-curves and frames (first and last key) as the report gives them."""

    into: Into
    channels: list[Channel]
    keyed: tuple[float, float]
    curves: int
    frames: tuple[int, int]


def plan_merge(layer: Layer, below: bpy.types.NlaStrip | None) -> Merge:
    """What merging ``layer`` into the Action of the strip ``below`` it (the armature's new Action where None)
    keys.

    Raises
    ------
    ValueError
        Naming why the merge would change what plays, or why there is nothing to merge.
    """
    armature = layer.armature
    fcurves = [fcurve for fcurve in layer.fcurves() if len(fcurve.keyframe_points)]
    if not fcurves:
        raise ValueError(f"the FABRIK layer of '{armature.name}' has no keys left to apply: Clear it, or bake it again")
    into: Into = None if below is None or below.action is None else (below.action, compat.strip_slot(below))
    if into is None:
        _check_nothing_active(armature)
    spans = [key_span(fcurve) for fcurve in fcurves]
    first, last = min(start for start, _ in spans), max(end for _, end in spans)
    frames = np.arange(int(np.floor(first)), int(np.ceil(last)) + 1, dtype=np.int64)
    strip = layer.strip
    assert strip is not None, "a baked layer has its strip"
    influence = _influence(strip, frames)
    offset = 0 if below is None else round(below.action_frame_start - below.frame_start)
    lower = compat.slot_fcurves(*into) if into is not None else []
    played = _played(below) if below is not None else None
    by_path: dict[str, list[bpy.types.FCurve]] = {}
    for fcurve in fcurves:
        by_path.setdefault(fcurve.data_path, []).append(fcurve)
    channels = []
    for path, curves in by_path.items():
        kind = channel_kind(path.rpartition(".")[2])
        indices = [0, 1, 2, 3] if kind == "quaternion" else sorted(fcurve.array_index for fcurve in curves)
        base = base_values(kind, max(indices) + 1)
        mine = [fcurve for fcurve in lower if fcurve.data_path == path]
        values = combined(
            kind, _values(mine, indices, frames + offset, base), _values(curves, indices, frames, base), influence
        )
        # Around the layer's keys the Action keeps playing what it played (the layer plays nothing there).
        before, after = _gaps(mine, int(frames[0] + offset), int(frames[-1] + offset), played)
        at = np.concatenate([before, frames + offset, after]).astype(np.int64)
        values = np.concatenate([_values(mine, indices, before, base), values, _values(mine, indices, after, base)])
        channels.append(Channel(path, indices, at, values, [(fcurve, Keys.read(fcurve)) for fcurve in mine]))
    keyed = (min(float(c.at[0]) for c in channels), max(float(c.at[-1]) for c in channels))
    if below is not None and into is not None:
        _check_merge_into(armature, below, into, keyed, [fcurve for c in channels for fcurve, _ in c.kept])
    return Merge(into, channels, keyed, len(fcurves), (int(frames[0]), int(frames[-1])))


def _check_nothing_active(armature: bpy.types.Object) -> None:
    """With nothing below the layer, the merge makes a new Action active: none may be active already (keys made
    after the layer's bake play above it, and would play no longer).

    Raises
    ------
    ValueError
        Naming the active Action and what to do.
    """
    anim = armature.animation_data
    if anim is not None and anim.action is not None:
        raise ValueError(
            f"armature '{armature.name}' has an active Action, '{anim.action.name}', above its FABRIK layer (keys "
            "made after the layer's bake) and nothing below it: Apply Layer would merge the layer into that Action "
            "and its keys would no longer play over the layer's; push that Action down and move its track below "
            "the layer's in the NLA editor first"
        )


def _check_merge_into(
    armature: bpy.types.Object,
    below: bpy.types.NlaStrip,
    into: tuple[bpy.types.Action, bpy.types.ActionSlot | None],
    keyed: tuple[float, float],
    targets: Sequence[bpy.types.FCurve],
) -> None:
    """Keys merged into the Action of the strip ``below`` the layer, on its frames ``keyed`` (first and last, in
    the Action's time) and into its F-curves ``targets``, play there as the strip plays them now, and move
    nothing but the armature.

    Raises
    ------
    ValueError
        Where another object plays the Action through the same slot, an F-curve merged into does not play its
        keys as keyed or goes on past them, or the keys reach frames the strip does not play frame for frame
        (it is trimmed, or does not hold its ends there).
    """
    name = f"the Action '{into[0].name}' below the FABRIK layer of '{armature.name}'"
    sharing = compat.objects_sharing_channels(into[0], armature, into[1])
    if sharing:
        raise ValueError(
            f"{name} also plays on {', '.join(map(repr, sharing))}: Apply Layer would move them too; make it "
            "single-user first (Object > Relations > Make Single User > Object Animation), or keep the layer"
        )
    for fcurve in targets:
        where = f"the F-curve {fcurve.data_path}[{fcurve.array_index}] of {name}"
        check_playing(armature, fcurve, where, "keep the layer, or remove the modifier first", "applying the layer")
        if goes_on(fcurve):
            raise ValueError(
                f"{where} goes on past its keys (a Cycles modifier or extrapolation that is not Constant), so keys "
                "merged into it would change frames far from the layer's: keep the layer, or make the F-curve "
                "Constant first"
            )
    start, end = float(below.action_frame_start), float(below.action_frame_end)
    keys = into[0].curve_frame_range
    why = ""
    if keyed[0] <= start and keys[0] < start:
        why = "it starts after its Action's first key"
    elif keyed[0] < start and below.extrapolation != "HOLD":
        why = "it does not hold its first frame before it"
    elif keyed[1] >= end and keys[1] > end:
        why = "it ends before its Action's last key"
    elif keyed[1] > end and below.extrapolation == "NOTHING":
        why = "it does not hold its last frame after it"
    if why:
        raise ValueError(
            f"the NLA strip '{below.name}' below the FABRIK layer of '{armature.name}' plays its Action's frames "
            f"{start:g}-{end:g} and Apply Layer would key frames {keyed[0]:g}-{keyed[1]:g} ({why}, so keys merged "
            "there would change what plays): extend the strip over its Action's keys in the NLA editor, or bake "
            "with output 'action'"
        )


def _played(strip: bpy.types.NlaStrip) -> tuple[float, float]:
    """The frames (in its Action's time) where keys merged into the strip's Action can play: its frames, and
    before them where it holds its first (Hold), after them where it holds its last (Hold, Hold Forward)."""
    start = -np.inf if strip.extrapolation == "HOLD" else strip.action_frame_start
    end = np.inf if strip.extrapolation in ("HOLD", "HOLD_FORWARD") else strip.action_frame_end
    return float(start), float(end)


def _gaps(
    curves: Sequence[bpy.types.FCurve], first: int, last: int, played: tuple[float, float] | None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The frames around ``first`` to ``last`` that keys merged there would change, unless keyed as they play now:
    on each side, every frame up to the nearest key of each F-curve (the farthest of them), or the one frame
    beyond where an F-curve has none there (from there it holds it); only frames where the strip below can play
    a key (``played``, in the Action's time; None where nothing plays below)."""
    before, after = first - 1, last + 1
    for fcurve in curves:
        frames = Keys.read(fcurve).frames.astype(np.float64)
        earlier, later = frames[frames < first], frames[frames > last]
        before = min(before, int(np.floor(earlier[-1])) + 1 if len(earlier) else first - 1)
        after = max(after, int(np.ceil(later[0])) - 1 if len(later) else last + 1)
    if played is not None:
        before = max(before, int(np.ceil(min(played[0], first)))) if np.isfinite(played[0]) else before
        after = min(after, int(np.floor(max(played[1], last)))) if np.isfinite(played[1]) else after
    return np.arange(before, first, dtype=np.int64), np.arange(last + 1, after + 1, dtype=np.int64)


def keep_handles(fcurve: bpy.types.FCurve, old: Keys, first: float, last: float) -> None:
    """Give the F-curve's keys before ``first`` and after ``last`` the handles they had (``old``): Blender
    recomputes the automatic handles of keys near new ones, bending the curve far from them. Those it moved become
    Aligned, as where a user drags an automatic handle."""
    now, kept = Keys.read(fcurve), old.outside(first, last)
    outside = (now.frames < first) | (now.frames > last)
    if not np.array_equal(now.frames[outside], kept.frames):
        return  # not the keys it kept: nothing to give back
    aligned = bpy.types.Keyframe.bl_rna.properties["handle_left_type"].enum_items["ALIGNED"].value  # type: ignore[attr-defined]
    sides = ("handle_left", "handle_right")
    moved = np.flatnonzero(outside)[
        np.any([np.any(now.arrays[h][outside] != kept.arrays[h], axis=1) for h in sides], axis=0)
    ]
    at_old = np.searchsorted(kept.frames, now.frames[moved])
    for handle in sides:
        now.arrays[handle][moved] = kept.arrays[handle][at_old]
        now.arrays[f"{handle}_type"][moved] = aligned
        fcurve.keyframe_points.foreach_set(f"{handle}_type", now.arrays[f"{handle}_type"])
        fcurve.keyframe_points.foreach_set(handle, now.arrays[handle].ravel())
    fcurve.update()


def _influence(strip: bpy.types.NlaStrip, frames: NDArray[np.int64]) -> FloatArray:
    """The strip's influence on each frame: its influence's F-curve, where it is animated, else 1."""
    if not strip.use_animated_influence:
        return np.ones(len(frames))
    curve = next((fcurve for fcurve in strip.fcurves if fcurve.data_path == "influence"), None)
    if curve is None:
        return np.full(len(frames), float(strip.influence))
    return np.clip(np.array([curve.evaluate(float(frame)) for frame in frames]), 0.0, 1.0)


def _values(
    curves: Sequence[bpy.types.FCurve], indices: Sequence[int], frames: NDArray[np.int64], base: FloatArray
) -> FloatArray:
    """Each of ``indices`` of a property evaluated on ``frames`` (F, len(indices)): its F-curve among ``curves``,
    or its base value where none animates it."""
    by_index = {fcurve.array_index: fcurve for fcurve in curves if not fcurve.mute}
    columns = []
    for index in indices:
        fcurve = by_index.get(index)
        if fcurve is None:
            columns.append(np.full(len(frames), base[index]))
        else:
            columns.append(np.array([fcurve.evaluate(float(frame)) for frame in frames]))
    return np.stack(columns, axis=1)
