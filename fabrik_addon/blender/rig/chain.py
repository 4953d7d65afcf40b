"""A chain of bones as the add-on reads it from an armature: its bones' names, rest geometry and IK limits; and
which chains share bones (they are solved together, as one tree). What a bake refuses of a chain is checked
by ``bake.checks``."""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import bpy
import numpy as np

from ...setting_names import named
from ...solver import ChainRest, FloatArray, JointLimits, TreeRest

#: A child's head this close to its parent's head (a fraction of the parent's length) is on it: float32
#: rounding of a head stored from the parent's tail, for a joint the file puts there.
_ON_THE_HEAD = 1e-6


@dataclass(frozen=True)
class ArmatureChain:
    """A chain of pose bones, root first, as the bake needs it.

    Attributes
    ----------
    armature : bpy.types.Object
    bone_names : tuple of str
        From the chain's root bone to its tip bone.
    rest : ChainRest
        Rest geometry in the root bone's rest frame.
    limits : JointLimits
        Each bone's IK limits and stretch share, as set in its Bone Properties (Inverse Kinematics).
    """

    armature: bpy.types.Object
    bone_names: tuple[str, ...]
    rest: ChainRest
    limits: JointLimits

    @property
    def pose_bones(self) -> list[bpy.types.PoseBone]:
        pose = self.armature.pose
        assert pose is not None
        return [pose.bones[name] for name in self.bone_names]


def bone_path(name: str) -> str:
    """The data path of the pose bone ``name`` from its armature object: ``pose.bones["name"]``."""
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"]'


def armature_data(armature: object) -> bpy.types.Armature:
    """The Armature data of an armature Object, or a TypeError naming what was given."""
    if not isinstance(armature, bpy.types.Object):
        raise TypeError(f"armature must be a Blender Object, got {type(armature).__name__}")
    if armature.type != "ARMATURE" or not isinstance(armature.data, bpy.types.Armature):
        raise TypeError(f"'{armature.name}' is not an armature (it is {object_kind(armature)})")
    return armature.data


def object_kind(obj: bpy.types.Object) -> str:
    """What ``obj`` is, in words: ``"an empty object"``, ``"a mesh object"``."""
    kind = obj.type.lower().replace("_", " ")
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} object"


def chain_bone_names(armature: bpy.types.Object, tip_bone: str, chain_length: int) -> tuple[str, ...]:
    """Bone names from the chain's root to ``tip_bone``: ``chain_length`` bones counted up through the
    parents as Blender's IK constraint counts them, 0 meaning up to the root bone."""
    bones = armature_data(armature).bones
    if not isinstance(tip_bone, str) or tip_bone not in bones:
        close = difflib.get_close_matches(str(tip_bone), bones.keys(), n=3)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"armature '{armature.name}' has no bone {tip_bone!r}{hint}")
    if isinstance(chain_length, bool) or int(chain_length) != chain_length or chain_length < 0:
        raise ValueError(
            f"{named('chain_length')} must be an integer >= 0 (0 = up to the root bone), got {chain_length!r}"
        )
    names: list[str] = []
    bone: bpy.types.Bone | None = bones[tip_bone]
    while bone is not None and (chain_length == 0 or len(names) < chain_length):
        names.append(bone.name)
        bone = bone.parent
    if chain_length > len(names):
        raise ValueError(
            f"{named('chain_length')} {chain_length} is longer than the chain from '{tip_bone}' up to its root bone "
            f"'{names[-1]}' ({len(names)} bones): set it to {len(names)} or less (0: up to the root)"
        )
    return tuple(reversed(names))


def read_chain(armature: bpy.types.Object, tip_bone: str, chain_length: int) -> ArmatureChain:
    """The chain ending at ``tip_bone`` (see ``chain_bone_names``), read as it is: ``bake.checks`` says what
    a bake cannot honour of it.

    Raises
    ------
    TypeError
        ``armature`` is not an armature Object.
    ValueError
        A missing bone, or a chain longer than the armature's.
    """
    names = chain_bone_names(armature, tip_bone, chain_length)
    bones = armature_data(armature).bones
    chain = [bones[name] for name in names]
    # Blender poses each bone under its parent with the parent-relative data it stores: the bone's rest
    # rotation ``bone.matrix`` and its head relative to its parent's tail. Those are read here as they are,
    # not derived from the armature-space matrices: Blender's float32 bone matrices are slightly sheared
    # (by a few 1e-6 where a bone points nearly opposite its parent, as a thigh under the spine), and taking
    # a transpose of one as its inverse would put the chain a few 1e-6 away from where Blender poses it.
    rest_rotations = np.array([np.eye(3)] + [np.array(bone.matrix) for bone in chain[1:]])
    # From each bone's head to the next joint, in the bone's rest frame: its child's head, or its tail.
    offsets = np.array([*(hang(child) for child in chain[1:]), (0.0, chain[-1].length, 0.0)])
    pose = armature.pose
    assert pose is not None
    return ArmatureChain(
        armature=armature,
        bone_names=names,
        rest=ChainRest(rest_rotations, offsets),
        limits=read_limits([pose.bones[name] for name in names]),
    )


def hang(bone: bpy.types.Bone) -> FloatArray:
    """Where a bone's head is from its parent's head, in the parent's rest frame: along Y by the parent's
    length to its tail, then on by the bone's own head (which Blender stores from the parent's tail). A head
    on the parent's head (as BVH skeletons put several joints) is exactly zero, not a float32 rounding off it:
    the solver then knows the parent carries nothing there."""
    parent = bone.parent
    assert parent is not None
    offset: FloatArray = np.array(bone.head, dtype=np.float64) + np.array([0.0, parent.length, 0.0])
    if np.linalg.norm(offset) <= _ON_THE_HEAD * parent.length:
        return np.zeros(3)
    return offset


def read_limits(pose_bones: list[bpy.types.PoseBone]) -> JointLimits:
    """The IK limits of pose bones, as Blender's IK solver reads them (Bone Properties, Inverse Kinematics)."""
    return JointLimits(
        lock=np.array([[pb.lock_ik_x, pb.lock_ik_y, pb.lock_ik_z] for pb in pose_bones], dtype=bool),
        use_limit=np.array(
            [[pb.use_ik_limit_x, pb.use_ik_limit_y, pb.use_ik_limit_z] for pb in pose_bones], dtype=bool
        ),
        minimum=np.array([[pb.ik_min_x, pb.ik_min_y, pb.ik_min_z] for pb in pose_bones], dtype=np.float64),
        maximum=np.array([[pb.ik_max_x, pb.ik_max_y, pb.ik_max_z] for pb in pose_bones], dtype=np.float64),
        stretch=np.array([pb.ik_stretch for pb in pose_bones], dtype=np.float64),
    )


def read_tree(armature: bpy.types.Object, bone_names: Iterable[str]) -> tuple[tuple[str, ...], TreeRest, JointLimits]:
    """Bones of ``armature`` that make one tree (the bones of chains that share bones; each name once or more)
    as the solver takes them: their names, parents before children and the tree's root bone first; the tree's
    rest geometry, in its root bone's rest frame; and the bones' IK limits."""
    bones = armature_data(armature).bones
    names = list(dict.fromkeys(bone_names))
    depth = {name: len(bones[name].parent_recursive) for name in names}
    names.sort(key=lambda name: depth[name])
    index = {name: k for k, name in enumerate(names)}
    parents = np.array([-1, *(index[_parent(bones[name])] for name in names[1:])], dtype=np.int64)
    rest_rotations = np.array([np.eye(3), *(np.array(bones[name].matrix) for name in names[1:])])
    heads = np.array([np.zeros(3), *(hang(bones[name]) for name in names[1:])])
    rest = TreeRest(parents, rest_rotations, heads, np.array([bones[name].length for name in names]))
    pose = armature.pose
    assert pose is not None
    return tuple(names), rest, read_limits([pose.bones[name] for name in names])


def _parent(bone: bpy.types.Bone) -> str:
    parent = bone.parent
    assert parent is not None, "only the tree's root bone has no parent in it"
    return parent.name


def groups_sharing(members: Sequence[Iterable[Hashable]]) -> list[list[int]]:
    """Group the items whose ``members`` overlap, directly or through others: the chains that share bones (by
    (armature, bone name), or by name on one armature) and so are solved together. Groups are listed by their
    first item, each in the items' order."""
    group = list(range(len(members)))

    def top(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    owner: dict[Hashable, int] = {}
    for i, keys in enumerate(members):
        for key in keys:
            other = owner.setdefault(key, i)
            group[top(i)] = top(other)
    groups: dict[int, list[int]] = {}
    for i in range(len(members)):
        groups.setdefault(top(i), []).append(i)
    return list(groups.values())
