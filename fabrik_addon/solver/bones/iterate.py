"""The iteration loop of the solvers on bones, a chain's and a tree's: stopping rules, best pose seen, and
frames dropping out (as ``points.iterate`` is for points); and ``Posed``, the poses a step makes.

Every iteration of a step costs about the same whatever the number of frames still at work (numpy's cost per
call dominates on a few hundred frames), so a run lasts as long as its slowest frame: frames leave as soon as
they stop gaining, and what they need next (another step, another start) runs on them alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Generic, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..core import FloatArray


@dataclass(frozen=True)
class Posed:
    """Poses of many frames as a step makes them, as rows (``core.quat_rows``): each bone's local rotation
    (m, 4, F), its scale along its own Y axis (m, F) and its orientation in the base frame (m, 4, F). A chain's
    (``chain_steps.ChainPosed``) adds its joints, a tree's (``tree_steps.TreePosed``) its heads and effectors.

    Attributes
    ----------
    local : ndarray, shape (m, 4, F)
    scales : ndarray, shape (m, F)
    world : ndarray, shape (m, 4, F)
    """

    local: FloatArray
    scales: FloatArray
    world: FloatArray

    def take(self: P, frames: NDArray[np.intp]) -> P:
        """The poses of ``frames``, every array laid out frames last (indexing the last axis with an array lays
        the result out frames first, and every row the steps touch would then be strided)."""
        arrays = {
            field.name: np.ascontiguousarray(value[..., frames])
            for field in fields(self)
            if isinstance(value := getattr(self, field.name), np.ndarray)
        }
        return replace(self, **arrays)

    def error(self, goals: FloatArray) -> FloatArray:
        """How far each frame is from its goals (F,): the measure the best pose is kept by."""
        raise NotImplementedError


P = TypeVar("P", bound=Posed)
#: One iteration on many frames: (poses, goals) -> the next poses.
Step = Callable[[P, FloatArray], P]


class Steps(Protocol, Generic[P]):
    """A solver's steps (``chain_steps.ChainSteps``, ``tree_steps.TreeSteps``): forward kinematics of local
    rotations (m, 4, F) and Y scales (m, F), and the two steps."""

    def pose(self, local: FloatArray, scales: FloatArray) -> P: ...

    def fabrik(self, posed: P, goals: FloatArray) -> P: ...

    def least_squares(self, posed: P, goals: FloatArray) -> P: ...


@dataclass(frozen=True)
class Best:
    """The best pose found so far on each frame, as rows: rotations (m, 4, F), scales (m, F), iterations
    spent (F,) and tip errors (F,). The arrays are updated in place as attempts improve on them."""

    quats: FloatArray
    scales: FloatArray
    iterations: NDArray[np.int64]
    error: FloatArray

    @classmethod
    def start(cls, quats: FloatArray) -> Best:
        """Poses to start from, rotations (F, m, 4) with unit scales, none solved yet: a copy (the best poses
        are updated in place; ``rows_of`` one frame would be a view of ``quats``)."""
        frames, bones = quats.shape[:2]
        rows = np.array(quats.transpose(1, 2, 0), order="C")
        return cls(rows, np.ones((bones, frames)), np.zeros(frames, dtype=np.int64), np.full(frames, np.inf))

    def rows(self, rows: NDArray[np.intp]) -> Best:
        """The frames ``rows``, laid out frames last (see ``Posed.take``)."""
        quats, scales = np.ascontiguousarray(self.quats[..., rows]), np.ascontiguousarray(self.scales[:, rows])
        return Best(quats, scales, self.iterations[rows], self.error[rows])

    def place(self, rows: NDArray[np.intp], other: Best) -> None:
        """Make ``other``'s poses (of as many frames as ``rows``) those of the frames ``rows``, iterations too."""
        self.quats[..., rows], self.scales[:, rows] = other.quats, other.scales
        self.iterations[rows], self.error[rows] = other.iterations, other.error

    def keep_better(self, rows: NDArray[np.intp], attempt: Best) -> None:
        """Count ``attempt``'s iterations on ``rows`` and keep its poses where they come closer."""
        self.iterations[rows] += attempt.iterations
        better = attempt.error < self.error[rows]
        keep = rows[better]
        self.quats[..., keep], self.scales[:, keep], self.error[keep] = (
            attempt.quats[..., better],
            attempt.scales[:, better],
            attempt.error[better],
        )


@dataclass(frozen=True)
class Pace:
    """When a frame leaves a run of one step: once its best error has not shrunk to ``progress`` times what it
    was within ``window`` iterations (the step has stalled, or gains so slowly that another step or start does
    better), besides reaching the target or running out of iterations."""

    progress: float
    window: int


#: FABRIK brings a chain near its goal in its first iteration, then creeps (a 48-bone chain near its goal
#: gains a tenth per twenty iterations) or cycles against the limits, while an iteration costs about ten of
#: least squares; least squares from there shrinks the error by about three times a step where no limit holds
#: it back. So frames go on to least squares after one iteration of FABRIK (``progress`` 0: only reaching the
#: target counts as gaining), and leave least squares when two steps have not halved their error (damped by
#: the miss, a step near the goal more than halves it where no limit holds it back).
ONCE = Pace(progress=0.0, window=1)
FAST_LEAST_SQUARES = Pace(progress=0.5, window=2)
#: Frames still short: limited chains creep toward their goal for a while, then cycle.
CREEP = Pace(progress=1.0 - 1e-6, window=20)


#: What an attempt runs after its first FABRIK iteration: (step, pace, from the attempt's start or from the
#: best pose so far), each on the frames still short. For a chain: least squares while it gains quickly
#: (``QUICK``), then FABRIK from the start and least squares from the best, each as long as it gains at all
#: (``CREEPING``).
Schedule = tuple[tuple[str, Pace, str], ...]
QUICK: Schedule = (("least_squares", FAST_LEAST_SQUARES, "best"),)
CREEPING: Schedule = (("fabrik", CREEP, "start"), ("least_squares", CREEP, "best"))
CHAIN_SCHEDULE: Schedule = QUICK + CREEPING


def attempt(
    steps: Steps[P], start: Best, goals: FloatArray, stopping: tuple[float, int], schedule: Schedule = CHAIN_SCHEDULE
) -> Best:
    """One attempt from ``start``'s poses (not modified) toward ``goals`` (F, ...), frames first: one FABRIK
    iteration, then ``schedule`` on the frames still short (``go_on``). Returns each frame's best pose."""
    best = run(steps.pose, steps.fabrik, ONCE, start, _frames_last(goals), stopping)
    go_on(steps, start, best, goals, stopping, schedule)
    return best


def go_on(
    steps: Steps[P], start: Best, best: Best, goals: FloatArray, stopping: tuple[float, int], schedule: Schedule
) -> None:
    """Run ``schedule`` on the frames of ``best`` (updated in place) still short of ``goals`` (F, ...), in turn,
    each step from the attempt's ``start`` or from the best pose so far."""
    rows = _frames_last(goals)
    for name, pace, origin in schedule:
        short = np.flatnonzero(best.error > stopping[0])
        if short.size:
            aims = np.ascontiguousarray(rows[..., short])
            step = steps.fabrik if name == "fabrik" else steps.least_squares
            best.keep_better(
                short, run(steps.pose, step, pace, (start if origin == "start" else best).rows(short), aims, stopping)
            )


def _frames_last(goals: FloatArray) -> FloatArray:
    """Goals (F, ...) as the steps take them, (..., F)."""
    return np.ascontiguousarray(np.moveaxis(goals, 0, -1))


def run(
    pose: Callable[[FloatArray, FloatArray], P],
    step: Step[P],
    pace: Pace,
    start: Best,
    goals: FloatArray,
    stopping: tuple[float, int],
) -> Best:
    """Iterate ``step`` on every frame from ``start``'s poses until it reaches, stalls (see ``Pace``) or runs
    out of iterations.

    Parameters
    ----------
    pose : callable
        Forward kinematics: (local rotations (m, 4, F), Y scales (m, F)) -> poses (``Steps.pose``).
    step : callable
        One iteration on many frames: (poses, goals) -> the next poses (``Steps.fabrik`` or
        ``Steps.least_squares``).
    pace : Pace
    start : Best
        The poses to start from; not modified.
    goals : ndarray, shape (..., F)
        As the steps take them: (3, F) for a chain.
    stopping : (float, int)
        The tolerance and the most iterations.

    Returns
    -------
    Best
        Each frame's best pose (its start included), with ``start``'s scales, the iterations run and its error.
    """
    tolerance, max_iterations = stopping
    posed = pose(start.quats, start.scales)
    best = start.quats.copy()
    best_error = posed.error(goals)
    iterations = np.zeros(goals.shape[-1], dtype=np.int64)
    active = np.flatnonzero(best_error > tolerance)
    work, work_goals = posed.take(active), goals[..., active]
    mark, since = best_error[active], np.zeros(active.size, dtype=np.int64)
    for count in range(1, max_iterations + 1):
        if active.size == 0:
            break
        work = step(work, work_goals)
        error = work.error(work_goals)
        iterations[active] = count
        improved = np.flatnonzero(error < best_error[active])
        best[..., active[improved]] = work.local[..., improved]
        best_error[active[improved]] = error[improved]
        gained = best_error[active] <= pace.progress * mark
        mark = np.where(gained, best_error[active], mark)
        since = np.where(gained, 0, since + 1)
        going = np.flatnonzero((best_error[active] > tolerance) & (since < pace.window))
        if going.size < active.size:
            active, work, work_goals = active[going], work.take(going), work_goals[..., going]
            mark, since = mark[going], since[going]
    return Best(best, start.scales, iterations, best_error)


def rows_of(quats: FloatArray) -> FloatArray:
    """Rotations (F, m, 4) as rows (m, 4, F)."""
    return np.ascontiguousarray(quats.transpose(1, 2, 0))


def frames_first(array: FloatArray) -> FloatArray:
    """Rows (m, k, F) back to (F, m, k)."""
    return np.ascontiguousarray(array.transpose(2, 0, 1))
