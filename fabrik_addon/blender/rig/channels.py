"""The channels of pose bones: which property holds a rotation in each of Blender's rotation modes, the
channels a bake keys, key values in a mode from quaternions, and what animates an object's channels.
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
import numpy as np

from ...solver import (
    EULER_ORDERS,
    FloatArray,
    axis_angle_to_quat,
    euler_continuous,
    matrix_to_euler,
    quat_to_axis_angle,
    quat_to_matrix,
    sign_continuous,
)
from .. import compat
from .chain import bone_path

#: Blender's rotation modes besides the Euler orders, with the property each one keys.
ROTATION_PROPERTIES = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}
#: Every pose bone property that holds a rotation, in some mode.
ROTATION_PATHS = ("rotation_euler", *ROTATION_PROPERTIES.values())


def rotation_property(mode: str) -> str:
    """The pose bone property that holds a rotation in ``mode`` (``rotation_euler`` for Euler orders)."""
    if mode in ROTATION_PROPERTIES:
        return ROTATION_PROPERTIES[mode]
    if mode in EULER_ORDERS:
        return "rotation_euler"
    raise ValueError(f"unknown rotation mode {mode!r}")


def keyed_channels(pose_bone: bpy.types.PoseBone, stretch: bool) -> list[tuple[str, int]]:
    """The channels (data path, index) a bake keys on a bone: its rotation in its own mode, and its Y scale
    with stretch."""
    rotation = rotation_property(pose_bone.rotation_mode)
    channels = [(pose_bone.path_from_id(rotation), index) for index in range(len(getattr(pose_bone, rotation)))]
    if stretch:
        channels.append((pose_bone.path_from_id("scale"), 1))
    return channels


def rotation_channels(q: FloatArray, mode: str, reference: FloatArray) -> FloatArray:
    """Key values for quaternions ``q`` (F, 4), one frame after another, in a pose bone's rotation mode (or
    several bones' of one mode, (F, n, 4)).

    Parameters
    ----------
    q : ndarray, shape (F, 4) or (F, n, 4)
    mode : str
        ``"QUATERNION"``, ``"AXIS_ANGLE"`` or an Euler order (``"XYZ"``...).
    reference : ndarray, shape (4,) or (3,), or (n, 4) or (n, 3)
        The bone's current value in that mode; the first frame lands next to it (same quaternion sign,
        Euler angles within half a turn), and each frame after lands next to the one before.

    Returns
    -------
    ndarray, shape (F, 4) or (F, 3), or (F, n, 4) or (F, n, 3)
    """
    if mode == "QUATERNION":
        return sign_continuous(q, reference=reference)
    if mode == "AXIS_ANGLE":
        return quat_to_axis_angle(sign_continuous(q, reference=axis_angle_to_quat(reference)))
    if mode in EULER_ORDERS:
        return euler_continuous(matrix_to_euler(quat_to_matrix(q), mode), reference=reference)
    raise ValueError(f"unknown rotation mode {mode!r}")


def bone_channels(rotations: FloatArray, modes: Sequence[str], references: Sequence[FloatArray]) -> list[FloatArray]:
    """``rotation_channels`` of every bone: quaternions ``rotations`` (F, m, 4), each bone's rotation mode and
    reference. The bones of one mode are converted all at once (numpy's per-call cost), as one by one (every
    step works frame by frame and bone by bone; quaternions to the bit, the angles of Euler and axis-angle bones
    to rounding: numpy's ``arctan2`` may round the last bit otherwise with where an array lies in memory).

    Returns
    -------
    list of ndarray, shape (F, 4) or (F, 3)
        Per bone, its key values.
    """
    groups: dict[str, list[int]] = {}
    for k, mode in enumerate(modes):
        groups.setdefault(mode, []).append(k)
    channels: dict[int, FloatArray] = {}
    for mode, bones in groups.items():
        values = rotation_channels(rotations[:, bones], mode, np.array([references[k] for k in bones]))
        channels.update({k: values[:, i] for i, k in enumerate(bones)})
    return [channels[k] for k in range(len(modes))]


def animated_paths(obj: bpy.types.Object) -> set[str]:
    """Every data path of ``obj`` that its Action, its NLA strips' Actions or its drivers animate."""
    anim = obj.animation_data
    if anim is None:
        return set()
    curves = [*compat.assigned_fcurves(obj), *anim.drivers]
    for track in anim.nla_tracks:
        for strip in track.strips:
            if strip.action is not None:
                curves += compat.action_fcurves(strip.action)
    return {fcurve.data_path for fcurve in curves}


def chain_is_animated(armature: bpy.types.Object, bone_names: Sequence[str]) -> bool:
    """Whether anything animates the chain bones' own channels: F-curves, drivers or NLA strips."""
    anim = armature.animation_data
    if anim is None:
        return False
    if any(track.strips for track in anim.nla_tracks):
        return True
    prefixes = tuple(f"{bone_path(name)}." for name in bone_names)
    curves = [*compat.assigned_fcurves(armature), *anim.drivers]
    return any(fcurve.data_path.startswith(prefixes) for fcurve in curves)
