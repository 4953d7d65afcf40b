"""FABRIK on a chain of bones: joint limits, a pole target and stretch, solved on the bones' rotations.

Plain FABRIK moves points; limits are about how each bone turns relative to its parent, so here every pass
carries the bones' orientations along with the joints (after Aristidou, Chrysanthou & Lasenby, "Extending
FABRIK with model constraints", 2016):

- the forward pass (tip to root) puts the tip on the target and aims each bone from its next joint back at
  its old head, as FABRIK does; a bone whose child would then turn outside the child's limits is turned
  instead to where the child's nearest allowed rotation puts it, so the joint between them stays legal;
- the backward pass (root to tip) keeps the root's head, aims each bone at the joint the forward pass
  placed, and clamps the bone's local rotation to its own limits before placing the next joint. The pose
  an iteration ends with is built from clamped local rotations only, so it never breaks a limit.

A solution that reaches the target is one of a family: the whole chain can turn about the line from the root
to the target and still reach it. The solve ends on the member of that family nearest the pose it was given
to start from (the smallest turn of the root bone), whichever attempt found it; that is where Blender's own
IK solver, a damped least-squares descent from the same start, settles too.

A pole target works as in Blender's IK constraint: before solving, the start pose is turned about the root's
head so that the plane through the root-to-tip line and the root's "up" axis (its X axis turned toward Z by
the pole angle) becomes the plane through the root-to-target and root-to-pole lines. The solve then bends the
chain from there, so a chain that bends in one plane keeps the bend plane the turn gave it, and the knee
lands where Blender's IK puts it. Everything is vectorised across frames: the Python loops run over bones and
iterations only.

An attempt runs one iteration of FABRIK, which brings the chain near the goal and shapes it, then damped
least squares, which finishes in a few steps where FABRIK alone creeps (near its goal a 48-bone chain gains
a tenth per twenty iterations); frames still short get both again, as long as they gain at all, before the
retries from other starts. A target beyond the reach is met in one step: the chain at the extreme of its
reach (known exactly where no two limited bones come in a row, ``core.reach``: limbs; else within bounds that
hold for every chain, ``core.reach_bounds``, at poses a search found) straightened or folded toward it, turned
to it. That settles the frame where no pose can come closer (always with a root that turns any way, free or
locked in twist alone, and the reach exact); else it is iterated too, keeping the closer. With such a root and
the reach exact, frames are bent to the target's distance and turned to it as well: every frame first where
limits hold (FABRIK and least squares then run on those still short), else those the first least squares leave short.

With ``history=True`` (one frame), the joints after every step are kept, named (``points.history``):
``START`` (the rotations given, as they are), ``TURNED_TO_POLE`` (with a pole: the start turned, and clamped),
then ``TOWARD`` and ``BACK`` for each FABRIK iteration's two passes (the forward pass's joints, the tip on the
target; the backward pass's, the root in place and every bone within its limits) and ``LEAST_SQUARES`` for
each least-squares step, ``STRAIGHTENED`` for a target out of reach (its one step), ``BENT`` for each pose
measured on the way to the target's distance and the one turned to it, ``RESTART`` before each retry from
another start (the start, turned toward the goal), ``LENGTHENED`` before each stretch round, and last
``SOLVED``, the pose returned (the best seen, turned about the root-to-tip line to the start's side).

This module holds what is a chain's own: its goals, its pole, its history; ``solver`` the attempts a solve
makes (the same for a tree), ``chain_steps`` the steps an attempt repeats, ``iterate`` when a run of one step
stops.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_TOLERANCE,
    ChainReach,
    FloatArray,
    JointLimits,
    as_points,
    inner_radius,
    positive_float,
    positive_int,
    sign_continuous,
)
from ..points import START, Recorder
from .chain import ChainRest, forward_kinematics
from .chain_steps import ChainPosed, ChainSteps, RecordingSteps, chain_steps
from .iterate import Best, Steps, frames_first, rows_of
from .solver import BoneSolver, PoseSolution, as_limits, as_rotations
from .turns import fold_lines, only_twist_locked, straightened_by_lengths, swivel_nearest, swivel_toward, turn_toward

#: Attempts from random poses within the limits on frames still short of a target within the chain's length,
#: after the start pose and the bent one: limits can leave so few ways to a target that two starts miss a few
#: (3 take targets known to be reachable from 97 % to 99 %).
RESTARTS = 3
#: The names of ``solve_pose``'s own steps in a history (see the module's notes).
TURNED_TO_POLE = "turned to the pole"
STRAIGHTENED = "straightened toward the target"
BENT = "bent to the target's distance"
RESTART = "restart from another pose"
LENGTHENED = "bones lengthened"
SOLVED = "solved"
_Poles = FloatArray | None
_Mask = NDArray[np.bool_]


def solve_pose(
    rest: ChainRest,
    rotations: npt.ArrayLike,
    targets: npt.ArrayLike,
    *,
    limits: JointLimits | None = None,
    poles: npt.ArrayLike | None = None,
    pole_angle: float = 0.0,
    stretch: bool = False,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    history: bool = False,
) -> PoseSolution:
    """Turn a chain's bones so its last joint reaches a target on each frame, within the bones' limits.

    Parameters
    ----------
    rest : ChainRest
        The chain's rest geometry; positions below are in its base frame (the root bone's rest frame, at the
        root's head).
    rotations : array-like, shape (m, 4), (1, m, 4) or (F, m, 4)
        Local rotations to start from (the same on every frame, or each frame's input pose). Not modified.
        Of the poses that reach a target, turned about the root-to-target line, the one returned is the
        nearest this start (turned to the pole, with one), as with Blender's IK.
    targets : array-like, shape (F, 3)
        Where the last joint (the tip bone's tail) should go on each frame.
    limits : JointLimits, optional
        Per-bone limits (see ``fabrik_addon.solver.limits``); none by default.
    poles : array-like, shape (F, 3), optional
        A pole target per frame, as for Blender's IK constraint: the start pose is first turned about the
        root's head so that the root bone's X axis, turned toward its Z axis by ``pole_angle``, faces the
        pole as seen along the root-to-target line (the plane through that line and the pole); the chain
        is then solved from there (see the module's notes).
    pole_angle : float
        Radians.
    stretch : bool
        Let bones lengthen by their ``limits.stretch`` shares to reach targets beyond the chain's reach.
    tolerance : float
        How close the last joint must come to the target (> 0).
    max_iterations : int
        Iterations per frame at most (>= 1), per stretch round.
    history : bool
        Also return the joints after every step (``PoseSolution.history``; see the module's notes), for one
        target only. The solve is the same with or without.

    Returns
    -------
    PoseSolution
        The best pose seen per frame; a frame whose target lies beyond what the limits (and stretch) allow
        gets the closest pose found, with ``reached`` False. Never a pose outside the limits, never NaN.

    Raises
    ------
    ValueError
        Naming the problem: shapes that do not match the chain, NaN or infinity, bad limits, a non-positive
        tolerance.
    """
    bones = len(rest.offsets)
    goals = as_points(targets, "targets")
    frames = len(goals)
    start = as_rotations(rotations, frames, bones)
    limits = as_limits(limits, bones, "chain")
    pole_points = None if poles is None else as_points(poles, "poles")
    if pole_points is not None and len(pole_points) != frames:
        raise ValueError(f"poles must have one point per target ({frames}), got {len(pole_points)}")
    if history and frames != 1:
        raise ValueError(f"history is kept for one target at a time, got {frames} targets")
    if not np.isfinite(pole_angle):
        raise ValueError(f"pole_angle must be a finite number of radians, got {pole_angle!r}")
    # The rest and limits of the chain's steps kept between solves (``chain_steps``): their clamps made already.
    kept = chain_steps(rest, limits)
    rest, limits = kept.rest, kept.limits
    solver = _ChainSolver(
        rest=rest,
        limits=limits,
        tolerance=positive_float(tolerance, "tolerance"),
        max_iterations=positive_int(max_iterations, "max_iterations"),
        pole_angle=float(pole_angle),
        kept=kept,
        poled=pole_points is not None,
        recorder=Recorder() if history else None,
    )
    solver.record(START, start, np.ones((bones, frames)))
    first = limits.clamp(start)
    if pole_points is not None:
        first = solver.turn(first, np.ones((bones, frames)), goals, pole_points, aim=False)
        solver.record(TURNED_TO_POLE, first, np.ones((bones, frames)))
    stretching = stretch and bool(limits.stretch.any())
    beyond = np.zeros(frames, dtype=bool) if stretching else solver.beyond_reach(goals)
    if solver.bends_first and not stretching:  # every frame short met at once, the attempts on those still short
        best = solver.bending_first(first, goals, pole_points, beyond)
    elif beyond.any():  # those frames directly, the others (and those it does not settle) by the attempts
        best, rows = Best.start(first), np.flatnonzero(beyond)
        direct, settled = solver.directly(first[rows], goals[rows], solver.poles_of(pole_points, rows))
        best.place(rows, direct)
        beyond[rows[~settled]] = False
        if (within := np.flatnonzero(~beyond)).size:
            searched = solver.search(first[within], goals[within], solver.poles_of(pole_points, within), False)
            best.keep_better(within, searched)
    else:
        best = solver.search(first, goals, pole_points, stretch)
    posed: ChainPosed = solver.swivel_to(best, first, goals)
    quats = sign_continuous(frames_first(best.quats), reference=start[0])
    steps: FloatArray | None = None
    names: tuple[str, ...] = ()
    if solver.recorder is not None:
        solver.recorder.add(SOLVED, posed.joints[:, :, 0])
        steps, names = solver.recorder.history()
    return PoseSolution(
        rotations=quats,
        scales=np.ascontiguousarray(best.scales.T),
        joints=frames_first(posed.joints),
        iterations=best.iterations,
        error=best.error,
        reached=best.error <= solver.tolerance,
        history=steps,
        history_steps=names,
    )


@dataclass(frozen=True)
class _ChainSolver(BoneSolver[FloatArray | None]):
    """The attempts of ``BoneSolver`` on a chain (goals (F, 3), poles (F, 3) or None), and its history."""

    rest: ChainRest
    pole_angle: float
    #: The chain's steps and what they know of its reach, as kept between solves (``chain_steps``).
    kept: ChainSteps
    poled: bool = False  # whether the chain has a pole target
    recorder: Recorder | None = None

    restarts = RESTARTS

    @cached_property
    def steps(self) -> Steps[ChainPosed]:
        """The chain's steps; recording one frame's joints after each, with a history."""
        return self.kept if self.recorder is None else RecordingSteps(self.kept, self.recorder)

    @property
    def reach(self) -> float:
        return float(self.rest.lengths.sum())

    def record(self, name: str, quats: FloatArray, scales: FloatArray) -> None:
        """With a history, record the joints of the one frame's rotations (F, m, 4) and scales (m, F)."""
        if self.recorder is not None:
            self.recorder.add(name, self.steps.pose(rows_of(quats), scales).joints[:, :, 0])

    def within_reach(self, goals: FloatArray) -> NDArray[np.bool_]:
        return np.asarray(np.linalg.norm(goals, axis=1) <= self.reach)

    def poles_of(self, poles: FloatArray | None, rows: NDArray[np.intp]) -> FloatArray | None:
        return None if poles is None else poles[rows]

    def turned(self, poses: FloatArray, scales: FloatArray, goals: FloatArray, poles: FloatArray | None) -> FloatArray:
        turned = self.turn(poses, scales, goals, poles)
        self.record(RESTART, turned, scales)
        return turned

    def lengthened(self, best: Best, goals: FloatArray, short: NDArray[np.intp]) -> FloatArray:
        """Each round adds the remaining distance to the bones in proportion to ``length * share``: exact for a
        chain that points straight at its target, and a step toward it otherwise."""
        stretchable = float((self.rest.lengths * self.limits.stretch).sum())
        grown = best.scales[:, short] + self.limits.stretch[:, None] * (best.error[short] / stretchable)
        self.record(LENGTHENED, frames_first(best.quats[..., short]), grown)
        return np.asarray(grown)

    def turn(
        self, quats: FloatArray, scales: FloatArray, goals: FloatArray, poles: FloatArray | None, aim: bool = True
    ) -> FloatArray:
        """``turn_toward`` (``aim``: at the goal where the pole gives no plane) with this chain, its limits and
        pole angle: rotations (F, m, 4) and scales (m, F) -> rotations (F, m, 4)."""
        tips = frames_first(self.steps.pose(rows_of(quats), scales).joints[-1:])[:, 0]
        return turn_toward(self.rest, self.limits, quats, tips, goals, poles, self.pole_angle, aim)

    @cached_property
    def extremes(self) -> ChainReach | None:
        """The chain's reach and extreme poses (``core.reach``) where its root turns them (and those bent toward
        them) to any goal: a free root, or without a pole one whose twist alone is locked (``turn_toward`` points
        it without twisting); None with another locked or limited root: it goes by its lengths."""
        free = not (self.limits.lock[0].any() or self.limits.use_limit[0].any())
        return self.kept.reach if free or (only_twist_locked(self.limits) and not self.poled) else None

    @property
    def bends_first(self) -> bool:
        """Limited, its reach known exactly: FABRIK and least squares creep against limits (an elbow whose bend
        plane must roll), where bending reaches a goal within reach in a few steps."""
        return self.limits.any and self.extremes is not None and self.extremes.exact

    def beyond_reach(self, goals: FloatArray) -> NDArray[np.bool_]:
        """Per frame, whether the goal (F, 3) lies as far from the root as the tip can come or farther, or nearer
        than it can come (``ChainSteps.bounds``; the reach itself where ``core.reach`` knows it): ``directly``'s
        frames."""
        reach = self.extremes if self.extremes is not None and self.extremes.exact else self.kept.bounds
        distance = np.linalg.norm(goals, axis=1)
        return np.asarray((distance >= reach.farthest) | (distance < reach.nearest))

    def bending_first(self, first: FloatArray, goals: FloatArray, poles: _Poles, beyond: _Mask) -> Best:
        """With ``bends_first``: the frames short at the start met at once (``at_once``: those ``beyond_reach`` at
        the extreme, the others bent), then the attempts (``search``) on those still short within reach."""
        best = Best.start(first)
        best.error[:] = self.steps.pose(best.quats, best.scales).error(np.ascontiguousarray(goals.T))
        short = np.flatnonzero((best.error > self.tolerance) | beyond)  # beyond reach: the extreme, always
        if short.size:
            poses = self.at_once(first[short], goals[short], self.poles_of(poles, short), beyond[short])
            best.keep_better(short, poses)
        short = np.flatnonzero((best.error > self.tolerance) & ~beyond)
        if short.size:
            searched = self.search(first[short], goals[short], self.poles_of(poles, short), False, bend=False)
            best.keep_better(short, searched)
        return best

    def directly(self, first: FloatArray, goals: FloatArray, poles: FloatArray | None) -> tuple[Best, _Mask]:
        """The poses of frames beyond the reach (``beyond_reach``), made in one step, within the limits, and the
        frames they settle (F,): the others go on to ``search``, keeping these poses where closer. With a free
        root and the reach exact, ``at_once``: every frame settled. Else the chain at the extreme it lies beyond
        (``ChainSteps.at_extremes``), turned to the pole, or to the goal (a locked or limited root by the turn its
        limits keep closest, ``swivel_toward``): settled where it misses by no more than every pose must
        (``ReachBounds.miss``), to a hundredth of the tolerance. A goal beyond the lengths (or inside the ball
        the longest bone leaves) is settled anyway, by the closer of that and ``straightened_by_lengths`` (by
        that alone where the reach is not exact: its search is only made for the goals the lengths allow)."""
        if self.extremes is not None and self.extremes.exact:
            return self.at_once(first, goals, poles, np.ones(len(goals), dtype=bool)), np.ones(len(goals), dtype=bool)
        distance, once = np.linalg.norm(goals, axis=1), np.ones(len(goals), dtype=np.int64)
        any_way, steps = self.extremes is not None, self.kept
        by_lengths = (distance >= self.reach) | (distance < inner_radius(self.rest.lengths))
        best, settled = Best.start(first), np.zeros(len(goals), dtype=bool)
        if (rows := np.flatnonzero(~by_lengths | steps.reach.exact)).size:  # by the lengths: no search needed
            toward, back = fold_lines(forward_kinematics(self.rest, first[rows])[0], goals[rows])
            quats = steps.at_extremes(distance[rows] < steps.bounds.nearest, first[rows], toward, back)
            if poles is None and not any_way:
                quats = swivel_toward(self.rest, self.limits, quats, goals[rows])
            found = self.turned_best(STRAIGHTENED, quats, goals[rows], self.poles_of(poles, rows), once[rows], any_way)
            best.place(rows, found)
            settled[rows] = found.error <= np.maximum(steps.bounds.miss(goals[rows]), 0.0) + 0.01 * self.tolerance
        if (rows := np.flatnonzero(by_lengths & ~settled)).size:  # a root that turns any way: the lengths' extremes
            aims, everywhere = self.poles_of(poles, rows), np.ones(rows.size, dtype=bool)
            if any_way:
                found = self.at_once(first[rows], goals[rows], aims, everywhere)
            else:
                quats = straightened_by_lengths(self.rest, first[rows], goals[rows])
                found = self.turned_best(STRAIGHTENED, quats, goals[rows], aims, once[rows], any_way)
            best.keep_better(rows, found)
            settled[rows] = True
        return best, settled

    def bend_to_reach(self, best: Best, first: FloatArray, goals: FloatArray, poles: FloatArray | None) -> None:
        """``at_once`` on the frames still short, on a chain whose reach is exact and whose root turns any way
        (``extremes``), keeping the poses that come closer."""
        short = np.flatnonzero(best.error > self.tolerance)
        if self.extremes is not None and self.extremes.exact and short.size:
            within = np.zeros(short.size, dtype=bool)  # short of goals within reach: those beyond went directly
            best.keep_better(short, self.at_once(first[short], goals[short], self.poles_of(poles, short), within))

    def at_once(self, first: FloatArray, goals: FloatArray, poles: _Poles, beyond: _Mask) -> Best:
        """Poses from ``first`` (F, m, 4), each bone keeping its twist, within the limits, turned to the goals (to the
        poles), with a root that turns any way (``extremes``). A goal ``beyond`` the reach: the chain at the extreme it
        lies beyond (``core.reach``), straightened toward it or folded (one segment toward it, the others back): with
        limits known exactly no pose comes closer (one step, ``STRAIGHTENED``). Another: ``first`` bent until the tip
        lies as far from the root as the goal (``ChainReach.bent``: on the way to that extreme), which with the reach
        exact reaches a goal within it (but one nearer than the chain folded in line, where that is no extreme) in a few
        steps where FABRIK and least squares can creep for hundreds (a knee near straight, an elbow whose bend plane
        must roll): each pose measured on the way, and the one turned, a step (``BENT``)."""
        reach = self.extremes
        assert reach is not None, "met at once with a root that turns any way"
        scales = np.ones((len(self.rest.offsets), len(goals)))
        bending = not beyond.all()  # (a history has one frame)

        def tips(quats: FloatArray) -> FloatArray:
            if bending:
                self.record(BENT, quats, scales[:, : len(quats)])
            joints = self.steps.pose(rows_of(quats), scales[:, : len(quats)]).joints[-1]
            return np.asarray(np.sqrt(np.einsum("if,if->f", joints, joints)), dtype=np.float64)

        start = frames_first(self.steps.pose(rows_of(first), scales).joints)  # (F, m+1, 3)
        if bending:
            self.record(BENT, first, scales)
        toward, back = fold_lines(start, goals)
        distances, start_tips = np.linalg.norm(goals, axis=1), np.linalg.norm(start[:, -1], axis=1)
        tolerance = 0.25 * self.tolerance
        quats, steps = reach.bent(distances, first, toward, back, tips, tolerance, beyond, start_tips)
        iterations = np.where(beyond, 1, steps + 1)  # beyond reach: the extreme, its one step
        return self.turned_best(BENT if bending else STRAIGHTENED, quats, goals, poles, iterations)

    def turned_best(
        self,
        name: str,
        quats: FloatArray,
        goals: FloatArray,
        poles: FloatArray | None,
        iterations: NDArray[np.int64],
        to_goal: bool = True,
    ) -> Best:
        """Poses (F, m, 4) turned to ``goals`` (to the poles, with them; without, only if ``to_goal``), then
        clamped to the limits, recorded as the step ``name``: as ``Best`` with ``iterations``."""
        scales = np.ones((len(self.rest.offsets), len(goals)))
        if to_goal or poles is not None:
            quats = self.turn(quats, scales, goals, poles)
        quats = self.limits.clamp(quats)
        self.record(name, quats, scales)
        rows = rows_of(quats)
        error = self.steps.pose(rows, scales).error(np.ascontiguousarray(goals.T))
        return Best(rows, scales, iterations, error)

    def swiveled(self, best: Best, reference: FloatArray) -> FloatArray:
        """Turned about the root-to-tip line (``swivel_nearest``)."""
        tips = frames_first(self.steps.pose(best.quats, best.scales).joints[-1:])[:, 0]
        return rows_of(swivel_nearest(self.rest, self.limits, frames_first(best.quats), tips, reference))
