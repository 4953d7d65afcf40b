"""FABRIK on bones: joint limits, a pole target and stretch, solved on the bones' rotations.

Plain FABRIK moves points; limits are about how each bone turns relative to its parent, so here every pass
carries the bones' orientations along with the joints (after Aristidou, Chrysanthou & Lasenby, "Extending
FABRIK with model constraints", 2016):

- the backward pass (tip to root) puts the tip on the target and aims each bone from its next joint back at
  its old head, as FABRIK does; a bone whose child would then turn outside the child's limits is turned
  instead to where the child's nearest allowed rotation puts it, so the joint between them stays legal;
- the forward pass (root to tip) keeps the root's head, aims each bone at the joint the backward pass
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
retries from other starts.

With ``history=True`` (one frame), the joints after every step are kept, named (``_history``): ``START``
(the rotations given, as they are), ``TURNED_TO_POLE`` (with a pole: the start turned, and clamped), then
``TOWARD`` and ``BACK`` for each FABRIK iteration's two passes (the backward pass's joints, the tip on the
target; the forward pass's, the root in place and every bone within its limits) and ``LEAST_SQUARES`` for
each least-squares step, ``RESTART`` before each retry from another start (the start, turned toward the
goal), ``LENGTHENED`` before each stretch round, and last ``SOLVED``, the pose returned (the best seen, turned
about the root-to-tip line to the start's side).

This module holds the policy (which attempt runs, from which start, what is kept); ``_pose_steps`` the
steps an attempt repeats, ``_pose_iterate`` when a run of one step stops.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ._history import START, Recorder, RecordingSteps
from ._pose_iterate import Best, Steps, attempt, frames_first, rows_of
from ._pose_steps import Posed, PoseSteps
from ._root_turns import swivel_nearest, turn_toward
from ._solve import DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE
from .limits import JointLimits
from .pose import ChainRest
from .rotations import (
    quat_normalize,
    sign_continuous,
)
from .validate import FloatArray, as_points, positive_float, positive_int

#: Rounds of lengthening the bones, each followed by a solve, when stretching toward a target out of reach.
STRETCH_ROUNDS = 4
#: Attempts from random poses within the limits on frames still short of a target within the chain's length,
#: after the start pose and the bent one: limits can leave so few ways to a target that two starts miss a few
#: (3 take targets known to be reachable from 97 % to 99 %). Seeded: a bake gives the same keys every time.
RESTARTS = 3
RESTART_SEED = 0
#: Relative rounding of a tip's distance after a turn of the whole chain (a fraction of the chain's length):
#: a turn that moves the tip by no more is taken as keeping it where it was.
ROUNDING = 1e-12
#: The names of ``solve_pose``'s own steps in a history (see the module's notes).
TURNED_TO_POLE = "turned to the pole"
RESTART = "restart from another pose"
LENGTHENED = "bones lengthened"
SOLVED = "solved"


@dataclass(frozen=True)
class PoseSolution:
    """The result of ``solve_pose``, per frame.

    Attributes
    ----------
    rotations : ndarray, shape (F, m, 4)
        Each bone's local rotation quaternion (w, x, y, z), within its limits; signs continuous from frame to
        frame, the first frame's on the side of the input rotation.
    scales : ndarray, shape (F, m)
        Each bone's scale along its own Y axis (1 unless stretching).
    joints : ndarray, shape (F, m+1, 3)
        The bones' heads, then the last bone's tail, in the chain's base frame.
    iterations : ndarray of int, shape (F,)
    error : ndarray, shape (F,)
        Distance from the last joint to the target.
    reached : ndarray of bool, shape (F,)
        ``error <= tolerance``.
    history : ndarray, shape (steps, m+1, 3), or None
        With ``history=True``, the one frame's joints after every step (see the module's notes), else None.
    history_steps : tuple of str
        The name of each step of ``history``; empty without history.
    """

    rotations: FloatArray
    scales: FloatArray
    joints: FloatArray
    iterations: NDArray[np.int64]
    error: FloatArray
    reached: NDArray[np.bool_]
    history: FloatArray | None = None
    history_steps: tuple[str, ...] = ()


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
    limits = JointLimits.free(bones) if limits is None else limits
    if limits.bones != bones:
        raise ValueError(f"limits are for {limits.bones} bones, the chain has {bones}")
    pole_points = None if poles is None else as_points(poles, "poles")
    if pole_points is not None and len(pole_points) != frames:
        raise ValueError(f"poles must have one point per target ({frames}), got {len(pole_points)}")
    if history and frames != 1:
        raise ValueError(f"history is kept for one target at a time, got {frames} targets")
    if not np.isfinite(pole_angle):
        raise ValueError(f"pole_angle must be a finite number of radians, got {pole_angle!r}")
    solver = _Solver(
        rest=rest,
        limits=limits,
        tolerance=positive_float(tolerance, "tolerance"),
        max_iterations=positive_int(max_iterations, "max_iterations"),
        pole_angle=float(pole_angle),
        recorder=Recorder() if history else None,
    )
    solver.record(START, start, np.ones((bones, frames)))
    first = limits.clamp(start)
    if pole_points is not None:
        first = solver.turn(first, np.ones((bones, frames)), goals, pole_points)
        solver.record(TURNED_TO_POLE, first, np.ones((bones, frames)))
    best = solver.solve(Best.start(first), goals)
    solver.retry_bent(best, goals, pole_points)
    random = np.random.default_rng(RESTART_SEED)
    for _ in range(RESTARTS):
        solver.retry_random(best, goals, pole_points, random)
    if stretch and limits.stretch.any():
        solver.stretch(best, goals)
    solver.swivel_to(best, first, goals)
    posed = solver.steps.pose(best.quats, best.scales)
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
class _Solver:
    """When each step runs and from which start: FABRIK, then least squares on frames it left short, then
    retries from other starts, stretch rounds and the final swivel (the steps themselves: ``PoseSteps``)."""

    rest: ChainRest
    limits: JointLimits
    tolerance: float
    max_iterations: int
    pole_angle: float
    recorder: Recorder | None = None

    @cached_property
    def steps(self) -> Steps[Posed]:
        """The chain's steps; recording one frame's joints after each, with a history."""
        steps = PoseSteps(self.rest, self.limits)
        return steps if self.recorder is None else RecordingSteps(steps, self.recorder)

    def record(self, name: str, quats: FloatArray, scales: FloatArray) -> None:
        """With a history, record the joints of the one frame's rotations (F, m, 4) and scales (m, F)."""
        if self.recorder is not None:
            self.recorder.add(name, self.steps.pose(rows_of(quats), scales).joints[:, :, 0])

    @property
    def stopping(self) -> tuple[float, int]:
        return self.tolerance, self.max_iterations

    def solve(self, start: Best, goals: FloatArray) -> Best:
        """``attempt`` with this chain's steps, from ``start``'s poses toward ``goals`` (F, 3)."""
        return attempt(self.steps, start, goals, self.stopping)

    def retry_bent(self, best: Best, goals: FloatArray, poles: FloatArray | None) -> None:
        """Solve the frames that fell short again, from a bent pose turned toward the goal.

        FABRIK keeps the way a joint bends: from a straight knee whose range is 0 to 150 degrees, a target
        that needs the knee bent would have it bend backwards, which its limit forbids, so it stays straight
        and the chain gets stuck; and it never rolls a bone, so a hinge whose plane misses the goal stays
        so. Bent halfway into its range, a joint bends the allowed way; turned toward the goal (to the pole,
        with one), the chain bends in a plane through it.
        """
        short = np.flatnonzero(best.error > self.tolerance)
        bones = best.quats.shape[0]
        self._retry(best, goals, poles, short, np.broadcast_to(self.limits.bent(), (short.size, bones, 4)))

    def retry_random(
        self, best: Best, goals: FloatArray, poles: FloatArray | None, random: np.random.Generator
    ) -> None:
        """Solve the frames still short of a target within the chain's length again, from random poses within
        the limits turned toward the goal.

        Where the limits leave few ways to a target (three hinges for the tip's three coordinates, cones that
        only just allow it), FABRIK from the start pose and from the bent one can end where no small turn
        comes closer; from elsewhere it often finds the way. A target beyond the chain's length gets no
        restart: no pose reaches it.
        """
        reach = float(self.rest.lengths.sum())
        short = np.flatnonzero((best.error > self.tolerance) & (np.linalg.norm(goals, axis=1) <= reach))
        poses = self.limits.clamp(quat_normalize(random.normal(size=(short.size, best.quats.shape[0], 4))))
        self._retry(best, goals, poles, short, poses)

    def _retry(
        self, best: Best, goals: FloatArray, poles: FloatArray | None, rows: NDArray[np.intp], poses: FloatArray
    ) -> None:
        """Solve the frames ``rows`` again from ``poses`` (len(rows), m, 4) turned toward their goals (to the
        pole, with one), keeping what comes closer."""
        if rows.size:
            scales = best.scales[:, rows]
            turned = self.turn(poses, scales, goals[rows], _rows(poles, rows))
            self.record(RESTART, turned, scales)
            best.keep_better(rows, self.solve(Best(rows_of(turned), scales, *_tail(best, rows)), goals[rows]))

    def stretch(self, best: Best, goals: FloatArray) -> None:
        """Lengthen the bones of frames that fell short, by their stretch shares, and solve those again.

        Each round adds the remaining distance to the bones in proportion to ``length * share``: exact for a
        chain that points straight at its target, and a step toward it otherwise."""
        stretchable = float((self.rest.lengths * self.limits.stretch).sum())
        for _ in range(STRETCH_ROUNDS):
            short = np.flatnonzero(best.error > self.tolerance)
            if short.size == 0:
                break
            grown = best.scales[:, short] + self.limits.stretch[:, None] * (best.error[short] / stretchable)
            self.record(LENGTHENED, frames_first(best.quats[..., short]), grown)
            attempt = Best(best.quats[..., short], grown, np.zeros(short.size, dtype=np.int64), best.error[short])
            best.keep_better(short, self.solve(attempt, goals[short]))

    def turn(self, quats: FloatArray, scales: FloatArray, goals: FloatArray, poles: FloatArray | None) -> FloatArray:
        """``turn_toward`` with this chain, its limits and pole angle: rotations (F, m, 4) and scales (m, F) ->
        rotations (F, m, 4)."""
        tips = frames_first(self.steps.pose(rows_of(quats), scales).joints[-1:])[:, 0]
        return turn_toward(self.rest, self.limits, quats, tips, goals, poles, self.pole_angle)

    def swivel_to(self, best: Best, reference: FloatArray, goals: FloatArray) -> None:
        """Turn each frame's best pose about its root-to-tip line to where its root is nearest ``reference``'s
        (F, m, 4) (see ``swivel_nearest``). A frame keeps the turned pose unless that moves its tip farther
        from the goal (beyond the tolerance, and beyond rounding: out of reach, every turn misses by the same
        distance), as the root's limits can make it."""
        tips = frames_first(self.steps.pose(best.quats, best.scales).joints[-1:])[:, 0]
        turned = rows_of(swivel_nearest(self.rest, self.limits, frames_first(best.quats), tips, reference))
        error = self.steps.pose(turned, best.scales).error(np.ascontiguousarray(goals.T))
        rounding = ROUNDING * float(self.rest.lengths.sum()) * best.scales.max(axis=0)
        keep = np.flatnonzero(error <= np.maximum(best.error, self.tolerance) + rounding)
        best.quats[..., keep], best.error[keep] = turned[..., keep], error[keep]


def _tail(best: Best, rows: NDArray[np.intp]) -> tuple[NDArray[np.int64], FloatArray]:
    """No iterations yet and the errors of ``rows``: a new attempt on them from other rotations."""
    return np.zeros(rows.size, dtype=np.int64), best.error[rows]


def _rows(array: FloatArray | None, rows: NDArray[np.intp]) -> FloatArray | None:
    return None if array is None else array[rows]


def as_rotations(rotations: npt.ArrayLike, frames: int, bones: int) -> FloatArray:
    quats = np.asarray(rotations, dtype=np.float64)
    if quats.shape not in {(bones, 4), (1, bones, 4), (frames, bones, 4)}:
        raise ValueError(
            f"rotations must have shape ({bones}, 4), (1, {bones}, 4) or ({frames}, {bones}, 4), got {quats.shape}"
        )
    if not np.isfinite(quats).all():
        raise ValueError("rotations contain NaN or infinity")
    size = np.linalg.norm(quats, axis=-1, keepdims=True)
    if (size < 1e-6).any():
        raise ValueError("rotations contain a zero quaternion")
    return np.broadcast_to(quats / size, (frames, bones, 4)).copy()
