"""Remove the keys of a chain's rotation (and stretch) channels in a frame range: what a bake writes, taken away."""

from __future__ import annotations

import bpy

from . import compat
from .bake import _check_armature, _check_writable, _frames, _scene
from .chain import chain_bone_names
from .channels import ROTATION_PATHS
from .keys import remove_keys


def clear(
    armature: bpy.types.Object,
    *,
    tip_bone: str,
    chain_length: int = 0,
    frame_start: int | None = None,
    frame_end: int | None = None,
) -> int:
    """Remove the rotation and Y scale keys of a chain's bones from ``frame_start`` to ``frame_end``.

    Parameters
    ----------
    armature : bpy.types.Object
    tip_bone, chain_length
        The chain, as for ``api.bake``.
    frame_start, frame_end : int, optional
        Both included; the scene's frame range by default.

    Returns
    -------
    int
        How many keys were removed. Every rotation channel of the chain's bones loses its keys in the range
        (quaternion, Euler and axis-angle alike), and so does their Y scale (a bake with stretch keys it; the
        chain's bones can only be baked at a scale of 1 otherwise); an F-curve left without keys is removed.

    Raises
    ------
    TypeError, ValueError
        For bad input, as ``api.bake`` raises them; nothing is removed then.
    """
    frames = _frames(_scene(), frame_start, frame_end, 1)
    _check_armature(armature)
    names = chain_bone_names(armature, tip_bone, chain_length)
    _check_writable(armature, None, remedy="make it single-user first to clear this armature's keys alone")
    bones = [f'pose.bones["{bpy.utils.escape_identifier(name)}"]' for name in names]
    paths = {f"{bone}.{prop}" for bone in bones for prop in ROTATION_PATHS}
    stretch_paths = {f"{bone}.scale" for bone in bones}
    chain_curves = [
        fcurve
        for fcurve in compat.assigned_fcurves(armature)
        if fcurve.data_path in paths or (fcurve.data_path in stretch_paths and fcurve.array_index == 1)
    ]
    return sum(remove_keys(armature, fcurve, float(frames[0]), float(frames[-1])) for fcurve in chain_curves)
