"""The iteration loop every solver on points shares (FABRIK and CCD on chains, FABRIK on trees): stopping
rules, the best pose seen, and frames dropping out. The algorithm is the ``Iteration`` it is given; what counts
as the error and as done on a frame is the ``Measure``.

Frames that are done, stalled, or out of iterations leave the working set, so each iteration only pays for the
frames still moving. A frame stops in one of two ways:

- *plain*: as soon as an iteration shrinks its error by less than ``min_improvement`` of it. Its error has
  shrunk on every iteration until then, so its best pose is the one it is at: it is written when the frame
  stops, not on every iteration.
- *patient*: once its best error has not shrunk by ``min_improvement`` for ``patience`` iterations in a row.
  For frames whose error is not monotone: a tree's (one iteration can lose a little ground that the next win
  back), and a chain's accelerated frames (``accelerate``). Their best pose is kept on every iteration.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..core import FloatArray, Stopping, norms
from .accelerate import AFTER, PATIENCE, SLOW_RATIO, Secant
from .fabrik import PlainIteration

#: One iteration of a solver over many frames: (joints (rows, 3, m), lengths (n,), targets (..., 3, m),
#: bases (3, m)) -> None, updating the joints in place (the bases are where the root stays).
Iteration = Callable[[FloatArray, FloatArray, FloatArray, FloatArray], None]
#: How far each frame is from done: (joints (rows, 3, m), targets (..., 3, m)) -> the error per frame (m,), which
#: the best pose is chosen by, and whether the frame is done (m,).
Measure = Callable[[FloatArray, FloatArray], tuple[FloatArray, NDArray[np.bool_]]]


def tip_measure(tolerance: float) -> Measure:
    """A chain's measure: the distance from its last joint to the target, done within ``tolerance``."""

    def measure(P: FloatArray, targets: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
        error = norms(P[-1] - targets)
        return error, ~(error > tolerance)

    return measure


def iterate(
    P: FloatArray,
    lengths: FloatArray,
    targets: FloatArray,
    iteration: Iteration,
    stopping: Stopping,
    *,
    measure: Measure | None = None,
    root: int = 0,
    accelerate: bool = False,
    patience: int = 0,
    plain: Callable[[FloatArray], PlainIteration] | None = None,
) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """Run ``iteration`` on every frame until each one stops; keep each frame's best pose.

    Parameters
    ----------
    P : ndarray, shape (rows, 3, m)
        Start poses; not modified. Row ``root`` holds the roots, which stay fixed.
    lengths : ndarray, shape (n,)
        Passed to ``iteration``.
    targets : ndarray, shape (..., 3, m)
    iteration : callable
        One iteration of a solver (see ``Iteration``).
    stopping : Stopping
    measure : callable, optional
        The error and done test per frame (see ``Measure``); by default a chain's, ``tip_measure``.
    root : int
        The row of the roots.
    accelerate : bool
        Accelerate frames still crawling after ``accelerate.AFTER`` iterations (FABRIK on a chain; see
        ``accelerate``): from then on they run extrapolated iterations and stop by patience. ``iteration`` must
        restore every segment length and the root, as FABRIK's does. Frames that stop sooner get exactly the
        plain iterations' result.
    patience : int
        If above 0, every frame stops by patience from the first iteration, after this many iterations without
        progress (a tree's rule); else frames stop plainly.
    plain : callable, optional
        Makes ``iteration`` for one frame on plain floats from ``lengths`` (``fabrik.plain_iteration``): a chain's
        single frame (the live preview's) then runs on plain floats while it stops plainly, with the same result
        to the bit (``_iterate_one``), then on arrays from where it is if it is to be accelerated.

    Returns
    -------
    best : ndarray, shape (rows, 3, m)
        The pose with the smallest error each frame reached (its start pose included), or the first that was
        done.
    iterations : ndarray of int, shape (m,)
        Iterations run per frame.
    error : ndarray, shape (m,)
        The best pose's error.
    """
    handed: _HandedOver | None = None
    if plain is not None and P.shape[2] == 1 and measure is None and root == 0 and patience == 0:
        solved = _iterate_one(P, targets, plain(lengths), stopping, accelerate)
        if not isinstance(solved, _HandedOver):
            return solved
        handed = solved
    measure = measure or tip_measure(stopping.tolerance)
    best = P.copy()
    best_error, done = measure(P, targets)
    iterations = np.zeros(P.shape[2], dtype=np.int64)
    active = np.flatnonzero(~done)
    work, work_targets, bases = _frames(P, active), _frames(targets, active), _frames(P[root], active)
    previous = best_error[active]
    first = 1
    if handed is not None:  # the one frame's plain iterations so far, as this loop would have left them
        work, first = handed.joints, handed.count
        best_error[:], previous, iterations[:] = handed.best_error, np.array([handed.previous]), first - 1
    patient = _Patience(active.size, patience or PATIENCE, everyone=patience > 0)
    secant = Secant(active.size)
    tracking = False
    for count in range(first, stopping.max_iterations + 1):
        if active.size == 0:
            break
        started = not tracking
        tracking = patience > 0 or (accelerate and count >= AFTER - 1)
        if tracking and started:
            best[:, :, active] = work
        before = work.copy() if not tracking or accelerate else work
        iteration(work, lengths, work_targets, bases)
        error, done = measure(work, work_targets)
        iterations[active] = count
        best_before = best_error[active]
        improved = (error < best_before) | done
        if tracking:
            best[:, :, active[improved]] = work[:, :, improved]
        best_error[active[improved]] = error[improved]
        going = previous - error > stopping.min_improvement * previous
        if tracking:
            going = patient.going(best_before - error > stopping.min_improvement * best_before, going)
            if accelerate and count >= AFTER:
                slow = going & (error > SLOW_RATIO * previous)
                patient.add(slow)
                secant.accelerate(slow)
        going &= ~done
        if tracking and accelerate:
            secant.record(work, before)
        if not going.all():
            if not tracking:
                stopped = np.flatnonzero(~going)
                last = _frames(work, stopped), _frames(before, stopped)
                best[:, :, active[stopped]] = np.where(improved[stopped], *last)
            kept = np.flatnonzero(going)
            active, work, error = active[kept], _frames(work, kept), error[kept]
            work_targets, bases = _frames(work_targets, kept), _frames(bases, kept)
            patient.keep(going)
            secant.keep(going)
        previous = error
    if active.size and not tracking:  # out of iterations, still improving on plain iterations
        best[:, :, active] = work
    return best, iterations, best_error


@dataclass(frozen=True)
class _HandedOver:
    """Where ``_iterate_one`` leaves a frame for the arrays' loop to go on with: its joints (n+1, 3, 1), its best
    error, its last error (``previous``) and the iteration to run next (``count``)."""

    joints: FloatArray
    best_error: float
    previous: float
    count: int


def _iterate_one(
    P: FloatArray, targets: FloatArray, step: PlainIteration, stopping: Stopping, accelerate: bool
) -> tuple[FloatArray, NDArray[np.int64], FloatArray] | _HandedOver:
    """``iterate`` of a chain's one frame (P (n+1, 3, 1), its target (3, 1)) on plain floats, by the plain rule:
    every comparison and every operation (``tip_measure``'s included) that of the arrays' loop for one frame,
    so the same pose, iterations and error to the bit. Where the frame would be accelerated (still crawling
    after ``AFTER`` - 2 iterations), it is handed over to the arrays' loop as that loop would have it then."""
    joints = P[:, :, 0].T.tolist()  # [x, y, z]
    target = targets[:, 0].tolist()
    base = [row[0] for row in joints]
    tolerance, threshold = stopping.tolerance, stopping.min_improvement

    def error_of(pose: list[list[float]]) -> float:
        dx, dy, dz = pose[0][-1] - target[0], pose[1][-1] - target[1], pose[2][-1] - target[2]
        return math.sqrt(dx * dx + dy * dy + dz * dz)

    best_error = previous = error_of(joints)
    count, pose = 0, joints
    if best_error > tolerance:
        for count in range(1, stopping.max_iterations + 1):
            if accelerate and count >= AFTER - 1:
                return _HandedOver(np.array(joints, dtype=np.float64).T[:, :, None], best_error, previous, count)
            before = [row.copy() for row in joints]
            step(joints, target, base)
            error = error_of(joints)
            done = not error > tolerance
            improved = error < best_error or done
            if improved:
                best_error = error
            if done or not previous - error > threshold * previous:
                pose = joints if improved else before
                break
            previous = error
    solved = np.array(pose, dtype=np.float64).T[:, :, None]
    return solved, np.array([count], dtype=np.int64), np.array([best_error])


class _Patience:
    """Which frames stop by patience, and how many iterations in a row each has not progressed."""

    def __init__(self, frames: int, patience: int, everyone: bool) -> None:
        self.patience = patience
        self.patient = np.full(frames, everyone)
        self.stale = np.zeros(frames, dtype=np.int64)

    def going(self, progressed: NDArray[np.bool_], plain_going: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Which frames go on: patient ones while their best error shrank within ``patience`` iterations
        (``progressed`` says whether it did this time), the others by the plain rule (``plain_going``)."""
        self.stale = np.where(progressed, 0, self.stale + 1)
        return np.where(self.patient, self.stale < self.patience, plain_going)

    def add(self, frames: NDArray[np.bool_]) -> None:
        """The frames ``frames`` stop by patience too, from now on, counting from now."""
        self.stale[frames & ~self.patient] = 0
        self.patient |= frames

    def keep(self, going: NDArray[np.bool_]) -> None:
        """Drop the frames that stopped (``going`` False)."""
        self.patient, self.stale = self.patient[going], self.stale[going]


def _frames(array: FloatArray, frames: NDArray[np.intp]) -> FloatArray:
    """The given frames (last axis) of ``array``, laid out frames last again, so that every row the passes touch
    is contiguous: ``take`` keeps that layout, where indexing the last axis with an array lays the result out
    frames first (and copying that back costs ten times as much). All of them (``frames`` are increasing) is a
    plain copy, five times as fast as taking them."""
    if frames.size == array.shape[-1]:
        return array.copy()
    return np.take(array, frames, axis=-1)
