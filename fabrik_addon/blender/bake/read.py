"""Step through frames with Blender's own evaluation and read what the bake needs into arrays.

Everything the scene does is honoured because Blender evaluates it: animated armature objects, animated
parents of the chain, the target's parents, constraints and drivers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeAlias

import bpy
import numpy as np
from mathutils import Matrix
from numpy.typing import NDArray

from ...solver import FloatArray
from ..rig import ArmatureChain, bone_in_path, bone_path, chain_is_animated, rotation_property
from .inputs import Inputs, affine_inverse, inputs_from_rows, inverse, matrices, transformed
from .sandbox import Evaluation

#: A row to fill with what Blender evaluated, in float32 as Blender keeps it (a matrix column after column).
_Row: TypeAlias = NDArray[np.float32]
#: One read of a frame walk: what fills a row (a property's ``foreach_get``, or a function computing the
#: value), and the array whose row ``i`` it fills on the walk's ``i``-th frame.
_Read: TypeAlias = tuple[Callable[[_Row], None], NDArray[np.float32]]
#: The evaluated copy of each object a walk reads (or each object itself, read as it is).
_Copies: TypeAlias = dict[bpy.types.Object, bpy.types.Object]


@dataclass(frozen=True)
class BoneTrack:
    """A bone besides the chains' whose frames a walk reads (``sample_inputs``' ``tracks``): row ``i`` of each
    array is filled on the walk's ``i``-th frame, in float32 as Blender keeps it.

    Attributes
    ----------
    armature : bpy.types.Object
    bone : str
    world, matrix, basis : ndarray, shape (F, 16)
        The armature's world matrix, the bone's posed matrix (armature space) and its ``matrix_basis``.
    """

    armature: bpy.types.Object
    bone: str
    world: NDArray[np.float32]
    matrix: NDArray[np.float32]
    basis: NDArray[np.float32]

    @classmethod
    def empty(cls, armature: bpy.types.Object, bone: str, frames: int) -> BoneTrack:
        return cls(armature, bone, *(np.empty((frames, 16), dtype=np.float32) for _ in range(3)))

    def world_matrices(self) -> FloatArray:
        """The bone's posed matrix in world space on each frame (F, 4, 4): its head is the translation, its axes
        the columns (with the bone's and its parents' scale)."""
        return np.asarray(matrices(self.world) @ matrices(self.matrix), dtype=np.float64)

    def world_inverses(self) -> FloatArray:
        """The inverses (F, 4, 4) of ``world_matrices``, written out (``affine_inverse``: numpy's batched solve
        costs milliseconds for a few hundred frames)."""
        return affine_inverse(self.world_matrices())

    def hang_frames(self) -> FloatArray:
        """The frame the bone hangs in on each frame (F, 4, 4), in world space: its posed matrix less its own
        ``matrix_basis``, where its parent (and its rest under it) put it."""
        return np.asarray(self.world_matrices() @ affine_inverse(matrices(self.basis)), dtype=np.float64)

    def locations_moving(self, moves: FloatArray, rest_turn: FloatArray | None = None) -> FloatArray:
        """Per frame, the bone's Location (F, 3) that moves its head by ``moves`` (F, 3) in world space from
        where it is: through the linear map from Location to world, what the head hangs from (the armature's
        world matrix and the bone's posed matrix without its own ``matrix_basis``); for a bone whose Location is
        in its parent's space (Local Location off), without its ``rest_turn`` (3, 3) too, its rest orientation
        in its parent's (in the armature's, for a root bone)."""
        linear = matrices(self.world)[:, :3, :3] @ matrices(self.matrix)[:, :3, :3]
        hangs = linear @ inverse(matrices(self.basis)[:, :3, :3])
        if rest_turn is not None:
            hangs = hangs @ np.linalg.inv(rest_turn)
        location = matrices(self.basis)[:, :3, 3]
        return np.asarray(location + np.einsum("fij,fj->fi", inverse(hangs), moves), dtype=np.float64)

    def reads(self, copies: _Copies) -> list[_Read]:
        bone = _pose_bones(copies[self.armature], [self.bone])[0]
        return [
            (_fill(copies[self.armature], "matrix_world"), self.world),
            (_fill(bone, "matrix"), self.matrix),
            (_fill(bone, "matrix_basis"), self.basis),
        ]


@dataclass(frozen=True)
class ChannelTrack:
    """A property of a pose bone that a walk reads on every frame as Blender evaluated it (its raw values, a
    rotation in its own mode as keyed): row ``i`` of ``values`` is filled on the walk's ``i``-th frame.

    Attributes
    ----------
    armature : bpy.types.Object
    bone, prop : str
        The bone, and its property (``rotation_quaternion``, ``scale``...).
    values : ndarray, shape (F, n)
    """

    armature: bpy.types.Object
    bone: str
    prop: str
    values: NDArray[np.float32]

    @classmethod
    def empty(cls, armature: bpy.types.Object, data_path: str, frames: int) -> ChannelTrack:
        """A track of the pose bone property at ``data_path`` (``pose.bones["hand"].rotation_quaternion``)."""
        bone = bone_in_path(data_path)
        prop = data_path.rpartition(".")[2]
        pose = armature.pose
        assert pose is not None
        width = len(getattr(pose.bones[bone], prop))
        return cls(armature, bone, prop, np.empty((frames, width), dtype=np.float32))

    @property
    def data_path(self) -> str:
        return f"{bone_path(self.bone)}.{self.prop}"

    def reads(self, copies: _Copies) -> list[_Read]:
        return [(_fill(_pose_bones(copies[self.armature], [self.bone])[0], self.prop), self.values)]


class Track(Protocol):
    """What a walk reads besides the chains (``BoneTrack``, ``ChannelTrack``): a bone of an armature, read into
    rows by ``reads``."""

    @property
    def armature(self) -> bpy.types.Object: ...
    @property
    def bone(self) -> str: ...
    def reads(self, copies: _Copies) -> list[_Read]: ...


class Goals(Protocol):
    """A chain and what it follows, as the frame walks read them (``unit.PreparedChain`` is one): objects,
    or bones of them where a bone is named; no target: the chain's own tip as animated."""

    @property
    def chain(self) -> ArmatureChain: ...
    @property
    def target(self) -> bpy.types.Object | None: ...
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
    tracks: Sequence[Track] = (),
) -> list[Inputs]:
    """Evaluate every frame once and read, for each chain, the target (and pole), the chain's root frame and
    the chain's own pose, from the evaluated objects; and fill the rows of ``tracks``."""
    readings = [_Reading.empty(len(frames), c, chain_is_animated(c.chain.armature, c.chain.bone_names)) for c in chains]

    def reads(copies: _Copies) -> list[_Read]:
        of_chains = [r for reading, goals in zip(readings, chains, strict=True) for r in reading.reads(copies, goals)]
        return of_chains + [read for track in tracks for read in track.reads(copies)]

    walk = _Walk(
        evaluation,
        [
            *(obj for c in chains for obj in (c.chain.armature, c.target, c.pole_target) if obj is not None),
            *(track.armature for track in tracks),
        ],
        reads,
    )
    with _walking():
        for i, frame in enumerate(frames.tolist()):
            evaluation.step(frame)
            walk.read(i)
            if i == 0:
                for reading, goals in zip(readings, chains, strict=True):
                    reading.read_first(walk.pose_bones(goals.chain))
            if progress is not None:
                progress(i)
    return [reading.inputs() for reading in readings]


def current_inputs(goals: Goals) -> Inputs:
    """What ``sample_inputs`` reads on one frame, read as Blender last evaluated the scene (no frame change)."""
    reading = _Reading.empty(1, goals, True)
    itself = {obj: obj for obj in (goals.chain.armature, goals.target, goals.pole_target) if obj is not None}
    for fill, rows in reading.reads(itself, goals):
        fill(rows[0])
    reading.read_first(goals.chain.pose_bones)
    return reading.inputs()


def goal_matrix(obj: bpy.types.Object, bone: str) -> Matrix:
    """The world matrix of a goal: an object's, or (with ``bone``) that bone's posed matrix in world space,
    whose translation is the bone's head."""
    if not bone:
        return obj.matrix_world
    pose = obj.pose
    assert pose is not None
    return obj.matrix_world @ pose.bones[bone].matrix


def _fill(owner: bpy.types.Object | bpy.types.PoseBone, name: str) -> Callable[[_Row], None]:
    """What fills a row with the float array property ``name`` of ``owner``, read in place (a fifth of the cost
    of making a ``Matrix`` or ``Vector`` of it)."""
    prop: bpy.types.bpy_prop_array[float] = owner.path_resolve(name, False)
    return prop.foreach_get


def goal_fill(obj: bpy.types.Object, bone: str) -> Callable[[_Row], None]:
    """What fills a row (16,) with a goal's world matrix, column after column (see ``goal_matrix``): in place
    for an object; a bone's is a product, made as Blender's ``Matrix`` makes it (float32 arithmetic)."""
    if not bone:
        return _fill(obj, "matrix_world")

    def fill(row: _Row) -> None:
        row.reshape(4, 4)[:] = goal_matrix(obj, bone).transposed()

    return fill


def _pose_bones(armature: bpy.types.Object, names: Sequence[str]) -> list[bpy.types.PoseBone]:
    pose = armature.pose
    assert pose is not None
    return [pose.bones[name] for name in names]


@dataclass
class _Reading:
    """The matrices read from Blender's evaluation, one row per frame, before they become ``Inputs``."""

    world: NDArray[np.float32]  # (F, 16) the armature object's world matrix
    root_pose: NDArray[np.float32]  # (F, 16) the chain root's posed matrix, in armature space
    targets: NDArray[np.float32]  # (F, 16): the target's world matrix (the tip bone's posed matrix, no target)
    tips: NDArray[np.float32] | None  # (F, 2, 3): the tip bone's head and tail (armature space), with no target
    bases: NDArray[np.float32]  # (F or 1, m, 16): read on the first frame only when the chain is not animated
    first_channels: list[FloatArray]  # each bone's rotation values in its own mode, on the first frame
    poles: NDArray[np.float32] | None  # (F, 16) the pole target's world matrix, if there is one
    use_rotation: bool

    @classmethod
    def empty(cls, frames: int, goals: Goals, animated: bool) -> _Reading:
        return cls(
            world=np.empty((frames, 16), dtype=np.float32),
            root_pose=np.empty((frames, 16), dtype=np.float32),
            targets=np.empty((frames, 16), dtype=np.float32),
            tips=np.empty((frames, 2, 3), dtype=np.float32) if goals.target is None else None,
            bases=np.empty((frames if animated else 1, len(goals.chain.bone_names), 16), dtype=np.float32),
            first_channels=[],
            poles=np.empty((frames, 16), dtype=np.float32) if goals.pole_target is not None else None,
            use_rotation=goals.use_rotation,
        )

    def reads(self, copies: _Copies, goals: Goals) -> list[_Read]:
        """What to read on every frame, from the ``copies`` of the chain's armature and goals: the armature's
        world matrix, the root bone's posed matrix, the goals' world matrices, and each bone's own
        ``matrix_basis`` where the chain is animated."""
        armature = copies[goals.chain.armature]
        bones = _pose_bones(armature, goals.chain.bone_names)
        reads = [(_fill(armature, "matrix_world"), self.world), (_fill(bones[0], "matrix"), self.root_pose)]
        if goals.target is not None:
            reads.append((goal_fill(copies[goals.target], goals.target_bone), self.targets))
        elif self.tips is not None:  # the chain's own tip as animated
            reads += [(_fill(bones[-1], "matrix"), self.targets), (_fill(bones[-1], "head"), self.tips[:, 0])]
            reads.append((_fill(bones[-1], "tail"), self.tips[:, 1]))
        if goals.pole_target is not None and self.poles is not None:
            reads.append((goal_fill(copies[goals.pole_target], goals.pole_bone), self.poles))
        if len(self.bases) > 1:
            reads += [(_fill(bone, "matrix_basis"), self.bases[:, k]) for k, bone in enumerate(bones)]
        return reads

    def read_first(self, pose_bones: list[bpy.types.PoseBone]) -> None:
        """What is read on the first frame only: the bones' rotation values (and, for a chain that is not
        animated, their ``matrix_basis``)."""
        if len(self.bases) == 1:
            for k, pose_bone in enumerate(pose_bones):
                _fill(pose_bone, "matrix_basis")(self.bases[0, k])
        self.first_channels = [np.array(getattr(pb, rotation_property(pb.rotation_mode))) for pb in pose_bones]

    def inputs(self) -> Inputs:
        return inputs_from_rows(
            self.world,
            self.root_pose,
            self.targets,
            self.bases,
            self.first_channels,
            self.poles,
            self.use_rotation,
            tips=self.tips,
        )


def sample_tips(
    evaluation: Evaluation,
    frames: NDArray[np.int64],
    chains: Sequence[ArmatureChain],
    progress: Callable[[int], None] | None = None,
    tracks: Sequence[Track] = (),
) -> list[FloatArray]:
    """Evaluate every frame once and read the world position of each chain's tip bone's tail (and fill the rows
    of ``tracks``).

    Returns
    -------
    list of ndarray, shape (F, 3)
        One per chain: the tail as Blender's ``matrix_world @ tail`` gives it (``_transformed``).
    """
    worlds = [np.empty((len(frames), 16), dtype=np.float32) for _ in chains]
    tails = [np.empty((len(frames), 3), dtype=np.float32) for _ in chains]

    def reads(copies: _Copies) -> list[_Read]:
        return [
            read
            for chain, world, tail in zip(chains, worlds, tails, strict=True)
            for read in (
                (_fill(copies[chain.armature], "matrix_world"), world),
                (_fill(_pose_bones(copies[chain.armature], [chain.bone_names[-1]])[0], "tail"), tail),
            )
        ] + [read for track in tracks for read in track.reads(copies)]

    walk = _Walk(evaluation, [chain.armature for chain in chains] + [track.armature for track in tracks], reads)
    with _walking():
        for i, frame in enumerate(frames.tolist()):
            evaluation.step(frame)
            walk.read(i)
            if progress is not None:
                progress(i)
    return [transformed(world, tail) for world, tail in zip(worlds, tails, strict=True)]


class _Walk:
    """The reads of a frame walk from evaluated copies of ``objects``, made by ``reads`` once, then again only
    when Blender has made a new evaluated copy (after a change to the depsgraph's relations)."""

    def __init__(
        self, evaluation: Evaluation, objects: Sequence[bpy.types.Object], reads: Callable[[_Copies], list[_Read]]
    ) -> None:
        self._evaluation = evaluation
        self._objects = list(dict.fromkeys(objects))
        self._make_reads = reads
        self._depsgraph: bpy.types.Depsgraph | None = None
        self._pointers: list[int] = []
        self._copies: _Copies = {}
        self._reads: list[_Read] = []

    def read(self, i: int) -> None:
        """Fill row ``i`` of every read from the scene as Blender evaluated it last."""
        if self._depsgraph is None:  # looked up once the walk has stepped to a frame
            self._depsgraph = self._evaluation.depsgraph()
        copies = [obj.evaluated_get(self._depsgraph) for obj in self._objects]
        pointers = [copy.as_pointer() for copy in copies]
        if pointers != self._pointers:
            self._copies = dict(zip(self._objects, copies, strict=True))
            self._reads, self._pointers = self._make_reads(self._copies), pointers
        for fill, rows in self._reads:
            fill(rows[i])

    def pose_bones(self, chain: ArmatureChain) -> list[bpy.types.PoseBone]:
        """The chain's pose bones in the evaluated copy read last."""
        return _pose_bones(self._copies[chain.armature], chain.bone_names)


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
