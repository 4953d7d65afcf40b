"""The FABRIK layer in an armature's NLA stack: found (``find_layer``), what plays below it (``animated_below``,
``below_the_layer``), the Action that was active pushed down beneath it as Blender's Push Down does
(``push_down``), and a strip's frames (``span_strip``).

The layer is one NLA track over the armature's animation holding one strip of its own Action, blended with
Combine at influence 1: muted, or at influence 0, the animation below plays as it was. Its Action carries the
custom property ``MARK``, by which it is found again (a bake of the same chains replaces their keys in it rather
than stacking a layer per bake), and ``PUSHED``, the name of the Action the first layer bake pushed down (Apply
Layer and Clear make it active again).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import bpy
import numpy as np
from numpy.typing import NDArray

from ...layer import base_values, channel_kind
from ...solver import FloatArray
from .. import compat
from ..interrupts import made, put_back
from ..rig import nla_plays

#: The layer's track, strip and (with the armature's name before it) Action are named so.
LAYER_NAME = "FABRIK Layer"
#: A custom property of the layer's Action, which marks it as the FABRIK layer.
MARK = "fabrik_layer"
#: A custom property of the layer's Action: the name of the Action it pushed down ("" for none).
PUSHED = "fabrik_pushed_down"

#: What undoes a change: called, newest first, if the bake fails.
Undo = Callable[[Callable[[], None]], None]


@dataclass(frozen=True)
class Layer:
    """An armature's FABRIK layer: its NLA track, the Action it plays and the slot it plays it through (4.4+).

    Attributes
    ----------
    armature : bpy.types.Object
    track : bpy.types.NlaTrack
    action : bpy.types.Action
    slot : bpy.types.ActionSlot or None
    """

    armature: bpy.types.Object
    track: bpy.types.NlaTrack
    action: bpy.types.Action
    slot: bpy.types.ActionSlot | None

    @property
    def strip(self) -> bpy.types.NlaStrip | None:
        """The strip that plays the layer's Action (None only while a first bake writes its keys)."""
        return self.track.strips[0] if len(self.track.strips) else None

    def fcurves(self) -> list[bpy.types.FCurve]:
        """The layer's F-curves."""
        return compat.slot_fcurves(self.action, self.slot)

    def tracks_below(self) -> list[bpy.types.NlaTrack]:
        """The armature's NLA tracks below the layer, lowest first."""
        tracks = list(_animation(self.armature).nla_tracks)
        return tracks[: tracks.index(self.track)]

    def tracks_above(self) -> list[bpy.types.NlaTrack]:
        """The armature's NLA tracks above the layer, lowest first."""
        tracks = list(_animation(self.armature).nla_tracks)
        return tracks[tracks.index(self.track) + 1 :]


def find_layer(armature: bpy.types.Object) -> Layer | None:
    """The armature's FABRIK layer (the first NLA track with a strip of a marked Action), or None."""
    anim = armature.animation_data
    for track in anim.nla_tracks if anim is not None else ():
        for strip in track.strips:
            action: bpy.types.Action | None = strip.action
            if action is not None and action.get(MARK):
                return Layer(armature, track, action, compat.strip_slot(strip))
    return None


def animated_below(armature: bpy.types.Object, layer: Layer | None) -> set[tuple[str, int]]:
    """The channels (data path, index) that the animation below the layer (all of it, without a layer) plays:
    the F-curves, not muted, of the active Action (pushed down below a new layer) and of the strips of the
    tracks below (``animated_by_strips``). Combine blends the layer's other channels over their base values."""
    if armature.animation_data is None:
        return set()
    curves = {(f.data_path, f.array_index) for f in compat.assigned_fcurves(armature) if not f.mute}
    return curves | animated_by_strips(armature, layer)


def played_below(armature: bpy.types.Object, read: Mapping[str, NDArray[np.float32]]) -> dict[str, FloatArray]:
    """What plays below the armature's layer on each data path of ``read`` (its values frame after frame, as
    Blender evaluated them with the layer's channels muted), but the base value of each index nothing below
    animates: Combine blends over that, not over the pose a muted channel leaves behind."""
    animated = animated_below(armature, find_layer(armature))
    played = {}
    for data_path, values in read.items():
        row = np.asarray(values, dtype=np.float64)
        base = base_values(channel_kind(data_path.rpartition(".")[2]), row.shape[1])
        for index in range(row.shape[1]):
            if (data_path, index) not in animated:
                row[:, index] = base[index]
        played[data_path] = row
    return played


def animated_by_strips(armature: bpy.types.Object, layer: Layer | None = None) -> set[tuple[str, int]]:
    """The channels (data path, index) that the F-curves, not muted, of the NLA strips, not muted, animate: of the
    tracks below the layer, or all of them."""
    anim = armature.animation_data
    if anim is None:
        return set()
    curves = []
    for track in layer.tracks_below() if layer is not None else anim.nla_tracks:
        if track.mute:
            continue
        for strip in track.strips:
            if not strip.mute and strip.action is not None:
                curves += compat.slot_fcurves(strip.action, compat.strip_slot(strip))
    return {(fcurve.data_path, fcurve.array_index) for fcurve in curves if not fcurve.mute}


@contextmanager
def below_the_layer(armature: bpy.types.Object, channels: Collection[tuple[str, int]]) -> Iterator[None]:
    """Meanwhile the armature plays the animation below its FABRIK layer on ``channels`` (the layer's F-curves
    for them muted, its other channels playing), and nothing above the layer (the tracks above it muted):
    what a layer bake reads its chains from. A channel nothing below the layer animates is set to its base value
    meanwhile (Blender leaves a channel nothing plays at its last value: the layer's, on the frame the scene was
    on). Everything muted or set here is put back on leaving."""
    layer = find_layer(armature)
    unmute: list[Callable[[], None]] = []
    try:
        if layer is not None:
            below = animated_below(armature, layer)
            for fcurve in layer.fcurves():
                channel = (fcurve.data_path, fcurve.array_index)
                if channel in channels and not fcurve.mute:
                    unmute.append(partial(setattr, fcurve, "mute", False))
                    fcurve.mute = True
                    if channel not in below:
                        _set_meanwhile(armature, channel, unmute)
            for track in layer.tracks_above():
                if not track.mute:
                    unmute.append(partial(setattr, track, "mute", False))
                    track.mute = True
        yield
    finally:
        put_back(unmute)


def _set_meanwhile(
    armature: bpy.types.Object, channel: tuple[str, int], put_back_later: list[Callable[[], None]]
) -> None:
    """Set the armature's ``channel`` (data path, index) to the base value a layer blends it over
    (``layer.base_values``), what was there put back later."""
    path, index = channel
    values = armature.path_resolve(path)
    kind = channel_kind(path.rpartition(".")[2])
    put_back_later.append(partial(values.__setitem__, index, values[index]))
    values[index] = float(base_values(kind, max(index + 1, 4))[index])


def push_down(armature: bpy.types.Object, undo: Undo, frames: tuple[float, float] | None = None) -> bpy.types.Action:
    """Move the armature's active Action onto an NLA track of its own above the others, as Blender's Push Down
    does, a strip playing it frame for frame over its keys (Blender plays an active Action over its keys whatever
    its Manual Frame Range says), the Action itself untouched, so that the armature plays as before:

    - where NLA strips played below it, with the Action's blending, influence and extrapolation;
    - where none did, Replace at full influence, holding its first and last keys (Blender plays an Action alone
      in full, ignoring its blending, influence and extrapolation);
    - where its F-curves go on past their keys (a Cycles modifier, linear extrapolation), the strip covers the
      scene's frames and ``frames`` (a bake's first and last) too, so that it plays there as the Action did.

    Returns the Action."""
    anim = _animation(armature)
    action = anim.action
    assert action is not None, "push down the active Action"
    assignment = compat.action_assignment(armature)
    slot = compat.object_slot(armature)
    over_strips = nla_plays(anim)
    undo(lambda: compat.restore_action_assignment(armature, assignment))
    track = made(undo, anim.nla_tracks.new, anim.nla_tracks.remove)
    track.name = action.name
    first, last = float(action.curve_frame_range[0]), float(action.curve_frame_range[1])
    strip = track.strips.new(action.name, int(first), action)
    compat.set_strip_slot(strip, slot)
    if any(goes_on(fcurve) for fcurve in compat.slot_fcurves(action, slot)):
        scene = bpy.context.scene
        assert scene is not None
        low, high = frames if frames is not None else (first, last)
        first, last = min(first, scene.frame_start, low), max(last, scene.frame_end, high)
    span_strip(strip, first, last)
    if over_strips:
        strip.blend_type, strip.extrapolation = anim.action_blend_type, anim.action_extrapolation
        if anim.action_influence < 1.0:
            keyed_influence(strip, anim.action_influence)
    else:
        strip.blend_type, strip.extrapolation = "REPLACE", "HOLD"
    anim.action = None
    return action


def goes_on(fcurve: bpy.types.FCurve) -> bool:
    """Whether an F-curve's values go on changing past its keys."""
    return fcurve.extrapolation != "CONSTANT" or any(not modifier.mute for modifier in fcurve.modifiers)


def span_strip(strip: bpy.types.NlaStrip, first: float, last: float, shift: float = 0.0) -> None:
    """Have the strip play its Action's frames ``first`` to ``last``, each ``shift`` frames later (scale and
    repeat 1)."""
    if last <= first:
        last = first + 1.0  # a strip spans at least a frame
    strip.scale, strip.repeat = 1.0, 1.0
    strip.action_frame_start, strip.action_frame_end = first, last
    strip.frame_start, strip.frame_end = first + shift, last + shift
    strip.frame_start, strip.frame_end = first + shift, last + shift  # once more: each set is checked against the other


def keyed_influence(strip: bpy.types.NlaStrip, influence: float) -> None:
    """Give the strip an influence that can be keyed (its Animated Influence on), at ``influence`` on every
    frame until it is keyed otherwise."""
    strip.use_animated_influence = True  # makes the influence's F-curve, with one key
    strip.influence = influence
    for fcurve in strip.fcurves:
        if fcurve.data_path == "influence":
            for point in fcurve.keyframe_points:
                point.co[1] = point.handle_left[1] = point.handle_right[1] = influence
            fcurve.update()


def _animation(armature: bpy.types.Object) -> bpy.types.AnimData:
    anim = armature.animation_data
    assert anim is not None, "the armature has animation data"
    return anim
