"""What the bake, the live preview, Solve Now and Step Through Iterations solve: a chain's settings checked
against the armature it names (``prepare_chain``), and the chains grouped into units (``units``), each one
chain alone or the chains of one armature that share bones, solved together as one tree (the paper's several
end effectors, Blender's tree IK). A unit turns what a frame walk read into each bone's rotation channels
(``Unit.solve``), in the root frame of its chain (or its tree's root chain), where the solver works.

A chain alone is solved with ``solver.solve_bones``: as points where nothing but the target matters (each bone
keyed with the twist it had, turned only as far as its segment needs), on its bones' rotations where limits,
a pole or stretch do, with its tip turned to the target's rotation on top.

A tree is the union of its chains' bones, rooted at its topmost bone; every tip pulls on the whole path from it
to that root, with its chain's weight (``solver.solve_tree_pose``). Each bone keeps its IK limits (a bone where
branches meet limits each branch's first bone as its parent); a chain's pole bends that chain's branch (its
bones below the last fork); with Stretch on a chain, that chain's bones stretch by their IK Stretch shares.
Where no chain of the tree has limits, a pole or stretch, each bone is keyed with the twist it had, as free
chains are. Target rotation (Rotation on a chain) in a tree is refused, naming the chain: a chain meets it by
solving the bones above its tip toward where the tip's head must be and then turning the tip, which in a tree
would leave out the branches that hang from the tip and the effectors the turned tip moves; bake it apart.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cached_property, partial

import bpy
import numpy as np
from numpy.typing import NDArray

from ...setting_names import named
from ...settings import ChainSettings, SolverSettings
from ...solver import (
    FloatArray,
    JointLimits,
    TreeRest,
    inherited_stretch,
    needs_pose_solve,
    solve_bones,
    solve_tree_pose,
    solver_tree,
    tree_inherited_stretch,
    tree_local_rotations,
)
from ..rig import ArmatureChain, bone_channels, read_chain, read_tree
from .checks import (
    check_armature,
    check_chain_bones,
    check_fabrik,
    check_goals,
    check_soft_reach,
    check_stretch_inheritance,
)
from .conflicts import check_chain_alone, check_goal_independent
from .inputs import ChainFrame, Inputs, Motion, chain_frame


@dataclass(frozen=True)
class PreparedChain:
    """A chain whose settings passed every check: ready to read and solve.

    Attributes
    ----------
    chain : ArmatureChain
    target : bpy.types.Object or None
        None for a chain whose goal is its own tip as animated (``prepare_chain``'s ``tip_as_goal``), which
        a bake that changes that goal (planting feet) reads.
    pole_target : bpy.types.Object or None
    settings : ChainSettings
        As given (``pole_angle``, ``use_stretch``...).
    """

    chain: ArmatureChain
    target: bpy.types.Object | None
    pole_target: bpy.types.Object | None
    settings: ChainSettings[bpy.types.Object]

    @property
    def target_bone(self) -> str:
        return self.settings.target_bone

    @property
    def pole_bone(self) -> str:
        return self.settings.pole_bone

    @property
    def use_rotation(self) -> bool:
        return self.settings.use_rotation

    @property
    def label(self) -> str:
        """The chain as errors name it: ``armature/tip bone``."""
        return f"{self.chain.armature.name}/{self.chain.bone_names[-1]}"

    @property
    def solves_pose(self) -> bool:
        """Whether the chain is solved on its bones' rotations (``solve_pose``) rather than as points: it has IK
        limits, a pole target, or stretch that some bone takes a share of."""
        return needs_pose_solve(self.chain.limits, self.pole_target, self.settings.use_stretch)

    def root_frame(self, inputs: Inputs, frames: NDArray[np.int64], tolerance: float) -> ChainFrame:
        """The chain's inputs in its root frame, checked (``inputs.chain_frame``)."""
        return chain_frame(self.chain, self.settings.use_stretch, inputs, frames, tolerance)


def prepare_chain(
    settings: ChainSettings[bpy.types.Object],
    solver: SolverSettings,
    replaced: Collection[tuple[str, str]] = (),
    *,
    tip_as_goal: bool = False,
) -> PreparedChain:
    """Read the chain that ``settings`` name and check everything the bake needs of it and its goals (but for
    the IK constraints ``replaced``, (bone, constraint) of its armature that the bake replaces). With
    ``tip_as_goal`` the settings name no target nor pole: the goal is the chain's own tip as animated.

    Raises
    ------
    TypeError, ValueError
        Naming the problem: not an armature, a target that is no object or is not evaluated, a missing bone,
        a chain bone whose constraints would override the keys, a goal that moves with the chain, stretch
        without full scale inheritance, a method that cannot honour the chain's limits, pole or stretch.
    """
    armature = check_armature(settings.armature)
    if tip_as_goal:
        assert settings.target is None, "the goal is the tip as animated"
        assert settings.pole_target is None, "the goal is the tip as animated"
        target, pole = None, None
    else:
        target, pole = check_goals(settings, armature)
    chain = read_chain(armature, settings.tip_bone, settings.chain_length)
    check_chain_bones(chain)
    check_soft_reach(settings, chain)
    check_chain_alone(chain, settings.use_stretch, replaced)
    if target is not None:
        check_goal_independent(target, chain, "target", settings.target_bone)
    if pole is not None:
        check_goal_independent(pole, chain, "pole target", settings.pole_bone)
    if settings.use_stretch:
        check_stretch_inheritance(armature, chain.bone_names[1:], "chain's")
    prepared = PreparedChain(chain, target, pole, settings)
    if prepared.solves_pose:
        check_fabrik(
            solver.method, "the chain has " + ("IK limits" if chain.limits.any else "a pole target or stretch")
        )
    return prepared


@dataclass(frozen=True)
class Solved:
    """A solved unit as the keys to write.

    Attributes
    ----------
    pose_bones : list of bpy.types.PoseBone
        The bones to key.
    channels : list of ndarray, shape (F, 3) or (F, 4)
        Per bone, its rotation channel values in its own rotation mode.
    y_scales : ndarray, shape (F, bones), or None
        Y scales to key, with stretch.
    iterations, reached : list of ndarray, shape (F,)
        Per chain of the unit: solver iterations, and whether the solver brought its tip within tolerance.
    motion_of : callable
        Makes ``motion``, only when a chain hangs below the unit.
    """

    pose_bones: list[bpy.types.PoseBone]
    channels: list[FloatArray]
    y_scales: FloatArray | None
    iterations: list[NDArray[np.int64]]
    reached: list[NDArray[np.bool_]]
    motion_of: Callable[[], Motion]

    @cached_property
    def motion(self) -> Motion:
        """How the unit moves its bones, and so what hangs below them (``order``)."""
        return self.motion_of()


@dataclass(frozen=True)
class _Tree:
    """The tree that chains sharing bones make.

    Attributes
    ----------
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


@dataclass(frozen=True)
class Unit:
    """Chains solved together: one chain alone, or chains of one armature that share bones, as one tree.

    Attributes
    ----------
    members : tuple of int
        The chains' places in the list they were grouped from (``units``).
    chains : tuple of PreparedChain
    """

    members: tuple[int, ...]
    chains: tuple[PreparedChain, ...]
    _tree: _Tree | None = None

    @classmethod
    def of(cls, chains: Sequence[PreparedChain], members: Sequence[int], solver: SolverSettings) -> Unit:
        """The unit of the chains at ``members``: the one chain, or the tree they make.

        Raises
        ------
        ValueError
            For a tree that a chain turns to its target's rotation, a method other than FABRIK, or stretch
            where a bone does not inherit its parent's scale fully.
        """
        picked = tuple(chains[i] for i in members)
        return cls(tuple(members), picked, _tree_of(picked, solver) if len(picked) > 1 else None)

    @property
    def is_tree(self) -> bool:
        return self._tree is not None

    @property
    def armature(self) -> bpy.types.Object:
        return self.chains[0].chain.armature

    @property
    def pose_bones(self) -> list[bpy.types.PoseBone]:
        """The bones the unit keys (each once)."""
        if self._tree is None:
            return self.chains[0].chain.pose_bones
        pose = self.armature.pose
        assert pose is not None
        return [pose.bones[name] for name in self._tree.bone_names]

    @property
    def bone_names(self) -> tuple[str, ...]:
        """The bones the unit turns (each once)."""
        return self.chains[0].chain.bone_names if self._tree is None else self._tree.bone_names

    @property
    def stretch(self) -> bool:
        """Whether the unit may key its bones' Y scales: some chain of it has Stretch on."""
        return any(prepared.settings.use_stretch for prepared in self.chains)

    def solve(self, inputs: Sequence[Inputs], frames: NDArray[np.int64], solver: SolverSettings) -> Solved:
        """Solve the unit's chains on ``frames`` from what was read of each (``inputs``, in ``chains``' order)
        and turn the result into each bone's rotation channel values.

        Raises
        ------
        ValueError
            As ``inputs.chain_frame``, for any chain of the unit.
        """
        if self._tree is None:
            return _solve_chain(self.chains[0], inputs[0], frames, solver)
        return _solve_tree(self._tree, self.chains, inputs, frames, solver)


def _solve_chain(prepared: PreparedChain, inputs: Inputs, frames: NDArray[np.int64], solver: SolverSettings) -> Solved:
    """Solve a chain alone in its root frame (``solve_bones``)."""
    chain = prepared.chain
    root = prepared.root_frame(inputs, frames, solver.tolerance)
    orientations = None
    if prepared.use_rotation:
        assert inputs.target_rotations is not None, "read with the goal's orientation"
        orientations = root.orientations(inputs.target_rotations)
    solution = solve_bones(
        chain.rest,
        root.rotations,
        root.points(inputs.targets),
        limits=chain.limits,
        poles=None if inputs.poles is None else root.points(inputs.poles),
        pole_angle=prepared.settings.pole_angle,
        stretch=prepared.settings.use_stretch,
        orientations=orientations,
        orientation_weight=prepared.settings.rotation_weight,
        tolerance=root.tolerance,
        max_iterations=solver.max_iterations,
        method=solver.method,
        warm_start=solver.warm_start,
        soft_reach=prepared.settings.soft_reach / float(root.scale.max()),
    )
    rotations, y_scales = solution.rotations, None
    if solution.scales is not None:
        rotations, y_scales = inherited_stretch(chain.rest, rotations, solution.scales)
    pose_bones = chain.pose_bones
    channels = bone_channels(rotations, [pb.rotation_mode for pb in pose_bones], inputs.first_channels)
    reached = [solution.error <= root.tolerance]
    motion = partial(Motion.of_chain, root, chain.rest, chain.bone_names, solution.rotations)
    return Solved(pose_bones, channels, y_scales, [solution.iterations], reached, motion)


def _tree_of(chains: Sequence[PreparedChain], solver: SolverSettings) -> _Tree:
    """The tree that chains sharing bones (of one armature) make, checked."""
    for prepared in chains:
        if prepared.use_rotation:
            raise ValueError(
                f"the chains {', '.join(c.label for c in chains)} share bones and are solved as one tree, which "
                f"does not turn a tip to its target's rotation: {prepared.label} has {named('use_rotation')} on; "
                "bake it apart, or without it"
            )
    check_fabrik(solver.method, f"the chains {', '.join(c.label for c in chains)} share bones: one tree")
    armature = chains[0].chain.armature
    names, rest, limits = read_tree(armature, [name for c in chains for name in c.chain.bone_names])
    root = next(k for k, prepared in enumerate(chains) if prepared.chain.bone_names[0] == names[0])
    stretching = {name for prepared in chains if prepared.settings.use_stretch for name in prepared.chain.bone_names}
    shares = np.where([name in stretching for name in names], limits.stretch, 0.0)
    limits = JointLimits(limits.lock, limits.use_limit, limits.minimum, limits.maximum, shares)
    if shares.any():
        check_stretch_inheritance(armature, names[1:], "tree's")
    index = {name: k for k, name in enumerate(names)}
    tips = [index[c.chain.bone_names[-1]] for c in chains]
    return _Tree(names, rest, tips, root, limits)


def _solve_tree(
    tree: _Tree,
    chains: Sequence[PreparedChain],
    inputs: Sequence[Inputs],
    frames: NDArray[np.int64],
    solver: SolverSettings,
) -> Solved:
    """Solve a tree in its root's frame (``solve_tree_pose``)."""
    frames_of = [c.root_frame(i, frames, solver.tolerance) for c, i in zip(chains, inputs, strict=True)]
    root = frames_of[tree.root_chain]
    targets = np.stack([root.points(i.targets) for i in inputs], axis=1)  # (F, E, 3)
    start = _union(tree, chains, [f.rotations for f in frames_of])
    first = {
        n: v
        for c, i in zip(chains, inputs, strict=True)
        for n, v in zip(c.chain.bone_names, i.first_channels, strict=True)
    }
    poles = [None if i.poles is None else root.points(i.poles) for i in inputs]
    solution = solve_tree_pose(
        tree.rest,
        start,
        tree.tips,
        targets,
        weights=[c.settings.weight for c in chains],
        limits=tree.limits,
        poles=poles,
        pole_angles=[c.settings.pole_angle for c in chains],
        stretch=tree.stretch,
        tolerance=min(f.tolerance for f in frames_of),
        max_iterations=solver.max_iterations,
        soft_reach=[c.settings.soft_reach / float(root.scale.max()) for c in chains],
    )
    if tree.stretch:
        rotations, y_scales = tree_inherited_stretch(tree.rest, solution.rotations, solution.scales)
    elif any(c.solves_pose for c in chains):
        rotations, y_scales = solution.rotations, None
    else:  # each bone turned from the twist it had only as far as its solved head, tail and children's heads need
        joints = solver_tree(tree.rest, start[0], tree.tips)
        solved = np.empty((len(solution.heads), len(joints.points), 3))
        solved[:, joints.head] = solution.heads
        solved[:, joints.tail[tree.tips]] = solution.ends
        rotations, y_scales = tree_local_rotations(tree.rest, joints, solved, start), None
    pose = chains[0].chain.armature.pose
    assert pose is not None
    pose_bones = [pose.bones[name] for name in tree.bone_names]
    channels = bone_channels(rotations, [b.rotation_mode for b in pose_bones], [first[b.name] for b in pose_bones])
    iterations = [solution.iterations for _ in chains]
    reached = [solution.reached[:, e] for e in range(len(chains))]
    motion = partial(Motion.of_tree, root, tree.rest, tree.bone_names, start, solution.rotations)
    return Solved(pose_bones, channels, y_scales, iterations, reached, motion)


def _union(tree: _Tree, chains: Sequence[PreparedChain], per_chain: list[FloatArray]) -> FloatArray:
    """Each chain's bones' rotations, (F or 1, m, 4) each, gathered into the tree's bones, (F or 1, b, 4)."""
    frames = max(len(rows) for rows in per_chain)
    gathered = np.empty((frames, len(tree.bone_names), 4))
    index = {name: k for k, name in enumerate(tree.bone_names)}
    for prepared, rows in zip(chains, per_chain, strict=True):
        for k, name in enumerate(prepared.chain.bone_names):
            gathered[:, index[name]] = rows[:, k]
    return gathered
