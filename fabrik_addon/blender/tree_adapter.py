"""Chains that share bones, solved together as one tree (the paper's several end effectors, Blender's tree IK):
their bones read as a ``TreeRest``, their targets set in the tree root's frame, the tree solved with
``solve_tree``, and the solved joints turned back into each bone's rotation channels.

The tree is the union of the chains' bones, rooted at its topmost bone; every tip pulls on the whole path
from it to that root, with its chain's weight. The tree solver moves free bones: chains in a tree with IK
limits, a pole, stretch or target rotation are refused for now, naming the chain.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ..settings import SolverSettings
from ..solver import FloatArray, solve_tree
from ..solver.tree_pose import TreeRest, solver_tree, tree_local_rotations
from .adapter import PreparedChain, Solved, chain_frame
from .chain import armature_data, hang
from .channels import rotation_channels
from .sampling import Inputs


@dataclass(frozen=True)
class PreparedTree:
    """Chains of one armature that share bones, ready to solve as one tree.

    Attributes
    ----------
    chains : list of PreparedChain
    bone_names : tuple of str
        Every bone of the chains, each once, parents before children; the tree's root bone first.
    rest : TreeRest
    tips : list of int
        Each chain's tip bone, as an index into ``bone_names``.
    root_chain : int
        A chain whose first bone is the tree's root: its root frame is the tree's.
    """

    chains: list[PreparedChain]
    bone_names: tuple[str, ...]
    rest: TreeRest
    tips: list[int]
    root_chain: int

    @property
    def pose_bones(self) -> list[bpy.types.PoseBone]:
        pose = self.chains[0].chain.armature.pose
        assert pose is not None
        return [pose.bones[name] for name in self.bone_names]


def label(prepared: PreparedChain) -> str:
    """A chain as errors name it: ``armature/tip bone``."""
    return f"{prepared.chain.armature.name}/{prepared.chain.bone_names[-1]}"


def shared_groups(prepared: list[PreparedChain]) -> list[list[int]]:
    """The chains grouped by the bones they share (on one armature): each group is solved as one (a tree)."""
    group = list(range(len(prepared)))

    def top(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    owner: dict[tuple[bpy.types.Object, str], int] = {}
    for i, chain in enumerate(prepared):
        for name in chain.chain.bone_names:
            other = owner.setdefault((chain.chain.armature, name), i)
            group[top(i)] = top(other)
    units: dict[int, list[int]] = {}
    for i in range(len(prepared)):
        units.setdefault(top(i), []).append(i)
    return list(units.values())


def prepare_tree(chains: list[PreparedChain], solver: SolverSettings) -> PreparedTree:
    """The tree that chains sharing bones (of one armature) make.

    Raises
    ------
    ValueError
        If a chain of the tree has what the tree solver does not honour yet, or the method is not FABRIK.
    """
    for prepared in chains:
        why = "IK limits" if prepared.chain.limits.any else "a pole, stretch or target rotation"
        if prepared.solves_pose or prepared.use_rotation:
            raise ValueError(
                f"the chains {', '.join(label(c) for c in chains)} share bones and are solved as one tree, which "
                f"does not honour {why} yet: {label(prepared)} has them; bake it apart, or without them"
            )
    if solver.method != "fabrik":
        raise ValueError(f"chains that share bones are solved as one tree with FABRIK, not {solver.method!r}")
    bones = armature_data(chains[0].chain.armature).bones
    names = list(dict.fromkeys(name for prepared in chains for name in prepared.chain.bone_names))
    depth = {name: len(bones[name].parent_recursive) for name in names}
    names.sort(key=lambda name: depth[name])
    index = {name: k for k, name in enumerate(names)}
    parents = np.array([-1, *(index[_parent(bones[name])] for name in names[1:])], dtype=np.int64)
    rest_rotations = np.array([np.eye(3), *(np.array(bones[name].matrix) for name in names[1:])])
    heads = np.array([np.zeros(3), *(hang(bones[name]) for name in names[1:])])
    rest = TreeRest(parents, rest_rotations, heads, np.array([bones[name].length for name in names]))
    root = next(k for k, prepared in enumerate(chains) if prepared.chain.bone_names[0] == names[0])
    return PreparedTree(chains, tuple(names), rest, [index[c.chain.bone_names[-1]] for c in chains], root)


def _parent(bone: bpy.types.Bone) -> str:
    parent = bone.parent
    assert parent is not None, "only the tree's root bone has no parent in it"
    return parent.name


def solve_tree_unit(
    tree: PreparedTree, inputs: list[Inputs], frames: NDArray[np.int64], solver: SolverSettings
) -> Solved:
    """Solve the tree in its root's frame (each chain's inputs ``inputs``, in ``tree.chains``' order) and turn
    the result into each bone's rotation channel values.

    Raises
    ------
    ValueError
        As ``adapter.chain_frame``, for any chain of the tree.
    """
    frames_of = [chain_frame(c, i, frames, solver.tolerance) for c, i in zip(tree.chains, inputs, strict=True)]
    root = frames_of[tree.root_chain]
    targets = np.stack([root.points(i.targets) for i in inputs], axis=1)  # (F, E, 3)
    start = _union(tree, [f.rotations for f in frames_of])
    first = {
        n: v
        for c, i in zip(tree.chains, inputs, strict=True)
        for n, v in zip(c.chain.bone_names, i.first_channels, strict=True)
    }
    joints = solver_tree(tree.rest, start[0], tree.tips)
    solution = solve_tree(
        joints.tree,
        joints.tail[tree.tips],
        targets,
        weights=[c.settings.weight for c in tree.chains],
        tolerance=min(f.tolerance for f in frames_of),
        max_iterations=solver.max_iterations,
        warm_start=solver.warm_start,
    )
    rotations = tree_local_rotations(tree.rest, joints, solution.joints, start)
    pose_bones = tree.pose_bones
    channels = [
        rotation_channels(rotations[:, k], bone.rotation_mode, first[bone.name]) for k, bone in enumerate(pose_bones)
    ]
    iterations = [solution.iterations for _ in tree.chains]
    return Solved(pose_bones, channels, None, iterations, [solution.reached[:, e] for e in range(len(tree.chains))])


def _union(tree: PreparedTree, per_chain: list[FloatArray]) -> FloatArray:
    """Each chain's bones' rotations, (F or 1, m, 4) each, gathered into the tree's bones, (F or 1, b, 4)."""
    frames = max(len(rows) for rows in per_chain)
    gathered = np.empty((frames, len(tree.bone_names), 4))
    index = {name: k for k, name in enumerate(tree.bone_names)}
    for prepared, rows in zip(tree.chains, per_chain, strict=True):
        for k, name in enumerate(prepared.chain.bone_names):
            gathered[:, index[name]] = rows[:, k]
    return gathered
