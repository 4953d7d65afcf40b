"""Remove the keys of a chain's rotation channels in a frame range: what a bake writes, taken away."""

from __future__ import annotations

import bpy

from ..solver.rotations import ROTATION_PROPERTIES
from . import compat
from .bake import _check_armature, _check_writable, _frames, _scene
from .chain import chain_bone_names
from .keys import remove_keys

_ROTATION_PATHS = ("rotation_euler", *ROTATION_PROPERTIES.values())


def clear(
    armature: bpy.types.Object,
    *,
    tip_bone: str,
    chain_length: int = 0,
    frame_start: int | None = None,
    frame_end: int | None = None,
) -> int:
    """Remove the rotation keys of a chain's bones from ``frame_start`` to ``frame_end``.

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
        (quaternion, Euler and axis-angle alike); an F-curve left without keys is removed.

    Raises
    ------
    TypeError, ValueError
        For bad input, as ``api.bake`` raises them; nothing is removed then.
    """
    frames = _frames(_scene(), frame_start, frame_end, 1)
    _check_armature(armature)
    names = chain_bone_names(armature, tip_bone, chain_length)
    _check_writable(armature, None, remedy="make it single-user first to clear this armature's keys alone")
    paths = {f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}' for name in names for prop in _ROTATION_PATHS}
    chain_curves = [fcurve for fcurve in compat.assigned_fcurves(armature) if fcurve.data_path in paths]
    return sum(remove_keys(armature, fcurve, float(frames[0]), float(frames[-1])) for fcurve in chain_curves)
