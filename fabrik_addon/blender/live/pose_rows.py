"""One armature's pose in bulk, as the live preview reads and writes it on every update: each pose bone property
it needs read for every bone with one ``foreach_get``, the solved bones' values set in those arrays, and each
property that changed written back with one ``foreach_set`` (then one tag, so that Blender evaluates the pose
once, in the same update)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import bpy
import numpy as np
from numpy.typing import NDArray

from ...solver import FloatArray

#: The width of each pose bone property read here.
WIDTHS = {
    "matrix": 16,
    "matrix_basis": 16,
    "location": 3,
    "scale": 3,
    "rotation_quaternion": 4,
    "rotation_euler": 3,
    "rotation_axis_angle": 4,
}
#: A channel that moves less than this (radians, or quaternion units, or scale) is left as it is.
UNCHANGED = 1e-6


class PoseRows:
    """An armature's world matrix and its pose bones' properties ``names``, as Blender evaluated them last.

    Attributes
    ----------
    world : ndarray, shape (16,)
        The armature object's world matrix, column after column (float32, as Blender keeps it).
    values : dict of str to ndarray, shape (bones, width)
        Per property, every pose bone's value, in ``pose.bones``' order (float32).
    changed : set of str
        The properties whose values ``set`` changed since they were read.
    """

    def __init__(self, armature: bpy.types.Object, names: Collection[str]) -> None:
        self.armature = armature
        self.world = np.empty(16, dtype=np.float32)
        armature.path_resolve("matrix_world", False).foreach_get(self.world)
        bones = _pose_bones(armature)
        count = len(bones)
        self.values: dict[str, NDArray[np.float32]] = {}
        for name in names:
            values = np.empty((count, WIDTHS[name]), dtype=np.float32)
            bones.foreach_get(name, values.ravel())
            self.values[name] = values
        self.changed: set[str] = set()

    def set(self, name: str, rows: NDArray[np.intp], values: FloatArray, column: int | None = None) -> bool:
        """Set property ``name`` of the bones at ``rows`` to ``values`` (rows, width), or only its ``column``
        to ``values`` (rows,), leaving each bone that would move by ``UNCHANGED`` or less as it is; whether
        any bone's value changed."""
        current = self.values[name] if column is None else self.values[name][:, column]
        wanted = np.asarray(values, dtype=np.float64)
        moved = np.abs(current[rows].astype(np.float64) - wanted)
        if moved.ndim > 1:
            moved = moved.max(axis=1)
        keep = ~(moved <= UNCHANGED)  # NaN moves too
        if not keep.any():
            return False
        current[rows[keep]] = wanted[keep]
        self.changed.add(name)
        return True

    def write(self) -> bool:
        """Write back every property that changed, one ``foreach_set`` each, and tag the pose for Blender to
        evaluate (as setting a pose bone's property does); whether anything was written."""
        if not self.changed:
            return False
        bones = _pose_bones(self.armature)
        for name in sorted(self.changed):
            bones.foreach_set(name, self.values[name].ravel())
        self.changed.clear()
        self.armature.update_tag(refresh={"DATA"})
        return True

    def gather(self, names: Sequence[tuple[str, NDArray[np.intp]]]) -> NDArray[np.float32]:
        """The rows ``names`` gives (property, bone rows) of each property, one after another in one array."""
        return np.concatenate([self.values[name][rows].ravel() for name, rows in names])


def _pose_bones(armature: bpy.types.Object) -> bpy.types.bpy_prop_collection[bpy.types.PoseBone]:
    pose = armature.pose
    assert pose is not None
    return pose.bones
