"""The pose bones' own transform values, taken before a bake and put back after it.

Stepping through frames lets Blender's animation write keyed values into the pose bones, over whatever the
animator had set by hand and not keyed; and a bake that fails after writing keys leaves the chain at the
pose of the frame it stopped on. A snapshot, taken and restored in bulk (``foreach_get``/``foreach_set``),
gives those values back.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import bpy
import numpy as np

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
    """Every pose bone's location, rotations (in every mode) and scale, as they were when taken."""

    armature: bpy.types.Object
    names: tuple[str, ...]
    values: dict[str, FloatArray]  # property -> (bones, width)

    @classmethod
    def take(cls, armature: bpy.types.Object) -> PoseSnapshot:
        bones = _pose_bones(armature)
        values = {name: _read(bones, name, width) for name, width in _PROPERTIES}
        return cls(armature, tuple(bones.keys()), values)

    def restore(self, leave: Collection[str] = ()) -> bool:
        """Put the values back on every bone but those named in ``leave``; returns whether any value changed
        (only then is anything written, and the pose needs evaluating again)."""
        bones = _pose_bones(self.armature)
        keep = np.array([name in leave for name in self.names], dtype=bool)
        changed = False
        for name, width in _PROPERTIES:
            now = _read(bones, name, width)
            values = np.where(keep[:, None], now, self.values[name])
            if not np.array_equal(values, now):
                bones.foreach_set(name, values.astype(np.float32).ravel())
                changed = True
        return changed


def _pose_bones(armature: bpy.types.Object) -> bpy.types.bpy_prop_collection[bpy.types.PoseBone]:
    pose = armature.pose
    assert pose is not None
    return pose.bones


def _read(bones: bpy.types.bpy_prop_collection[bpy.types.PoseBone], name: str, width: int) -> FloatArray:
    buffer = np.empty(len(bones) * width, dtype=np.float32)
    bones.foreach_get(name, buffer)
    return buffer.reshape(len(bones), width).astype(np.float64)
