"""The pose bones' own transform values, taken before a bake and put back after it.

Stepping through frames lets Blender's animation write keyed values into the pose bones, over whatever the
animator had set by hand and not keyed; and a bake that fails after writing keys leaves the chain at the
pose of the frame it stopped on. A snapshot, taken and restored in bulk (``foreach_get``/``foreach_set``),
gives those values back: to the same bones, even where bones were renamed or added meanwhile (while
stepping through a solve, say).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ...solver import FloatArray

#: The pose bone properties that hold a bone's own transform, with the number of values of each.
_PROPERTIES = (
    ("location", 3),
    ("rotation_quaternion", 4),
    ("rotation_euler", 3),
    ("rotation_axis_angle", 4),
    ("scale", 3),
)


@dataclass(frozen=True)
class PoseSnapshot:
    """Every pose bone's location, rotations (in every mode) and scale, as they were when taken.

    Attributes
    ----------
    armature : bpy.types.Object
    names : tuple of str
        The pose bones' names when taken.
    pointers : tuple of int
        Their pose channels' addresses (``as_pointer``), which Blender keeps through a rename and Edit Mode:
        compared as numbers only, to find a bone renamed since.
    values : dict of str to ndarray, shape (bones, width)
        Per property, the bones' values.
    """

    armature: bpy.types.Object
    names: tuple[str, ...]
    pointers: tuple[int, ...]
    values: dict[str, FloatArray]

    @classmethod
    def take(cls, armature: bpy.types.Object) -> PoseSnapshot:
        bones = _pose_bones(armature)
        values = {name: _read(bones, name, width) for name, width in _PROPERTIES}
        return cls(armature, tuple(bones.keys()), tuple(bone.as_pointer() for bone in bones), values)

    def restore(self, leave: Collection[str] = ()) -> bool:
        """Put the values back on every bone taken but those named in ``leave`` (by their names when taken);
        bones added since keep theirs. Returns whether any value changed (only then is anything written, and
        the pose needs evaluating again).

        Raises
        ------
        ReferenceError
            If the armature has been deleted.
        """
        bones = _pose_bones(self.armature)
        rows = self._rows(bones)
        taken = rows >= 0
        keep = ~taken
        keep[taken] = [self.names[row] in leave for row in rows[taken]]
        changed = False
        for name, width in _PROPERTIES:
            now = _read(bones, name, width)
            values = now.copy()
            values[~keep] = self.values[name][rows[~keep]]
            if not np.array_equal(values, now):
                bones.foreach_set(name, values.astype(np.float32).ravel())
                changed = True
        return changed

    def _rows(self, bones: bpy.types.bpy_prop_collection[bpy.types.PoseBone]) -> NDArray[np.int64]:
        """For each pose bone now, its row in the snapshot, or -1 for a bone added since: found by its name, or
        for a bone renamed since, by its pose channel; each row is given to one bone at most."""
        names = tuple(bones.keys())
        if names == self.names:
            return np.arange(len(names))
        by_name = {name: row for row, name in enumerate(self.names)}
        by_pointer = {pointer: row for row, pointer in enumerate(self.pointers)}
        rows = [by_name.get(name, -1) for name in names]
        given = set(rows)
        for k, bone in enumerate(bones):
            renamed = by_pointer.get(bone.as_pointer(), -1) if rows[k] < 0 else -1
            if renamed >= 0 and renamed not in given:
                rows[k] = renamed
                given.add(renamed)
        return np.array(rows, dtype=np.int64)


def _pose_bones(armature: bpy.types.Object) -> bpy.types.bpy_prop_collection[bpy.types.PoseBone]:
    pose = armature.pose
    assert pose is not None
    return pose.bones


def _read(bones: bpy.types.bpy_prop_collection[bpy.types.PoseBone], name: str, width: int) -> FloatArray:
    buffer = np.empty(len(bones) * width, dtype=np.float32)
    bones.foreach_get(name, buffer)
    return buffer.reshape(len(bones), width).astype(np.float64)
