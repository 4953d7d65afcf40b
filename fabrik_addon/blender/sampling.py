"""Step through frames with Blender's own evaluation and read what the bake needs into arrays.

Everything the scene does is honoured because Blender evaluates it: animated armature objects, animated
parents of the chain, the target's parents, constraints and drivers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

import bpy
import numpy as np
from mathutils import Matrix
from numpy.typing import NDArray

from ..solver.validate import FloatArray
from . import compat
from .chain import ArmatureChain
from .channels import rotation_property
from .evaluation import Evaluation


@dataclass(frozen=True)
class Inputs:
    """What Blender evaluates on each baked frame, before the bake.

    Attributes
    ----------
    targets : ndarray, shape (F, 3)
        The target's world location (an object's, or a target bone's head).
    root_frames : ndarray, shape (F, 4, 4)
        World matrix of the chain root's frame without its own rotation: where the chain hangs from.
    bone_bases : ndarray, shape (F, m, 4, 4) or (1, m, 4, 4)
        Each chain bone's ``matrix_basis`` (its own location, rotation and scale); one frame if the chain's
        bones are not animated.
    first_channels : list of ndarray, shape (4,) or (3,)
        Each chain bone's rotation values in its own rotation mode on the first frame: the keys written
        start next to them (same quaternion sign, Euler angles within half a turn).
    poles : ndarray, shape (F, 3), or None
        The pole target's world location (or its bone's head), if there is one.
    target_rotations : ndarray, shape (F, 3, 3), or None
        The target's world orientation (its matrix's columns made unit length), when the tip turns with it.
    """

    targets: FloatArray
    root_frames: FloatArray
    bone_bases: FloatArray
    first_channels: list[FloatArray]
    poles: FloatArray | None = None
    target_rotations: FloatArray | None = None


class Goals(Protocol):
    """A chain and what it follows, as the frame walks read them (``adapter.PreparedChain`` is one): objects,
    or bones of them where a bone is named."""

    @property
    def chain(self) -> ArmatureChain: ...
    @property
    def target(self) -> bpy.types.Object: ...
    @property
    def target_bone(self) -> str: ...
    @property
    def pole_target(self) -> bpy.types.Object | None: ...
    @property
    def pole_bone(self) -> str: ...
    @property
    def use_rotation(self) -> bool: ...


def sample_inputs(
    evaluation: Evaluation,
    frames: NDArray[np.int64],
    chains: Sequence[Goals],
    progress: Callable[[int], None] | None = None,
) -> list[Inputs]:
    """Evaluate every frame once and read, for each chain, the target (and pole), the chain's root frame and
    the chain's own pose, from the evaluated objects."""
    readings = [_Reading.empty(len(frames), c, chain_is_animated(c.chain.armature, c.chain.bone_names)) for c in chains]
    looked_up = _Evaluated(evaluation)
    with _walking():
        for i, frame in enumerate(frames.tolist()):
            evaluation.step(frame)
            for reading, goals in zip(readings, chains, strict=True):
                pole = None if goals.pole_target is None else looked_up.goal(goals.pole_target, goals.pole_bone)
                chain = looked_up.chain(goals.chain)
                target = looked_up.goal(goals.target, goals.target_bone)
                reading.read(i, chain.world, chain.root_pose, chain.bones, target, pole)
            if progress is not None:
                progress(i)
    return [reading.inputs() for reading in readings]


def current_inputs(goals: Goals) -> Inputs:
    """What ``sample_inputs`` reads on one frame, read as Blender last evaluated the scene (no frame change)."""
    reading = _Reading.empty(1, goals, True)
    pole = None if goals.pole_target is None else goal_matrix(goals.pole_target, goals.pole_bone)
    bones = goals.chain.pose_bones
    target = goal_matrix(goals.target, goals.target_bone)
    reading.read(0, goals.chain.armature.matrix_world, bones[0].matrix, bones, target, pole)
    return reading.inputs()


def goal_matrix(obj: bpy.types.Object, bone: str) -> Matrix:
    """The world matrix of a goal: an object's, or (with ``bone``) that bone's posed matrix in world space,
    whose translation is the bone's head."""
    if not bone:
        return obj.matrix_world
    pose = obj.pose
    assert pose is not None
    return obj.matrix_world @ pose.bones[bone].matrix


if TYPE_CHECKING:
    #: A matrix as a walk reads it: a ``mathutils.Matrix``, or a matrix property of an evaluated object or pose
    #: bone read in place (``_Evaluated``).
    _Read: TypeAlias = Matrix | bpy.types.bpy_prop_array[float]


def _put(row: NDArray[np.float32], matrix: _Read) -> None:
    """Store ``matrix`` in ``row`` (16,) as Blender keeps it, column after column, in float32: read in place
    with ``foreach_get`` (a fifth of the cost of making a ``Matrix`` of it), or a ``Matrix`` copied."""
    if isinstance(matrix, Matrix):
        row.reshape(4, 4)[:] = matrix.transposed()
    else:
        matrix.foreach_get(row)


def _matrices(rows: NDArray[np.float32]) -> FloatArray:
    """Matrices (F, 4, 4) from rows stored by ``_put`` (F, 16)."""
    return np.swapaxes(rows.reshape(-1, 4, 4), 1, 2).astype(np.float64)


@dataclass
class _Reading:
    """The matrices read from Blender's evaluation, one row per frame, before they become ``Inputs``."""

    world: NDArray[np.float32]  # (F, 16) the armature object's world matrix (stored by ``_put``)
    root_pose: NDArray[np.float32]  # (F, 16) the chain root's posed matrix, in armature space
    targets: NDArray[np.float32]  # (F, 16): the target's world matrix
    bases: FloatArray  # (F or 1, m, 4, 4): read on the first frame only when the chain is not animated
    first_channels: list[FloatArray]  # each bone's rotation values in its own mode, on the first frame
    poles: NDArray[np.float32] | None  # (F, 16) the pole target's world matrix, if there is one
    use_rotation: bool

    @classmethod
    def empty(cls, frames: int, goals: Goals, animated: bool) -> _Reading:
        return cls(
            world=np.empty((frames, 16), dtype=np.float32),
            root_pose=np.empty((frames, 16), dtype=np.float32),
            targets=np.empty((frames, 16), dtype=np.float32),
            bases=np.empty((frames if animated else 1, len(goals.chain.bone_names), 4, 4)),
            first_channels=[],
            poles=np.empty((frames, 16), dtype=np.float32) if goals.pole_target is not None else None,
            use_rotation=goals.use_rotation,
        )

    def read(
        self,
        i: int,
        world: _Read,
        root_pose: _Read,
        pose_bones: list[bpy.types.PoseBone],
        target: _Read,
        pole: _Read | None,
    ) -> None:
        """Fill row ``i`` from the scene as Blender evaluated it last: the armature's world matrix, the root
        bone's posed matrix, the chain's bones, the goals' world matrices."""
        _put(self.world[i], world)
        _put(self.root_pose[i], root_pose)
        _put(self.targets[i], target)
        if self.poles is not None and pole is not None:
            _put(self.poles[i], pole)
        if i < len(self.bases):
            for k, pose_bone in enumerate(pose_bones):
                self.bases[i, k] = pose_bone.matrix_basis
        if i == 0:
            self.first_channels = [np.array(getattr(pb, rotation_property(pb.rotation_mode))) for pb in pose_bones]

    def inputs(self) -> Inputs:
        # The root's posed matrix is (its parents) @ T(location) @ R(rotation) @ S(scale): drop R and S (S is
        # 1 but for a stretched root), its own matrix_basis (read on every frame where the chain is animated).
        root_frames = _matrices(self.world) @ _matrices(self.root_pose)
        root_frames[:, :3, :3] = root_frames[:, :3, :3] @ _inverse(self.bases[:, 0, :3, :3])
        targets = _matrices(self.targets)
        rotations = None
        if self.use_rotation:
            linear = targets[:, :3, :3]
            rotations = linear / np.linalg.norm(linear, axis=1, keepdims=True)
        return Inputs(
            targets=np.ascontiguousarray(targets[:, :3, 3]),
            root_frames=root_frames,
            bone_bases=self.bases,
            first_channels=self.first_channels,
            poles=None if self.poles is None else np.ascontiguousarray(_matrices(self.poles)[:, :3, 3]),
            target_rotations=rotations,
        )


def _inverse(m: FloatArray) -> FloatArray:
    """The inverses of 3 x 3 matrices (..., 3, 3), by their adjugates: the rows of the inverse are the cross
    products of the columns over the determinant. (numpy's batched inverse calls multithreaded LAPACK once
    per matrix, which costs milliseconds for a few hundred frames.)"""
    c0, c1, c2 = m[..., :, 0], m[..., :, 1], m[..., :, 2]
    rows = np.stack([np.cross(c1, c2), np.cross(c2, c0), np.cross(c0, c1)], axis=-2)
    determinant = np.einsum("...i,...i->...", c0, rows[..., 0, :])
    return np.asarray(rows / determinant[..., None, None], dtype=np.float64)


def sample_tips(
    evaluation: Evaluation,
    frames: NDArray[np.int64],
    chains: Sequence[Goals],
    progress: Callable[[int], None] | None = None,
) -> list[tuple[FloatArray, FloatArray]]:
    """Evaluate every frame once and read, for each chain, the world positions of its tip bone's tail and of
    its target.

    Returns
    -------
    list of (tips, targets), each ndarray of shape (F, 3)
        One pair per chain.
    """
    tips = [np.empty((len(frames), 3)) for _ in chains]
    targets = [np.empty((len(frames), 16), dtype=np.float32) for _ in chains]
    looked_up = _Evaluated(evaluation)
    with _walking():
        for i, frame in enumerate(frames.tolist()):
            evaluation.step(frame)
            for k, goals in enumerate(chains):
                chain = looked_up.chain(goals.chain)
                tips[k][i] = chain.armature.matrix_world @ chain.bones[-1].tail
                _put(targets[k][i], looked_up.goal(goals.target, goals.target_bone))
            if progress is not None:
                progress(i)
    return [(tip, _matrices(target)[:, :3, 3]) for tip, target in zip(tips, targets, strict=True)]


@dataclass(frozen=True)
class _EvaluatedChain:
    """A chain's evaluated armature and pose bones, and the matrices a walk reads of them, in place."""

    armature: bpy.types.Object
    bones: list[bpy.types.PoseBone]
    world: bpy.types.bpy_prop_array[float]  # the armature's matrix_world
    root_pose: bpy.types.bpy_prop_array[float]  # the root bone's matrix


class _Evaluated:
    """The evaluated copies of objects and of a chain's pose bones, looked up again only when Blender has
    made a new copy (after a change to the depsgraph's relations), with the matrix properties read in place."""

    def __init__(self, evaluation: Evaluation) -> None:
        self.evaluation = evaluation
        self._depsgraph: bpy.types.Depsgraph | None = None
        self._chains: dict[tuple[int, tuple[str, ...]], _EvaluatedChain] = {}
        self._worlds: dict[int, bpy.types.bpy_prop_array[float]] = {}

    def evaluated(self, obj: bpy.types.Object) -> bpy.types.Object:
        """``obj`` as Blender evaluated the frame last."""
        if self._depsgraph is None:  # looked up once the walk has stepped to a frame
            self._depsgraph = self.evaluation.depsgraph()
        return obj.evaluated_get(self._depsgraph)

    def goal(self, obj: bpy.types.Object, bone: str) -> _Read:
        """The world matrix of an evaluated goal (see ``goal_matrix``); an object's is read in place."""
        evaluated = self.evaluated(obj)
        if bone:
            return goal_matrix(evaluated, bone)
        key = evaluated.as_pointer()
        if key not in self._worlds:
            self._worlds[key] = evaluated.path_resolve("matrix_world", False)
        return self._worlds[key]

    def chain(self, chain: ArmatureChain) -> _EvaluatedChain:
        armature = self.evaluated(chain.armature)
        key = (armature.as_pointer(), chain.bone_names)
        if key not in self._chains:
            pose = armature.pose
            assert pose is not None
            bones = [pose.bones[name] for name in chain.bone_names]
            world = armature.path_resolve("matrix_world", False)
            self._chains[key] = _EvaluatedChain(armature, bones, world, bones[0].path_resolve("matrix", False))
        return self._chains[key]


#: How many walks through frames are under way (the live preview leaves poses alone while one is).
_walks = 0


def walking_frames() -> bool:
    """Whether a bake is stepping through frames now: poses seen meanwhile are the bake's, not the user's."""
    return _walks > 0


@contextmanager
def _walking() -> Iterator[None]:
    global _walks
    _walks += 1
    try:
        yield
    finally:
        _walks -= 1


def chain_is_animated(armature: bpy.types.Object, bone_names: Sequence[str]) -> bool:
    """Whether anything animates the chain bones' own channels: F-curves, drivers or NLA strips."""
    anim = armature.animation_data
    if anim is None:
        return False
    if any(track.strips for track in anim.nla_tracks):
        return True
    prefixes = tuple(f'pose.bones["{bpy.utils.escape_identifier(name)}"].' for name in bone_names)
    curves = [*compat.assigned_fcurves(armature), *anim.drivers]
    return any(fcurve.data_path.startswith(prefixes) for fcurve in curves)
