"""Apply Layer and taking a layer away: the FABRIK layer merged down into the Action below it (``apply_layer``),
or removed (``remove_layer``), the Action it pushed down made active again where it can be, as it was before
the first layer bake."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np
from numpy.typing import NDArray

from ...layer import base_values, channel_kind, combined
from ...solver import FloatArray
from ...words import block_name, counted
from .. import compat
from ..rig import Keys, KeyWriter, bone_in_path, remove_keys
from .stack import Layer, Undo, check_strip, find_layer, goes_on, span_strip
from .writer import guard, key_span, pushed_down


@dataclass(frozen=True)
class AppliedLayer:
    """What Apply Layer did.

    Attributes
    ----------
    action : bpy.types.Action
        The Action the layer was merged into (the armature's active one if the layer had pushed it down or
        nothing played below the layer).
    channels : int
        The layer's channels (F-curves) merged.
    frames : tuple of int
        The first and last frame keyed.
    """

    action: bpy.types.Action
    channels: int
    frames: tuple[int, int]

    def __repr__(self) -> str:
        first, last = self.frames
        return (
            f"AppliedLayer({counted(self.channels, 'channel')} merged into Action {block_name(self.action)}, "
            f"frames {first}-{last})"
        )


def apply_layer(armature: bpy.types.Object) -> AppliedLayer:
    """Merge the armature's FABRIK layer down into the Action below it, then remove the layer: on every frame
    from the layer's first key to its last, each channel it keys is keyed in that Action with what plays now
    (the Action's value and the layer's, blended as Blender blends them at the layer's influence), so the
    armature plays as it did. All or nothing.

    The Action below is the one the layer's first bake pushed down (made active again), the one Action of the
    NLA track below the layer, or a new Action (made active) where nothing plays below.

    Raises
    ------
    ValueError
        When there is no layer, the layer is muted, or what plays below it is not one Action played frame for
        frame (several tracks or strips, a strip scaled, repeated, reversed or at another influence); nothing
        is changed then.
    """
    layer = find_layer(armature)
    if layer is None:
        raise ValueError(f"armature '{armature.name}' has no FABRIK layer to apply: bake with output 'layer' first")
    strip = layer.strip
    assert strip is not None, "a baked layer has its strip"
    if layer.track.mute or strip.mute:
        raise ValueError(
            f"the FABRIK layer of '{armature.name}' is muted: unmute it to apply it, or Clear it to keep the "
            "animation below as it is"
        )
    check_strip(layer)
    below = _strip_below(layer)
    fcurves = [fcurve for fcurve in layer.fcurves() if len(fcurve.keyframe_points)]
    first = min(float(fcurve.keyframe_points[0].co[0]) for fcurve in fcurves)
    last = max(float(fcurve.keyframe_points[-1].co[0]) for fcurve in fcurves)
    frames = np.arange(int(np.floor(first)), int(np.ceil(last)) + 1, dtype=np.int64)
    influence = _influence(strip, frames)
    by_path: dict[str, list[bpy.types.FCurve]] = {}
    for fcurve in fcurves:
        by_path.setdefault(fcurve.data_path, []).append(fcurve)
    into = None if below is None or below.action is None else (below.action, compat.strip_slot(below))
    offset = 0 if below is None else round(below.action_frame_start - below.frame_start)
    if below is not None and into is not None:
        _check_merge_into(armature, below, into, (float(frames[0] + offset), float(frames[-1] + offset)))
    keyed = [float(frames[0] + offset), float(frames[-1] + offset)]
    with KeyWriter(armature, into=into) as writer:
        lower = compat.slot_fcurves(writer.action, writer.slot)
        kept = {fcurve.as_pointer(): Keys.read(fcurve) for fcurve in lower}
        for path, curves in by_path.items():
            kind = channel_kind(path.rpartition(".")[2])
            indices = [0, 1, 2, 3] if kind == "quaternion" else sorted(fcurve.array_index for fcurve in curves)
            base = base_values(kind, max(indices) + 1)
            mine = [f for f in lower if f.data_path == path]
            values = combined(
                kind, _values(mine, indices, frames + offset, base), _values(curves, indices, frames, base), influence
            )
            # Around the layer's keys the Action keeps playing what it played (the layer plays nothing there).
            before, after = _gaps(mine, frames[0] + offset, frames[-1] + offset)
            at = np.concatenate([before, frames + offset, after]).astype(np.int64)
            values = np.concatenate([_values(mine, indices, before, base), values, _values(mine, indices, after, base)])
            writer.replace_channels(path, indices, bone_in_path(path), at, values)
            for fcurve in mine:
                _keep_handles(fcurve, kept[fcurve.as_pointer()], float(at[0]), float(at[-1]))
            keyed = [min(keyed[0], float(at[0])), max(keyed[1], float(at[-1]))]
        if below is not None and below.action == writer.action:  # the strip plays the keys merged beyond it too
            span = (below.action_frame_start, below.action_frame_end)
            writer.on_undo(lambda: span_strip(below, *span, -offset))
            span_strip(below, min(span[0], keyed[0]), max(span[1], keyed[1]), -offset)
        removed = _remove(layer, writer.on_undo)
    _forget(removed)
    return AppliedLayer(writer.action, len(fcurves), (int(frames[0]), int(frames[-1])))


def clear_layer(armature: bpy.types.Object, channels: Collection[tuple[str, int]], first: float, last: float) -> int:
    """Remove the keys from frame ``first`` to ``last`` of the armature's FABRIK layer's F-curves of ``channels``
    (data path, index; an F-curve left without keys goes, one left with keys on either side plays nothing from
    ``first`` to ``last``: its base value keyed on them, ``writer.guard``), then have the strip span the keys
    left, or remove the layer where none is left (``remove_layer``). Returns how many keys went (0 without a
    layer)."""
    layer = find_layer(armature)
    if layer is None:
        return 0
    into = (layer.action, layer.slot)
    fcurves = [f for f in layer.fcurves() if (f.data_path, f.array_index) in channels]
    removed = 0
    for fcurve in fcurves:
        keys = len(fcurve.keyframe_points)
        gone = remove_keys(armature, fcurve, first, last, into)
        removed += gone
        if 0 < gone < keys:  # some keys left (with none left, the F-curve went)
            start, end = key_span(fcurve)
            guard(fcurve, [frame for frame, keeps in ((first, start < first), (last, end > last)) if keeps])
    spans = [key_span(fcurve) for fcurve in layer.fcurves() if len(fcurve.keyframe_points)]
    strip = layer.strip
    if not spans:
        remove_layer(armature)
    elif removed and strip is not None:
        span_strip(strip, min(start for start, _ in spans), max(end for _, end in spans))
    return removed


def remove_layer(armature: bpy.types.Object, undo: Undo | None = None) -> bool:
    """Remove the armature's FABRIK layer and its Action, and make the Action it pushed down active again where
    that Action is still alone on the track below (``undo`` is given what puts each change back); returns
    whether there was a layer."""
    layer = find_layer(armature)
    if layer is None:
        return False
    _forget(_remove(layer, undo or (lambda _: None)))
    return True


def _forget(action: bpy.types.Action) -> None:
    """Remove a layer's Action once its layer is gone, if nothing else uses it."""
    if action.users == 0:
        bpy.data.actions.remove(action)


def _remove(layer: Layer, undo: Undo) -> bpy.types.Action:
    """Take the layer's track away, and make the Action it pushed down active again where nothing else is on its
    track (removed then) and no track above the layer plays (the active Action would play over it); returns the
    layer's Action, which the caller removes once nothing can fail."""
    armature = layer.armature
    anim = armature.animation_data
    assert anim is not None
    below = layer.tracks_below()
    above = any(not track.mute and len(track.strips) for track in layer.tracks_above())
    strip = layer.strip
    assert strip is not None, "a baked layer has its strip"
    copy = _StripCopy.of(armature, layer.track, strip)
    anim.nla_tracks.remove(layer.track)
    undo(lambda: copy.make(armature))
    name = pushed_down(layer)
    if name and below and anim.action is None and not above:
        track = below[-1]
        strips = list(track.strips)
        if len(strips) == 1 and strips[0].action is not None and strips[0].action.name == name:
            pushed = _StripCopy.of(armature, track, strips[0])
            assignment = compat.action_assignment(armature)
            anim.nla_tracks.remove(track)
            undo(lambda: pushed.make(armature))
            compat.restore_action_assignment(armature, (pushed.action, pushed.slot))
            anim.action_blend_type, anim.action_extrapolation = pushed.blending
            undo(lambda: compat.restore_action_assignment(armature, assignment))
    return layer.action


@dataclass(frozen=True)
class _StripCopy:
    """What a track of one strip is, to make it again: its name, where it was in the stack, and its strip's
    Action, slot, frames, blending and keyed influence."""

    track_name: str
    place: int
    action: bpy.types.Action
    slot: bpy.types.ActionSlot | None
    span: tuple[float, float]
    shift: float
    blending: tuple[Any, Any]  # blend type and extrapolation, as the strip's enums
    influence: Keys | None

    @classmethod
    def of(cls, armature: bpy.types.Object, track: bpy.types.NlaTrack, strip: bpy.types.NlaStrip) -> _StripCopy:
        assert strip.action is not None
        anim = armature.animation_data
        assert anim is not None
        tracks = list(anim.nla_tracks)
        curve = next((f for f in strip.fcurves if f.data_path == "influence"), None)
        return cls(
            track.name,
            tracks.index(track),
            strip.action,
            compat.strip_slot(strip),
            (strip.action_frame_start, strip.action_frame_end),
            strip.frame_start - strip.action_frame_start,
            (strip.blend_type, strip.extrapolation),
            Keys.read(curve) if strip.use_animated_influence and curve is not None else None,
        )

    def make(self, armature: bpy.types.Object) -> None:
        anim = armature.animation_data
        assert anim is not None
        tracks = list(anim.nla_tracks)
        track = anim.nla_tracks.new(prev=tracks[self.place - 1] if 0 < self.place <= len(tracks) else None)
        track.name = self.track_name
        strip = track.strips.new(self.track_name, int(self.span[0] + self.shift), self.action)
        compat.set_strip_slot(strip, self.slot)
        span_strip(strip, *self.span, self.shift)
        strip.blend_type, strip.extrapolation = self.blending
        if self.influence is not None:
            strip.use_animated_influence = True
            curve = next(f for f in strip.fcurves if f.data_path == "influence")
            self.influence.write(curve)


def _strip_below(layer: Layer) -> bpy.types.NlaStrip | None:
    """The one strip that plays below the layer, frame for frame at full influence, or None if nothing does.

    Raises
    ------
    ValueError
        Where more than one strip plays below, or it is not played frame for frame at full influence.
    """
    playing = [track for track in layer.tracks_below() if not track.mute and len(track.strips)]
    strips = [strip for track in playing for strip in track.strips if not strip.mute]
    if not strips:
        return None
    name = f"the FABRIK layer of '{layer.armature.name}'"
    if len(strips) > 1:
        raise ValueError(
            f"{name} plays over {len(strips)} NLA strips: Apply Layer merges it into one Action below it; bake with "
            "output 'action' instead, or merge the strips below first"
        )
    strip = strips[0]
    if strip.action is None:
        raise ValueError(f"the NLA strip '{strip.name}' below {name} plays no Action")
    problems = [
        what
        for what, wrong in (
            ("is scaled", strip.scale != 1.0),
            ("repeats", strip.repeat != 1.0),
            ("plays reversed", strip.use_reverse),
            ("blends at another influence", strip.use_animated_influence or strip.blend_in or strip.blend_out),
            ("is not blended with Replace or Combine", strip.blend_type not in ("REPLACE", "COMBINE")),
        )
        if wrong
    ]
    if problems:
        raise ValueError(
            f"the NLA strip '{strip.name}' below {name} {', '.join(problems)}, so its Action does not play frame for "
            "frame: Apply Layer cannot merge into it; bake with output 'action' instead"
        )
    return strip


def _check_merge_into(
    armature: bpy.types.Object,
    below: bpy.types.NlaStrip,
    into: tuple[bpy.types.Action, bpy.types.ActionSlot | None],
    reach: tuple[float, float],
) -> None:
    """Keys merged into the Action of the strip ``below`` the layer, on its frames ``reach`` (first and last, in
    the Action's time), play there as the strip plays them now, and move nothing but the armature.

    Raises
    ------
    ValueError
        Where another object plays the Action through the same slot, or the layer's keys reach frames the strip
        does not play frame for frame (it is trimmed, or does not hold its ends there, or its F-curves go on).
    """
    sharing = compat.objects_sharing_channels(into[0], armature, into[1])
    if sharing:
        raise ValueError(
            f"the Action '{into[0].name}' below the FABRIK layer of '{armature.name}' also plays on "
            f"{', '.join(map(repr, sharing))}: Apply Layer would move them too; make it single-user first (Object > "
            "Relations > Make Single User > Object Animation), or keep the layer"
        )
    start, end = float(below.action_frame_start), float(below.action_frame_end)
    keys = below.action.curve_frame_range if below.action is not None else (start, end)
    goes = any(goes_on(fcurve) for fcurve in compat.slot_fcurves(*into))
    why = ""
    if reach[0] < start:
        why = "it starts later" if keys[0] < start or below.extrapolation != "HOLD" or goes else ""
    if reach[1] > end and not why:
        why = "it ends earlier" if keys[1] > end or below.extrapolation == "NOTHING" or goes else ""
    if why:
        raise ValueError(
            f"the NLA strip '{below.name}' below the FABRIK layer of '{armature.name}' plays its Action's frames "
            f"{start:g}-{end:g} and the layer's keys reach frames {reach[0]:g}-{reach[1]:g} ({why}, so Apply Layer "
            "would key frames the strip does not play as they play now): extend the strip over them in the NLA "
            "editor, or bake with output 'action'"
        )


def _gaps(curves: Sequence[bpy.types.FCurve], first: int, last: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The frames around ``first`` to ``last`` that keys merged there would change, unless keyed as they play now:
    every frame from the F-curves' nearest key before ``first`` (after ``last``), or the one frame beyond where
    they have none (from there they hold it)."""
    keyed = np.unique(
        np.concatenate([Keys.read(fcurve).frames.astype(np.float64) for fcurve in curves] or [np.empty(0)])
    )
    earlier, later = keyed[keyed < first], keyed[keyed > last]
    before = np.arange(int(np.floor(earlier[-1])) + 1, first) if len(earlier) else np.array([first - 1])
    after = np.arange(last + 1, int(np.ceil(later[0]))) if len(later) else np.array([last + 1])
    return before.astype(np.int64), after.astype(np.int64)


def _keep_handles(fcurve: bpy.types.FCurve, old: Keys, first: float, last: float) -> None:
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
