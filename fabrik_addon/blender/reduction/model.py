"""An armature's keyed bones as key reduction poses them (``fabrik_addon.reduction``): each keyed bone a node,
hung under the nearest keyed bone above it, its keyed channels what its F-curves hold on every frame and what
that plays, the rest of its pose as Blender read it.

A keyed bone whose parent is keyed too hangs from it by its rest (``bone.matrix`` and its head from the parent's
head). Any other keyed bone hangs from what a frame walk read on each frame: the frame its parent puts it in
(its posed matrix less its own basis), taken relative to the nearest keyed bone above it where there is one (the
bones between are not keyed: they move with it), or in the world. So the model poses the bones as Blender plays
them, whatever lies between and above them (``tracked`` names the bones a walk must read for it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import bpy
import numpy as np
from numpy.typing import NDArray

from ...reduction import Channels, Skeleton, bone_points
from ...solver import FloatArray, matrix_to_quat
from ..rig import armature_data, hang, rotation_channels, rotation_property

#: What a keyed bone's property plays on some rows of the frames given what its F-curves hold there (see
#: ``fabrik_addon.reduction.Play``), for its keyed indices only.
Plays = Callable[[FloatArray, NDArray[np.int64]], FloatArray]


class BoneRows(Protocol):
    """A bone as a frame walk read it on every frame (``bake.BoneTrack`` is one): the armature's world matrix, the
    bone's posed matrix and its ``matrix_basis``, one row of 16 (column after column) per frame each; its posed
    matrix in world space, their inverses, and the frame it hangs in."""

    @property
    def world(self) -> NDArray[np.float32]: ...
    @property
    def matrix(self) -> NDArray[np.float32]: ...
    @property
    def basis(self) -> NDArray[np.float32]: ...
    def world_matrices(self) -> FloatArray: ...
    def world_inverses(self) -> FloatArray: ...
    def hang_frames(self) -> FloatArray: ...


@dataclass(frozen=True)
class Keyed:
    """A property of a bone whose keys may be thinned: ``prop`` (``rotation_quaternion``, ``location``...), the
    ``indices`` its F-curves key, what they hold on every frame (``values``, (F, len(indices))), what that plays
    as Blender plays it (``plays``; None where the F-curves play what they hold), and the pose they stand for
    (``solved``, (F, len(indices)): what they play without Blender's rounding)."""

    prop: str
    indices: tuple[int, ...]
    values: FloatArray
    plays: Plays | None
    solved: FloatArray


@dataclass(frozen=True)
class BoneModel:
    """The keyed bones of one armature, as ``reduction.thin_keys`` takes them.

    Attributes
    ----------
    armature : bpy.types.Object
    bones : tuple of str
        The nodes' bones, parents before children.
    skeleton : Skeleton
    nodes : list of list of Channels
    sources : list of (str, Keyed)
        The bone and the keyed property of each thinned property, in the order ``thin_keys`` lists them.
    solved : list of list of ndarray, shape (F, n)
        Per node, the values of its channels in the pose the keys stand for (``Keyed.solved``; as ``nodes``
        play them where Blender plays the keys as they are).
    """

    armature: bpy.types.Object
    bones: tuple[str, ...]
    skeleton: Skeleton
    nodes: list[list[Channels]]
    sources: list[tuple[str, Keyed]]
    solved: list[list[FloatArray]]


def tracked(armature: bpy.types.Object, keyed: Collection[str]) -> list[str]:
    """The keyed bones a frame walk must read for ``bone_model``: each keyed bone whose parent is not keyed, and
    the nearest keyed bone above each of those."""
    bones = armature_data(armature).bones
    found: dict[str, None] = {}
    for name in keyed:
        parent = bones[name].parent
        if parent is not None and parent.name in keyed:
            continue
        found[name] = None
        above = _keyed_above(bones[name], keyed)
        if above is not None:
            found[above] = None
    return list(found)


def bone_model(
    armature: bpy.types.Object,
    keyed: Mapping[str, Sequence[Keyed]],
    read: Mapping[str, BoneRows],
    frames: int,
) -> BoneModel:
    """The keyed bones of ``armature`` posed for key reduction.

    Parameters
    ----------
    armature : bpy.types.Object
    keyed : mapping of str to sequence of Keyed
        Each keyed bone's keyed properties.
    read : mapping of str to BoneRows
        The frames a walk read of the bones ``tracked`` names (of others too, where their rest of the pose is
        not the identity).
    frames : int
        How many frames (rows).
    """
    bones = armature_data(armature).bones
    pose = armature.pose
    assert pose is not None
    names = sorted(keyed, key=_depths(bones, keyed).__getitem__)
    place = {name: k for k, name in enumerate(names)}
    parents, offsets, points, nodes, sources, solved = [], [], [], [], [], []
    still = _still_pose(frames)
    for name in names:
        bone = bones[name]
        above = _keyed_above(bone, place)
        offset: FloatArray
        if bone.parent is not None and bone.parent.name in place:
            offset = np.eye(4)
            offset[:3, :3], offset[:3, 3] = np.array(bone.matrix), hang(bone)
        else:
            hanging = read[name].hang_frames()
            if above is not None:  # the bones between the two are not keyed: they move with the one above
                offset = np.asarray(read[above].world_inverses() @ hanging, dtype=np.float64)
            else:
                offset = hanging
        parents.append(-1 if above is None else place[above])
        offsets.append(offset)
        points.append(bone_points(bone.length))
        channels, thinned, exact = _channels(pose.bones[name], keyed[name], read.get(name), frames, still)
        nodes.append(channels)
        solved.append(exact)
        sources += [(name, source) for source in thinned]
    skeleton = Skeleton(tuple(parents), tuple(offsets), tuple(points))
    return BoneModel(armature, tuple(names), skeleton, nodes, sources, solved)


def _depths(bones: bpy.types.ArmatureBones, names: Collection[str]) -> dict[str, int]:
    """How many bones each of ``names`` hangs below (and the bones above them), each bone's parent read once."""
    depth: dict[str, int] = {}
    for name in names:
        line: list[str] = []
        bone: bpy.types.Bone | None = bones[name]
        while bone is not None and bone.name not in depth:
            line.append(bone.name)
            bone = bone.parent
        start = -1 if bone is None else depth[bone.name]
        for up, above in enumerate(reversed(line), 1):
            depth[above] = start + up
    return depth


def _keyed_above(bone: bpy.types.Bone, keyed: Collection[str]) -> str | None:
    parent = bone.parent
    while parent is not None and parent.name not in keyed:
        parent = parent.parent
    return None if parent is None else parent.name


def _channels(
    pose_bone: bpy.types.PoseBone,
    keyed: Sequence[Keyed],
    read: BoneRows | None,
    frames: int,
    still: dict[str, FloatArray],
) -> tuple[list[Channels], list[Keyed], list[FloatArray]]:
    """A bone's location, rotation and scale: what its keyed properties play, the rest as read (the identity
    where nothing was read), and their values in the pose the keys stand for. A property that does not pose the
    bone (a rotation in another mode than the bone's, a connected bone's location) is left out, and its keys
    alone."""
    mode = pose_bone.rotation_mode
    posing = {"location", rotation_property(mode), "scale"}
    if pose_bone.bone.use_connect:
        posing.discard("location")
    by_prop = {source.prop: source for source in keyed if source.prop in posing}
    # A property keyed in every value plays its keys alone: what was read of it is not wanted.
    whole_keyed = {prop for prop, source in by_prop.items() if len(set(source.indices)) == still[prop].shape[1]}
    fixed = _read_pose(read, mode, frames, still, whole_keyed)
    channels, thinned, exact = [], [], []
    for prop, (kind, values) in fixed.items():
        source = by_prop.get(prop)
        if source is None:
            channels.append(Channels(kind, values, mode if kind == "rotation" else ""))
            exact.append(values)
            continue
        play = None if source.plays is None else _full(values, source)
        if play is None:
            whole = values.copy()
            whole[:, list(source.indices)] = source.values
        else:
            whole = play(source.values, np.arange(frames))
        channels.append(Channels(kind, whole, mode if kind == "rotation" else "", source.values, source.indices, play))
        if source.solved is source.values:  # the keys play as they are (an Action's)
            exact.append(whole)
        else:
            solved = values.copy()
            solved[:, list(source.indices)] = source.solved
            exact.append(solved)
        thinned.append(source)
    return channels, thinned, exact


def _full(fixed: FloatArray, source: Keyed) -> Callable[[FloatArray, NDArray[np.int64]], FloatArray]:
    """What a property plays, all its values: ``fixed`` but at the keyed indices, which play ``source``'s."""
    indices, plays = list(source.indices), source.plays
    assert plays is not None

    def play(keyed: FloatArray, rows: NDArray[np.int64]) -> FloatArray:
        values = fixed[rows]  # a copy: rows is an index array
        values[:, indices] = plays(keyed, rows)
        return np.asarray(values, dtype=np.float64)

    return play


def _still_pose(frames: int) -> dict[str, FloatArray]:
    """The rest pose's values of each property on every frame (shared: nothing writes to them)."""
    identity = {"rotation_quaternion": [1.0, 0.0, 0.0, 0.0], "rotation_axis_angle": [0.0, 0.0, 1.0, 0.0]}
    still = {prop: np.tile(np.array(values), (frames, 1)) for prop, values in identity.items()}
    return {
        "location": np.zeros((frames, 3)),
        "rotation_euler": np.zeros((frames, 3)),
        "scale": np.ones((frames, 3)),
        **still,
    }


def _read_pose(
    read: BoneRows | None, mode: str, frames: int, still: dict[str, FloatArray], unread: Collection[str] = ()
) -> dict[str, tuple[str, FloatArray]]:
    """A bone's location, rotation and scale on every frame as read (its ``matrix_basis``, taken apart: the
    rotation as a quaternion where its mode is another), or the rest pose's (``still``), as the properties
    ``unread`` are given too; by property."""
    rotation = rotation_property(mode)
    pose = {"location": ("location", still["location"]), rotation: ("rotation", still[rotation])}
    pose["scale"] = ("scale", still["scale"])
    if read is None or {"location", rotation, "scale"} <= set(unread):
        return pose
    basis = row_matrices(read.basis)
    if "location" not in unread:
        pose["location"] = ("location", np.ascontiguousarray(basis[:, :3, 3]))
    if {rotation, "scale"} <= set(unread):
        return pose
    scale = np.linalg.norm(basis[:, :3, :3], axis=1)
    if "scale" not in unread:
        pose["scale"] = ("scale", scale)
    if rotation not in unread:
        quaternions = matrix_to_quat(basis[:, :3, :3] / scale[:, None, :])
        pose[rotation] = ("rotation", quaternions if mode == "QUATERNION" else _in_mode(quaternions, mode))
    return pose


def _in_mode(quaternions: FloatArray, mode: str) -> FloatArray:
    """Rotations read as quaternions, in a bone's rotation mode (an Euler order or axis-angle)."""
    reference = np.zeros(4 if mode == "AXIS_ANGLE" else 3)
    return rotation_channels(quaternions, mode, reference)


def row_matrices(rows: NDArray[np.float32]) -> FloatArray:
    """Matrices (F, 4, 4) from rows (F, 16) filled column after column."""
    return np.asarray(np.swapaxes(rows.reshape(-1, 4, 4), -1, -2), dtype=np.float64)
