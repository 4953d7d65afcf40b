"""What Reduce Keys thins, and refuses: the keyed bones (named, or every bone with keys), their F-curves that pose
them (location, rotation in the bone's mode, scale) in the armature's active Action, each checked to take keys
and play them, with its keys in the range on whole frames."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import bpy
import numpy as np

from ...setting_checks import key_error_distance
from ...setting_names import named
from .. import compat
from ..bake import check_armature, check_channel_fcurves, check_writable
from ..layer import LAYER_NAME
from ..rig import armature_data, bone_in_path, keys_within, rotation_property

#: The properties of a pose bone whose keys pose it (its rotation only in the bone's own mode).
_POSING = ("location", "scale")

#: Per bone, per property, its F-curves by index.
Curves = dict[str, dict[str, dict[int, bpy.types.FCurve]]]


def checked_error(key_error: object) -> float:
    """``key_error`` as a distance > 0 (a reduction with none keeps every key).

    Raises
    ------
    ValueError
        Naming the setting and the value.
    """
    distance = key_error_distance(key_error, named("key_error"))
    if distance == 0.0:
        raise ValueError(f"{named('key_error')} must be above 0 to reduce keys (0 keeps every key), got {key_error!r}")
    return distance


def keyed_curves(armature: object, bones: Sequence[str] | None, first: int, last: int) -> Curves:
    """The F-curves Reduce Keys thins on ``armature`` from frame ``first`` to ``last``: those of ``bones`` (by
    default every bone with keys) that pose them.

    Raises
    ------
    TypeError, ValueError
        Naming the problem: not an armature (or one that cannot be edited), no Action, a bone that is not the
        armature's or has no keys, an F-curve that is locked, muted or has a modifier, keys between frames in
        the range.
    """
    rig = check_armature(armature)
    names = armature_data(rig).bones.keys()
    if bones is not None and (isinstance(bones, str) or not all(isinstance(name, str) for name in bones)):
        raise TypeError(f"bones must be a list of bone names, got {bones!r}")
    for name in bones or ():
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ValueError(f"armature '{rig.name}' has no bone '{name}'{hint}")
    anim = rig.animation_data
    if anim is None or anim.action is None:
        layered = anim is not None and any(track.name == LAYER_NAME for track in anim.nla_tracks)
        hint = ": its keys are in the FABRIK layer; bake with a Key Error, or Apply Layer first" if layered else ""
        raise ValueError(f"armature '{rig.name}' has no Action: there are no keys to reduce{hint}")
    check_writable(rig, None, remedy="make it single-user first to reduce this armature's keys alone")
    curves: Curves = {}
    pose = rig.pose
    assert pose is not None
    for fcurve in compat.assigned_fcurves(rig):
        bone = bone_in_path(fcurve.data_path)
        prop = fcurve.data_path.rpartition(".")[2]
        if not bone or bone not in pose.bones or (bones is not None and bone not in bones):
            continue
        if prop in _POSING or prop == rotation_property(pose.bones[bone].rotation_mode):
            curves.setdefault(bone, {}).setdefault(prop, {})[fcurve.array_index] = fcurve
    missing = [name for name in bones or () if name not in curves]
    if missing:
        raise ValueError(
            f"bone {', '.join(map(repr, missing))} of '{rig.name}' has no keys on its location, rotation or scale in "
            f"the Action '{anim.action.name}': name bones with keys"
        )
    if not curves:
        raise ValueError(f"no bone of '{rig.name}' has keys on its location, rotation or scale to reduce")
    check_channel_fcurves(
        rig,
        None,
        {(f.data_path, f.array_index) for by in curves.values() for c in by.values() for f in c.values()},
        cycled="remove the modifier first, or reduce the keys of a clip that does not repeat",
        doing="reducing keys",
    )
    _check_inherit_rotation(rig, curves)
    keyed = [f for by_prop in curves.values() for by_index in by_prop.values() for f in by_index.values()]
    for fcurve in keyed:
        _check_whole_frames(rig, fcurve, first, last)
    _check_keys_in_range(rig, anim.action, keyed, first, last)
    return curves


def _check_inherit_rotation(armature: bpy.types.Object, curves: Curves) -> None:
    """Every bone whose keys are thinned inherits its parent's rotation: the reduction poses a bone's keys under
    its parent, as Blender does where it inherits (where not, it would be measured in the wrong place)."""
    bones = armature_data(armature).bones
    for name in curves:
        bone = bones[name]
        if bone.parent is not None and not bone.use_inherit_rotation:
            raise ValueError(
                f"bone '{name}' of '{armature.name}' does not inherit its parent's rotation (Inherit Rotation is "
                "off), which Reduce Keys does not measure: turn Inherit Rotation on, or leave the bone out (name the "
                "bones to reduce)"
            )


def _check_keys_in_range(
    armature: bpy.types.Object, action: bpy.types.Action, fcurves: Sequence[bpy.types.FCurve], first: int, last: int
) -> None:
    """Some key of the F-curves lies from frame ``first`` to ``last``: a range without any would only gain keys
    (the reduction keys each bone on the range's first and last frames)."""
    spans = [f.range() for f in fcurves if len(f.keyframe_points)]
    if any(f.keyframe_points and keys_within(f, first, last) for f in fcurves):
        return
    keyed = f" (its keys are on frames {min(s[0] for s in spans):g}-{max(s[1] for s in spans):g})" if spans else ""
    raise ValueError(
        f"the Action '{action.name}' of '{armature.name}' has no keys of the bones to reduce in frames {first}-{last}"
        f"{keyed}: set {named('frame_start')} and {named('frame_end')} to frames with keys"
    )


def _check_whole_frames(armature: bpy.types.Object, fcurve: bpy.types.FCurve, first: int, last: int) -> None:
    """The F-curve's keys from frame ``first`` to ``last`` are on whole frames: keys between frames would be
    lost (the reduction keeps keys on whole frames only)."""
    co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    frames = co[0::2]
    inside = frames[(frames >= first) & (frames <= last)]
    between = inside[inside != np.round(inside)]
    if between.size:
        raise ValueError(
            f"the F-curve {fcurve.data_path}[{fcurve.array_index}] of '{armature.name}' has a key between frames "
            f"(on frame {float(between[0]):g}): Reduce Keys keeps keys on whole frames; snap the keys to frames first"
        )
