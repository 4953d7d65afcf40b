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
#: Read every pose bone's matrix at once (one call a frame) where the bones measured are at least this share of
#: the armature's: a read of one bone costs about as much as four bones' share of a read of all.
_ALL_AT_ONCE = 0.25


@dataclass(frozen=True)
class PoseTrack:
    """What a frame walk reads of an armature on every frame: its world matrix (``world``) and the posed matrices
    of ``bones`` (``matrices``, 16 numbers each, column after column, bone after bone), row ``i`` on the walk's
    ``i``-th frame: every pose bone's at once (``every``; a bone's 16 at its place among the pose bones), or each
    bone's.

    ``bone`` is "": the walk reads the armature as a whole (``bake.read.Track``)."""

    armature: bpy.types.Object
    bones: tuple[str, ...]
    world: NDArray[np.float32]
    matrices: NDArray[np.float32]
    places: tuple[int, ...]
    every: bool
    bone: str = ""

    @classmethod
    def empty(cls, armature: bpy.types.Object, bones: Sequence[str], frames: int) -> PoseTrack:
        pose = armature.pose
        assert pose is not None
        every = len(bones) >= _ALL_AT_ONCE * len(pose.bones)
        places = tuple(pose.bones.find(bone) for bone in bones) if every else tuple(range(len(bones)))
        width = 16 * (len(pose.bones) if every else len(bones))
        world = np.empty((frames, 16), dtype=np.float32)
        return cls(armature, tuple(bones), world, np.empty((frames, width), dtype=np.float32), places, every)

    def rows(self, k: int) -> NDArray[np.float32]:
        """The rows (F, 16) of the posed matrix of the ``k``-th of ``bones``."""
        return self.matrices[:, 16 * self.places[k] : 16 * self.places[k] + 16]

    def reads(self, copies: dict[bpy.types.Object, bpy.types.Object]) -> list[_Read]:
        """What fills the rows, from the evaluated copy of the armature (``bake.read.Track``)."""
        copy = copies[self.armature]
        pose = copy.pose
        assert pose is not None
        reads: list[_Read] = [(copy.path_resolve("matrix_world", False).foreach_get, self.world)]
        if self.every:
            bones = pose.bones

            def fill(row: NDArray[np.float32]) -> None:
                bones.foreach_get("matrix", row)

            return [*reads, (fill, self.matrices)]
        return reads + [
            (pose.bones[bone].path_resolve("matrix", False).foreach_get, self.rows(k))
            for k, bone in enumerate(self.bones)
        ]


def pose_tracks(armature: bpy.types.Object, bones: Sequence[str], frames: int) -> list[PoseTrack]:
    """The tracks that read ``bones`` of ``armature`` in world space."""
    return [PoseTrack.empty(armature, bones, frames)]


def measured_points(skeleton: Skeleton, tracks: Sequence[PoseTrack]) -> FloatArray:
    """Where Blender put the skeleton's measured points (F, P, 3), from what ``pose_tracks`` read (its bones, in
    the skeleton's order)."""
    (track,) = tracks
    if len({len(points) for points in skeleton.points}) != 1:  # nodes with other counts of points
        world = row_matrices(track.world)
        nodes = np.stack([row_matrices(track.rows(k)) for k in range(len(track.bones))])  # (B, F, 4, 4)
        return points_of(skeleton, np.moveaxis(np.matmul(world, nodes, out=nodes), 0, 1))
    # As many points on every bone: a product per bone puts its points in the armature (the rows, column after
    # column, are the matrices transposed: a point's row times them), then a product per frame in the world.
    frames, count = len(track.world), len(track.bones)
    rows = track.matrices.reshape(frames, -1, 16)
    if track.places != tuple(range(rows.shape[1])):
        rows = rows[:, list(track.places)]
    columns = rows.reshape(frames, count, 4, 4).transpose(1, 2, 0, 3).reshape(count, 4, 4 * frames)
    local = np.stack(skeleton.points)  # (B, each, 3)
    each = local.shape[1]
    homogeneous = np.concatenate([local, np.ones((count, each, 1))], axis=2)
    armature = (homogeneous @ columns.astype(np.float64)).reshape(count, each, frames, 4)
    armature = armature.transpose(2, 0, 1, 3).reshape(frames, count * each, 4)
    world = track.world.reshape(frames, 4, 4).astype(np.float64)
    return np.asarray((armature @ world)[..., :3], dtype=np.float64)
