"""Remove the keys of a chain's rotation (and stretch) channels in a frame range: what a bake writes, taken away."""

from __future__ import annotations

import bpy

from ...settings import BakeSettings
from .. import compat
from ..layer import clear_layer, find_layer
from ..rig import ROTATION_PATHS, KeyRemoval, bone_path, chain_bone_names, check_unlocked, keys_within
from .checks import check_armature, check_writable, current_scene


def clear(settings: BakeSettings[bpy.types.Object]) -> int:
    """Remove the rotation and Y scale keys of the bones of every chain of ``settings`` in its frame range.

    Parameters
    ----------
    settings : BakeSettings
        The chains (their targets, poles and solver settings play no part) and the frames (their step
        neither: every key from the first frame to the last goes).

    Returns
    -------
    int
        How many keys were removed: from the Action, or with ``output`` ``"layer"`` from the armature's FABRIK
        layer (which goes when it has no key left, the Action it pushed down made active again). Every rotation
        channel of the chain's bones loses its keys in the range (quaternion, Euler and axis-angle alike), and so
        does their Y scale (a bake with stretch keys it; the chain's bones can only be baked at a scale of 1
        otherwise); an F-curve left without keys is removed.

    Raises
    ------
    TypeError, ValueError
        For bad input, as a bake raises them, and for a locked F-curve with keys in the range; nothing is
        removed then (nor when Ctrl+C stops it midway).
    """
    scene = current_scene()
    frames = settings.frames.resolved(scene.frame_start, scene.frame_end)
    first, last = float(frames.start), float(frames.stop - 1)
    curves: list[tuple[bpy.types.Object, bpy.types.FCurve]] = []
    baked: dict[bpy.types.Object, set[tuple[str, int]]] = {}
    for chain in settings.chains:  # every chain is checked before any key goes
        armature = check_armature(chain.armature)
        names = chain_bone_names(armature, chain.tip_bone, chain.chain_length)
        bones = [bone_path(name) for name in names]
        channels = baked.setdefault(armature, set())
        channels.update((f"{bone}.{prop}", index) for bone in bones for prop in ROTATION_PATHS for index in range(4))
        channels.update((f"{bone}.scale", 1) for bone in bones)
        if settings.output == "layer":
            layer = find_layer(armature)
            fcurves = layer.fcurves() if layer is not None else []
        else:
            check_writable(armature, None, remedy="make it single-user first to clear this armature's keys alone")
            fcurves = list(compat.assigned_fcurves(armature))
        curves += [(armature, f) for f in fcurves if (f.data_path, f.array_index) in channels]
    for armature, fcurve in curves:
        if keys_within(fcurve, first, last):  # a locked F-curve that would lose keys
            check_unlocked(armature, fcurve)
    removed = 0
    with KeyRemoval() as removal:  # all or nothing, even if Ctrl+C lands midway
        if settings.output == "layer":
            for armature, channels in baked.items():
                removed += clear_layer(armature, channels, first, last, removal)
        else:
            for armature, fcurve in dict.fromkeys(curves):
                removed += removal.remove(armature, fcurve, first, last)
        removal.finish()
    return removed
