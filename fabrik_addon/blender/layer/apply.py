"""Apply Layer and taking a layer away: the FABRIK layer merged down into the Action below it (``apply_layer``),
or removed (``remove_layer``), the Action it pushed down made active again where it can be, as it was before
the first layer bake."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import bpy

from ...words import block_name, counted
from .. import compat
from ..rig import Keys, KeyWriter, bone_in_path, remove_keys
from .checks import check_strip
from .merge import keep_handles, plan_merge
from .stack import Layer, Undo, find_layer, span_strip
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
    merge = plan_merge(layer, below)
    with KeyWriter(armature, into=merge.into) as writer:
        for channel in merge.channels:
            writer.replace_channels(
                channel.path, channel.indices, bone_in_path(channel.path), channel.at, channel.values
            )
            for fcurve, old in channel.kept:
                keep_handles(fcurve, old, float(channel.at[0]), float(channel.at[-1]))
        if below is not None and below.action == writer.action:  # the strip plays the keys merged beyond it too
            _span_below(armature, below, merge.keyed, writer.on_undo)
        removed = _remove(layer, writer.on_undo)
    _forget(removed)
    return AppliedLayer(writer.action, merge.curves, merge.frames)


def _span_below(armature: bpy.types.Object, below: bpy.types.NlaStrip, keyed: tuple[float, float], undo: Undo) -> None:
    """Have the strip below the layer span the frames keyed into its Action too; ``undo`` finds the strip again by
    its track's name to put its span back (the track may be removed and made again meanwhile)."""
    span = (below.action_frame_start, below.action_frame_end)
    shift = below.frame_start - below.action_frame_start
    anim = armature.animation_data
    assert anim is not None
    track_name = next(track.name for track in anim.nla_tracks if below in track.strips[:])

    def put_back() -> None:
        if track_name in anim.nla_tracks and len(anim.nla_tracks[track_name].strips):
            span_strip(anim.nla_tracks[track_name].strips[0], *span, shift)

    undo(put_back)
    span_strip(below, min(span[0], keyed[0]), max(span[1], keyed[1]), shift)


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
