"""FABRIK on a tree of bones: Blender's per-bone IK limits, a pole per effector and stretch, solved on the
bones' rotations with several end effectors (``chain_solve`` does it for a chain, and this follows it; the
attempts both make are ``solver``'s).

Each attempt runs one iteration of the tree's FABRIK (``tree_steps``: the paper's sub-base algorithm,
carrying each bone's orientation and keeping its limits), then damped least squares on every effector at
once, which finishes in a few steps where FABRIK creeps (on a Y of 16 bones from its rest pose FABRIK needs
about 30 iterations, one of FABRIK and three of least squares do); frames still short get both again, then
retries from a bent pose and from random poses within the limits, each branch turned toward its goal.

Limits at a sub-base (a fork) apply to every branch leaving it: each branch's first bone is clamped to its own
limits relative to the bone it leaves, as every bone is relative to its parent. A pose is only ever built
from clamped local rotations, so none the solver returns breaks a limit.

A pole belongs to one effector and bends that effector's *branch* (see ``tree_layout``: the bones from below
the sub-base it leaves, or the tree's root, to its tip), as Blender's IK constraint bends a chain toward its
pole: before solving, the branch is turned about its first bone's head so that the plane through that head,
the branch's tip and its first bone's "up" axis (X turned toward Z by the pole angle) becomes the plane
through that head, the goal and the pole; after solving, a branch that carries no other effector is turned
about the line from its first head to its tip to where its first bone is nearest that turned start. (For a
chain, a tree of one branch, this is ``solve_pose``'s pole.) Blender's tree IK keeps one pole per tree, the
last constraint's, and turns the whole tree's root with it; here every effector's pole bends its own branch.

Stretch lengthens bones by their IK Stretch shares: each round grows every bone by its share times the
weighted mean, over the effectors it moves, of each one's miss over the stretchable length of its path, and
solves again (for a chain, ``solve_pose``'s rounds).

The best pose of a frame is the one with every effector within the tolerance, else the smallest weighted
root-mean-square miss (``tree_steps.Misses``): where targets conflict, the weights set the compromise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_TOLERANCE,
    FloatArray,
    JointLimits,
    as_points,
    positive_float,
    positive_int,
    sign_continuous,
    soften_reach,
)
from ..points import TreeReach, weighted_rms
from .iterate import FAST_LEAST_SQUARES, Best, Pace, Schedule, frames_first, rows_of
from .solver import BoneSolver, as_limits, as_rotations
from .tree import TreeRest
from .tree_layout import TreeBones, tree_bones
from .tree_steps import TreePosed, TreeSteps
from .turns import BranchTurns

#: After an attempt's first FABRIK iteration: least squares while it gains quickly, then while it still gains
#: a tenth every five steps. FABRIK creeping from the start again, as on a chain, took four times as long on
#: random limbed trees with random limits and reached no more; a frame that least squares leaves short has
#: mostly settled in a pose from which no small turn comes closer (limits can make many), which a restart
#: from elsewhere gets out of, where creeping on (a millionth every twenty steps, as on a chain) took twice
#: as long for as many frames reached.
_SCHEDULE: Schedule = (("least_squares", FAST_LEAST_SQUARES, "best"), ("least_squares", Pace(0.9, 5), "best"))
#: Attempts from random poses within the limits (``chain_solve.RESTARTS`` for a chain): a tree's targets
#: leave fewer ways to reach them all than a chain's one, and its attempts are cheap. On 1,600 random limbed
#: trees' targets, 6 reached 99.5 % and 99.0 % (two seeds), 12 reach 99.75 % and 99.5 %.
_RESTARTS = 12


@dataclass(frozen=True)
class TreePoseSolution(TreeReach):
    """The result of ``solve_tree_pose``, per frame: ``TreeReach`` (``errors`` from each effector to its
    target, ``reached`` within the tolerance, ``iterations``, ``rms_error``), and

    Attributes
    ----------
    rotations : ndarray, shape (F, b, 4)
        Each bone's local rotation (w, x, y, z), within its limits; signs continuous from frame to frame.
    scales : ndarray, shape (F, b)
        Each bone's scale along its own Y axis (1 unless stretching).
    heads : ndarray, shape (F, b, 3)
        Each bone's head, in the tree's base frame.
    ends : ndarray, shape (F, E, 3)
        Each effector (its tip bone's tail).
    """

    rotations: FloatArray
    scales: FloatArray
    heads: FloatArray
    ends: FloatArray


def solve_tree_pose(
    rest: TreeRest,
    rotations: npt.ArrayLike,
    tips: npt.ArrayLike,
    targets: npt.ArrayLike,
    *,
    weights: npt.ArrayLike | None = None,
    limits: JointLimits | None = None,
    poles: Sequence[npt.ArrayLike | None] | None = None,
    pole_angles: npt.ArrayLike = 0.0,
    stretch: bool = False,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    soft_reach: float | npt.ArrayLike = 0.0,
) -> TreePoseSolution:
    """Turn a tree's bones so each tip bone's tail reaches its target on each frame, within the bones' limits.

    Parameters
    ----------
    rest : TreeRest
        The tree's rest geometry; positions below are in its base frame (the root bone's rest frame, at its
        head).
    rotations : array-like, shape (b, 4), (1, b, 4) or (F, b, 4)
        Local rotations to start from (the same on every frame, or each frame's input pose). Not modified.
    tips : array-like of int, shape (E,)
        The bones whose tails are the end effectors; every bone without children must be one.
    targets : array-like, shape (F, E, 3)
        Where each effector should go on each frame.
    weights : array-like, shape (E,), optional
        How hard each effector pulls (> 0, default 1 each): where branches meet, each counts with the weight
        of the effectors beyond it, and least squares weighs each miss by it. Only their ratios matter.
    limits : JointLimits, optional
        Per-bone limits and stretch shares; none by default.
    poles : sequence of (array-like, shape (F, 3)) or None, optional
        Per effector, a pole target per frame or None: it bends the effector's branch (see the module's
        notes).
    pole_angles : float or array-like, shape (E,)
        Radians, per effector with a pole.
    stretch : bool
        Let bones lengthen by their ``limits.stretch`` shares to reach targets beyond the tree's reach.
    tolerance : float
        How close every effector must come to its target (> 0).
    max_iterations : int
        Iterations per frame at most (>= 1), per run of one step.
    soft_reach : float or array-like, shape (E,)
        Scene units (>= 0, per effector or for all): each effector's target within this distance of its
        path's full reach from the root, or beyond it, is eased in (``core.soften_reach``) so the branch
        straightens gradually; 0 (the default) is off, and so is stretching. ``errors`` are still measured
        to ``targets``.

    Returns
    -------
    TreePoseSolution
        The best pose seen per frame (see the module's notes); never a pose outside the limits, never NaN.

    Raises
    ------
    ValueError
        Naming the problem: shapes that do not match the tree, NaN or infinity, bad tips, weights or limits,
        a non-positive tolerance.
    """
    bones = tree_bones(rest, tips, weights)
    count, effectors = len(rest.parents), len(bones.tips)
    goals = _as_targets(targets, effectors)
    frames = len(goals)
    start = as_rotations(rotations, frames, count)
    limits = as_limits(limits, count, "tree")
    pole_points = _as_poles(poles, effectors, frames)
    angles = np.broadcast_to(np.asarray(pole_angles, dtype=np.float64), (effectors,))
    if not np.isfinite(angles).all():
        raise ValueError(f"pole_angles must be finite numbers of radians, got {angles.tolist()}")
    solver = _TreeSolver(
        limits, positive_float(tolerance, "tolerance"), positive_int(max_iterations, "max_iterations"), bones, angles
    )
    first = clamped = limits.clamp(start)
    with_poles = [e for e, pole in enumerate(pole_points) if pole is not None]
    soft = np.zeros(effectors) if stretch else np.broadcast_to(np.asarray(soft_reach, dtype=np.float64), (effectors,))
    if not (np.isfinite(soft) & (soft >= 0.0)).all():
        raise ValueError(f"soft_reach must be finite distances >= 0, got {soft.tolist()}")
    sought = soften_reach(goals, bones.reach, soft)  # (F, E, 3): each effector eased toward its own reach
    if with_poles:
        first = solver.turns.toward(clamped, np.ones((count, frames)), sought, pole_points, angles, with_poles)
    best = solver.search(first, sought, pole_points, stretch)
    reference = solver.pole_reference(best, first, clamped, sought, pole_points, with_poles)
    posed: TreePosed = solver.swivel_to(best, reference, sought)
    errors = solver.steps.misses.errors(posed.ends, _rows(goals)).T
    return TreePoseSolution(
        rotations=sign_continuous(frames_first(best.quats), reference=start[0]),
        scales=np.ascontiguousarray(best.scales.T),
        heads=frames_first(posed.heads),
        ends=frames_first(posed.ends),
        iterations=best.iterations,
        errors=errors,
        reached=errors <= solver.tolerance,
        rms_error=weighted_rms(errors.T, bones.weights),
    )


@dataclass(frozen=True)
class _TreeSolver(BoneSolver[list[FloatArray | None]]):
    """The attempts of ``BoneSolver`` on a tree (goals (F, E, 3), a pole (F, 3) or None per effector)."""

    bones: TreeBones
    pole_angles: FloatArray

    restarts = _RESTARTS
    schedule: ClassVar[Schedule] = _SCHEDULE

    @cached_property
    def steps(self) -> TreeSteps:
        return TreeSteps(self.bones, self.limits, self.tolerance)

    @cached_property
    def turns(self) -> BranchTurns:
        return BranchTurns(self.steps)

    @property
    def reach(self) -> float:
        return float(self.bones.reach.max())

    def within_reach(self, goals: FloatArray) -> NDArray[np.bool_]:
        """Every effector's goal within its reach."""
        return np.asarray((np.linalg.norm(goals, axis=2) <= self.bones.reach).all(axis=1))

    def poles_of(self, poles: list[FloatArray | None], rows: NDArray[np.intp]) -> list[FloatArray | None]:
        return [None if pole is None else pole[rows] for pole in poles]

    def turned(
        self, poses: FloatArray, scales: FloatArray, goals: FloatArray, poles: list[FloatArray | None]
    ) -> FloatArray:
        """Every branch turned toward its goal (to its pole, with one)."""
        poses = np.broadcast_to(poses, (len(goals), *scales.shape[:1], 4))
        everyone = list(range(len(self.bones.tips)))
        return self.turns.toward(poses, scales, goals, poles, self.pole_angles, everyone)

    def lengthened(self, best: Best, goals: FloatArray, short: NDArray[np.intp]) -> FloatArray:
        """Each bone grows by its share times the weighted mean, over the effectors it moves, of each one's
        miss over the stretchable length of its path (see the module's notes)."""
        shares = self.limits.stretch
        pulls = self.bones.moves * self.bones.weights  # (b, E)
        stretchable = (self.bones.rest.lengths * shares) @ self.bones.moves  # (E,)
        posed = self.steps.pose(best.quats[..., short], best.scales[:, short])
        misses = self.steps.misses.errors(posed.ends, _rows(goals[short]))  # (E, S)
        wanted = np.where(stretchable[:, None] > 0, misses / np.maximum(stretchable, 1e-300)[:, None], 0.0)
        return np.asarray(best.scales[:, short] + shares[:, None] * (pulls @ wanted) / pulls.sum(axis=1)[:, None])

    def pole_reference(
        self,
        best: Best,
        first: FloatArray,
        start: FloatArray,
        goals: FloatArray,
        poles: list[FloatArray | None],
        with_poles: list[int],
    ) -> FloatArray:
        """The pose (F, b, 4) each branch should end nearest: ``first``, the start turned to the poles, but
        for the branches with a pole, which are their ``start`` turned to it again under what they hang from
        as solved. (What a branch hangs from may have moved during the solve, turning the branch away from
        its pole; where it has not, as on a chain, this is ``first``.)"""
        if not with_poles:
            return first
        mixed = frames_first(best.quats)
        for e in with_poles:
            chain = list(self.bones.branches[e].bones)
            mixed[:, chain] = start[:, chain]
        turned = self.turns.toward(mixed, best.scales, goals, poles, self.pole_angles, with_poles)
        reference = first.copy()
        firsts = [self.bones.branches[e].bones[0] for e in with_poles]
        reference[:, firsts] = turned[:, firsts]
        return reference

    def swiveled(self, best: Best, reference: FloatArray) -> FloatArray:
        """Each branch that carries no other effector turned about the line from its first head to its tip
        (``BranchTurns.swivel``)."""
        return rows_of(self.turns.swivel(frames_first(best.quats), best.scales, reference))


def _rows(goals: FloatArray) -> FloatArray:
    """Goals (F, E, 3) as the steps take them, (E, 3, F)."""
    return np.ascontiguousarray(goals.transpose(1, 2, 0))


def _as_targets(targets: npt.ArrayLike, effectors: int) -> FloatArray:
    array = np.asarray(targets, dtype=np.float64)
    if array.ndim != 3 or array.shape[1:] != (effectors, 3) or len(array) < 1:
        raise ValueError(f"targets must have shape (F, {effectors}, 3), one point per frame and tip, got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("targets contain NaN or infinity")
    return array


def _as_poles(poles: Sequence[npt.ArrayLike | None] | None, effectors: int, frames: int) -> list[FloatArray | None]:
    if poles is None:
        return [None] * effectors
    if len(poles) != effectors:
        raise ValueError(
            f"poles must have one entry per tip ({effectors}), a point per frame or None, got {len(poles)}"
        )
    points = [None if pole is None else as_points(pole, f"poles[{e}]") for e, pole in enumerate(poles)]
    for e, pole in enumerate(points):
        if pole is not None and len(pole) != frames:
            raise ValueError(f"poles[{e}] must have one point per frame ({frames}), got {len(pole)}")
    return points
