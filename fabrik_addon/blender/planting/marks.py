"""Contact marks: when each foot is planted, as keys an animator sees and edits in the Dope Sheet or Graph
Editor. Each foot's pose bone gets a custom property ``fabrik_contact`` (0 or 1), keyed with constant
interpolation: 1 from a contact's first frame, 0 from the frame after its last. Detect Contacts writes them;
Plant Feet plants what they say where a foot has them.

And the hips' drop: Plant Feet keys how far it lowered the hips on the hips' pose bone (``fabrik_hips_drop``,
scene units), so that planting again starts from the hips as they were before (the drops do not add up).
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
import numpy as np
from numpy.typing import NDArray

from ...planting import Contact, runs
from ...setting_names import plant_named
from .. import compat
from ..layer import find_layer
from ..rig import KeyWriter

#: The custom property of a foot's pose bone whose keys mark its contacts.
MARK = "fabrik_contact"


#: The custom property of the hips' pose bone whose keys say how far Plant Feet lowered them.
HIPS_DROP = "fabrik_hips_drop"


def mark_path(foot: str, name: str = MARK) -> str:
    """The data path of a foot's contact marks (or of another of these properties of a bone)."""
    return f'pose.bones["{bpy.utils.escape_identifier(foot)}"]["{name}"]'


def marks_fcurve(armature: bpy.types.Object, foot: str, name: str = MARK) -> bpy.types.FCurve | None:
    """The F-curve of a foot's contact marks (or of ``name`` of the bone) in the armature's active Action, if it
    has one."""
    path = mark_path(foot, name)
    return next((f for f in compat.assigned_fcurves(armature) if f.data_path == path and f.array_index == 0), None)


def read_marks(armature: bpy.types.Object, foot: str, frames: Sequence[int]) -> list[Contact] | None:
    """A foot's contacts as its marks say, as (first, last) indices into ``frames`` (the runs of frames where
    the marks are above one half, joined where they touch); None where the foot has no marks (or they are
    muted). Marks pushed down into an NLA strip (by a layer bake, or by hand) are read where the strip plays
    them (``_played``)."""
    values = _played(armature, foot, MARK, frames)
    if values is None:
        return None
    return runs(values > 0.5, 0, 1)


def _played(armature: bpy.types.Object, bone: str, name: str, frames: Sequence[int]) -> NDArray[np.float64] | None:
    """The values on ``frames`` of the keys of the bone's property ``name``: in the active Action, else in the one
    NLA strip (below the FABRIK layer, where there is one) that has them, played frame for frame, shifted as the
    strip is (0 where it does not play); None where there are none, or they are muted.

    Raises
    ------
    ValueError
        Where the keys are in several strips, or a strip that scales or repeats its Action: naming the strip.
    """
    fcurve = marks_fcurve(armature, bone, name)
    if fcurve is not None:
        return None if fcurve.mute else np.array([fcurve.evaluate(frame) for frame in frames])
    path, anim, layer = mark_path(bone, name), armature.animation_data, find_layer(armature)
    tracks = layer.tracks_below() if layer is not None else list(anim.nla_tracks) if anim is not None else []
    found = [
        (track, strip, curve)
        for track in tracks  # the FABRIK layer's own keys are a planting's, not what it plants
        if not track.mute
        for strip in track.strips
        if not strip.mute and strip.action is not None
        for curve in compat.slot_fcurves(strip.action, compat.strip_slot(strip))
        if curve.data_path == path and curve.array_index == 0
    ]
    if not found:
        return None
    track, strip, curve = found[0]
    if len(found) > 1 or strip.scale != 1.0 or strip.repeat != 1.0:
        what = "contact marks" if name == MARK else f"'{name}' keys"
        raise ValueError(
            f"the {what} of '{bone}' are keyed in NLA strip '{strip.name}' (track '{track.name}')"
            + (" and others" if len(found) > 1 else ", which scales or repeats its Action")
            + ", so Plant Feet cannot tell which frames they mark: edit the strip (Tab in the NLA editor) so its "
            f"Action is the active one, or turn off {plant_named('use_marks')} to find the contacts again"
        )
    if curve.mute:
        return None
    shift = strip.frame_start - strip.action_frame_start
    return np.array(
        [curve.evaluate(frame - shift) if strip.frame_start <= frame <= strip.frame_end else 0.0 for frame in frames]
    )


def write_marks(writer: KeyWriter, foot: str, frames: Sequence[int], contacts: Sequence[Contact]) -> None:
    """Key a foot's contact marks over ``frames`` (replacing the keys within them): 0 on the first frame unless
    a contact starts there, 1 on each contact's first frame, 0 on the frame after each contact's last (where
    it is within ``frames``)."""
    pose = writer.obj.pose
    assert pose is not None
    bone = pose.bones[foot]
    if bone.get(MARK) is None:  # the property the keys animate, taken away again if the writer undoes its keys
        writer.on_undo(lambda: bone.pop(MARK, None))
        bone[MARK] = 0
    keyed: dict[int, float] = {frames[0]: 0.0}
    for first, last in contacts:
        keyed[frames[first]] = 1.0
        if last + 1 < len(frames):
            keyed[frames[last + 1]] = 0.0
    at: NDArray[np.int64] = np.array(sorted(keyed), dtype=np.int64)
    values = np.array([keyed[frame] for frame in at.tolist()])
    span = (float(frames[0]), float(frames[-1]))
    writer.replace(mark_path(foot), 0, foot, at, values, span, interpolation="CONSTANT")


def read_hips_drop(armature: bpy.types.Object, hips: str, frames: Sequence[int]) -> NDArray[np.float64]:
    """How far an earlier Plant Feet lowered the hips on each of ``frames`` (scene units), as its keys say (in the
    active Action, or pushed down into a strip: ``_played``); zeros where there are none (or they are muted)."""
    values = _played(armature, hips, HIPS_DROP, frames)
    return np.zeros(len(frames)) if values is None else values


def write_hips_drop(
    writer: KeyWriter, hips: str, frames: NDArray[np.int64], drop: NDArray[np.float64], span: tuple[float, float]
) -> None:
    """Key how far the hips are lowered on ``frames`` (replacing the keys within ``span``)."""
    pose = writer.obj.pose
    assert pose is not None
    bone = pose.bones[hips]
    if bone.get(HIPS_DROP) is None:
        writer.on_undo(lambda: bone.pop(HIPS_DROP, None))
        bone[HIPS_DROP] = 0.0
    writer.replace(mark_path(hips, HIPS_DROP), 0, hips, frames, drop, span)
