"""The frames a planting covers by default: those the rig's animation has keys on, within the scene's range, so
the frames a clip's import holds after its end (the importer keeps the scene at frames 1-250) are not planted as
a contact."""

from __future__ import annotations

import math

import bpy

from ...settings import FrameRange
from .. import compat
from .marks import MARK


def keyed_frames(armature: bpy.types.Object, frames: FrameRange) -> FrameRange:
    """``frames`` with a missing start or end taken from the rig's keys (its active Action's, and its NLA
    strips' that play), within the scene's range; the scene's where the animation repeats past its keys (a
    Cycles modifier) or has none, or where its keys lie wholly outside the scene's range."""
    if frames.start is not None and frames.end is not None:
        return frames
    keyed, scene = _keyed_span(armature), bpy.context.scene
    if keyed is None or scene is None:
        return frames
    first, last = max(scene.frame_start, math.floor(keyed[0])), min(scene.frame_end, math.ceil(keyed[1]))
    if first > last:
        return frames
    start = first if frames.start is None else frames.start
    end = last if frames.end is None else frames.end
    if start > end:  # one end given, beyond the keys: the scene's for the other
        start, end = (start, scene.frame_end) if frames.end is None else (scene.frame_start, end)
    return FrameRange(start, end, frames.step)


def _keyed_span(armature: bpy.types.Object) -> tuple[float, float] | None:
    """The first and last frame the rig's animation has keys on, or None where it has none or repeats them."""
    anim = armature.animation_data
    if anim is None:
        return None
    spans: list[tuple[float, float]] = []
    for fcurve in compat.assigned_fcurves(armature):
        if fcurve.mute or f'["{MARK}"]' in fcurve.data_path or not fcurve.keyframe_points:
            continue
        if any(m.type == "CYCLES" and not m.mute for m in fcurve.modifiers):
            return None
        spans.append(tuple(fcurve.range()))  # type: ignore[arg-type]
    for track in anim.nla_tracks:
        if not track.mute:
            spans += [(strip.frame_start, strip.frame_end) for strip in track.strips if not strip.mute]
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)
