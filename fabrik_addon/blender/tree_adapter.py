"""Chains that share bones, solved together as one tree (the paper's several end effectors, Blender's tree IK):
their bones read as a ``TreeRest`` with their IK limits, their targets and poles set in the tree root's frame,
the tree solved with ``solve_tree_pose``, and the solved rotations turned into each bone's rotation channels.

The tree is the union of the chains' bones, rooted at its topmost bone; every tip pulls on the whole path
from it to that root, with its chain's weight. Each bone keeps its IK limits (a bone where branches meet
limits each branch's first bone as its parent); a chain's pole bends that chain's branch (its bones below the
last fork, see ``solver._tree_pose_solve``); with Stretch on a chain, that chain's bones stretch by their IK
Stretch shares. Where no chain of the tree has limits, a pole or stretch, each bone is keyed with the twist it
had, turned only as far as its solved position needs (as free chains are).

Target rotation (Rotation on a chain) in a tree is refused, naming the chain: a chain meets it by solving the
bones above its tip toward where the tip's head must be and then turning the tip, which in a tree would leave
out the branches that hang from the tip and the effectors the turned tip moves, and its weight below 1 needs
a solve without it first; bake such a chain apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ..settings import SolverSettings
from ..solver import (
    FloatArray,
    JointLimits,
    TreePoseSolution,
    TreeRest,
    solve_tree_pose,
    solver_tree,
    tree_inherited_stretch,
    tree_local_rotations,
)
from .adapter import PreparedChain, Solved, chain_frame
from .chain import armature_data, hang, read_limits
from .channels import bone_channels
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
    limits : JointLimits
        Each bone's IK limits; its stretch share only where a chain with Stretch on has it.
    """

    chains: list[PreparedChain]
    bone_names: tuple[str, ...]
    rest: TreeRest
    tips: list[int]
    root_chain: int
    limits: JointLimits

    @property
    def stretch(self) -> bool:
        """Whether some bone of the tree stretches: a chain with Stretch on has a bone with an IK Stretch share
        (Blender's IK constraints have Stretch on by default, their bones no share)."""
        return bool(self.limits.stretch.any())

    @property
    def solves_pose(self) -> bool:
        """Whether some chain has limits, a pole or stretch: else every bone keeps the twist it had."""
        return any(prepared.solves_pose for prepared in self.chains)

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
        If a chain of the tree turns its tip to the target's rotation, the method is not FABRIK, or a bone
        that would stretch with its parent does not inherit its scale fully.
    """
    for prepared in chains:
        if prepared.use_rotation:
            raise ValueError(
                f"the chains {', '.join(label(c) for c in chains)} share bones and are solved as one tree, which "
                f"does not turn a tip to its target's rotation: {label(prepared)} has Rotation on; bake it apart, "
                "or without it"
            )
    if solver.method != "fabrik":
        raise ValueError(f"chains that share bones are solved as one tree with FABRIK, not {solver.method!r}")
    armature = chains[0].chain.armature
    bones = armature_data(armature).bones
    names = list(dict.fromkeys(name for prepared in chains for name in prepared.chain.bone_names))
    depth = {name: len(bones[name].parent_recursive) for name in names}
    names.sort(key=lambda name: depth[name])
    index = {name: k for k, name in enumerate(names)}
    parents = np.array([-1, *(index[_parent(bones[name])] for name in names[1:])], dtype=np.int64)
    rest_rotations = np.array([np.eye(3), *(np.array(bones[name].matrix) for name in names[1:])])
    heads = np.array([np.zeros(3), *(hang(bones[name]) for name in names[1:])])
    rest = TreeRest(parents, rest_rotations, heads, np.array([bones[name].length for name in names]))
    root = next(k for k, prepared in enumerate(chains) if prepared.chain.bone_names[0] == names[0])
    pose = armature.pose
    assert pose is not None
    limits = read_limits([pose.bones[name] for name in names])
    stretching = {name for prepared in chains if prepared.settings.use_stretch for name in prepared.chain.bone_names}
    shares = np.where([name in stretching for name in names], limits.stretch, 0.0)
    limits = JointLimits(limits.lock, limits.use_limit, limits.minimum, limits.maximum, shares)
    if shares.any():
        for name in names[1:]:
            if bones[name].inherit_scale != "FULL":
                raise ValueError(
                    f"use_stretch needs the tree's bones to inherit their parent's scale fully: bone '{name}' has "
                    f"Inherit Scale '{bones[name].inherit_scale}' (set it to Full)"
                )
    tips = [index[c.chain.bone_names[-1]] for c in chains]
    return PreparedTree(chains, tuple(names), rest, tips, root, limits)


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
    poles = [None if i.poles is None else root.points(i.poles) for i in inputs]
    solution = solve_tree_pose(
        tree.rest,
        start,
        tree.tips,
        targets,
        weights=[c.settings.weight for c in tree.chains],
        limits=tree.limits,
        poles=poles,
        pole_angles=[c.settings.pole_angle for c in tree.chains],
        stretch=tree.stretch,
        tolerance=min(f.tolerance for f in frames_of),
        max_iterations=solver.max_iterations,
    )
    rotations, y_scales = _keyed(tree, solution, start)
    pose_bones = tree.pose_bones
    channels = bone_channels(
        rotations, [bone.rotation_mode for bone in pose_bones], [first[b.name] for b in pose_bones]
    )
    iterations = [solution.iterations for _ in tree.chains]
    return Solved(pose_bones, channels, y_scales, iterations, [solution.reached[:, e] for e in range(len(tree.chains))])


def _keyed(tree: PreparedTree, solution: TreePoseSolution, start: FloatArray) -> tuple[FloatArray, FloatArray | None]:
    """The rotations (F, b, 4) and Y scales (F, b) (None without stretch) to key: with stretch, as the bones'
    children inherit their scale; in a tree without limits, a pole or stretch, each bone turned from the twist
    ``start`` (F or 1, b, 4) had only as far as its solved head, tail and children's heads need (the solver
    turns bones about every axis)."""
    if tree.stretch:
        return tree_inherited_stretch(tree.rest, solution.rotations, solution.scales)
    if tree.solves_pose:
        return solution.rotations, None
    joints = solver_tree(tree.rest, start[0], tree.tips)
    solved = np.empty((len(solution.heads), joints.tree.size, 3))
    solved[:, joints.head] = solution.heads
    solved[:, joints.tail[tree.tips]] = solution.ends
    return tree_local_rotations(tree.rest, joints, solved, start), None


def _union(tree: PreparedTree, per_chain: list[FloatArray]) -> FloatArray:
    """Each chain's bones' rotations, (F or 1, m, 4) each, gathered into the tree's bones, (F or 1, b, 4)."""
    frames = max(len(rows) for rows in per_chain)
    gathered = np.empty((frames, len(tree.bone_names), 4))
    index = {name: k for k, name in enumerate(tree.bone_names)}
    for prepared, rows in zip(tree.chains, per_chain, strict=True):
        for k, name in enumerate(prepared.chain.bone_names):
            gathered[:, index[name]] = rows[:, k]
    return gathered
