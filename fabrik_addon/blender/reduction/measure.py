"""Blender's own evaluation of kept keys: what a frame walk reads of the keyed bones (``PoseTrack``: the
armature's world matrix, each bone's posed matrix), and the measured points' distance from the pose they stand
for on each frame."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ...reduction import Skeleton, points_of
from ...solver import FloatArray
from .model import row_matrices

#: A row's filler and the rows it fills, as a frame walk takes them (``bake.read``'s reads).
_Read = tuple[Callable[[NDArray[np.float32]], None], NDArray[np.float32]]


@dataclass(frozen=True)
class PoseTrack:
    """What a frame walk reads of an armature on every frame: its world matrix (``bone`` "") or a bone's posed
    matrix, row ``i`` of ``rows`` (16, column after column) on the walk's ``i``-th frame."""

    armature: bpy.types.Object
    bone: str
    rows: NDArray[np.float32]

    @classmethod
    def empty(cls, armature: bpy.types.Object, bone: str, frames: int) -> PoseTrack:
        return cls(armature, bone, np.empty((frames, 16), dtype=np.float32))

    def reads(self, copies: dict[bpy.types.Object, bpy.types.Object]) -> list[_Read]:
        """What fills the rows, from the evaluated copy of the armature (``bake.read.Track``)."""
        copy = copies[self.armature]
        if not self.bone:
            return [(copy.path_resolve("matrix_world", False).foreach_get, self.rows)]
        pose = copy.pose
        assert pose is not None
        return [(pose.bones[self.bone].path_resolve("matrix", False).foreach_get, self.rows)]


def pose_tracks(armature: bpy.types.Object, bones: Sequence[str], frames: int) -> list[PoseTrack]:
    """The tracks that read ``bones`` of ``armature`` in world space: its world matrix first, then each bone's."""
    return [PoseTrack.empty(armature, bone, frames) for bone in ("", *bones)]


def measured_points(skeleton: Skeleton, tracks: Sequence[PoseTrack]) -> FloatArray:
    """Where Blender put the skeleton's measured points (F, P, 3), from what ``pose_tracks`` read (the world
    matrix, then one track per node, in the skeleton's order)."""
    world = row_matrices(tracks[0].rows)
    nodes = np.stack([row_matrices(track.rows) for track in tracks[1:]])  # (B, F, 4, 4), node after node
    return points_of(skeleton, np.moveaxis(np.matmul(world, nodes, out=nodes), 0, 1))
