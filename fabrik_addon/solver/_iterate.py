"""The iteration loop both solvers share: stopping rules, best solution seen, and frames dropping out.

Frames that have reached the target, stalled, or run out of iterations leave the working set, so each
iteration only pays for the frames still moving.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ._accelerate import AFTER, SLOW_RATIO, Secant
from ._geometry import norms
from .validate import FloatArray

#: One iteration of a solver over many frames: (joints (n+1, 3, m), lengths (n,), targets (3, m),
#: bases (3, m)) -> None, updating the joints in place.
Iteration = Callable[[FloatArray, FloatArray, FloatArray, FloatArray], None]


@dataclass(frozen=True)
class Stopping:
    """When a frame stops iterating.

    Attributes
    ----------
    tolerance : float
        Stop once the end effector is this close to the target (scene units).
    max_iterations : int
        Stop after this many iterations.
    min_improvement : float
        Stop when an iteration shrinks the error by less than this fraction of it (the solver has stalled);
        an accelerated frame (see ``iterate``), whose error is not monotone, stops when its best error has
        not shrunk by this fraction for ``_accelerate.PATIENCE`` iterations in a row.
    """

    tolerance: float
    max_iterations: int
    min_improvement: float


def iterate(
    P: FloatArray,
    lengths: FloatArray,
    targets: FloatArray,
    iteration: Iteration,
    stopping: Stopping,
    accelerate: bool = False,
) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """Run ``iteration`` on every frame until each one stops; keep each frame's best pose.

    With ``accelerate``, frames still crawling after ``_accelerate.AFTER`` iterations run extrapolated
    iterations from then on (``_accelerate``: each starts from a secant extrapolation of the last two);
    ``iteration`` must then restore every segment length and the root, as FABRIK's does. Frames that stop
    sooner get exactly the plain iterations' result.

    Parameters
    ----------
    P : ndarray, shape (n+1, 3, m)
        Start poses; not modified. Row 0 holds the roots, which stay fixed.
    lengths : ndarray, shape (n,)
    targets : ndarray, shape (3, m)
    iteration : callable
        One iteration of a solver (see ``Iteration``).
    stopping : Stopping
    accelerate : bool
        Accelerate slow frames (for FABRIK; CCD rotates and would keep the extrapolation's lengths).

    Returns
    -------
    best : ndarray, shape (n+1, 3, m)
        The pose with the smallest end-effector error each frame reached (its start pose included).
    iterations : ndarray of int, shape (m,)
        Iterations run per frame.
    error : ndarray, shape (m,)
        Distance from the best pose's end effector to the target.
    """
    best = P.copy()
    best_error = norms(P[-1] - targets)
    iterations = np.zeros(P.shape[2], dtype=np.int64)
    active = np.flatnonzero(best_error > stopping.tolerance)
    work, work_targets, bases = _frames(P, active), _frames(targets, active), _frames(P[0], active)
    previous = best_error[active]
    secant = Secant(active.size)
    tracking = False
    # A frame on plain iterations goes on only while it improves, so its best pose is the one it is at: it is
    # written to ``best`` when the frame stops (or starts tracking for acceleration), not on every iteration.
    for count in range(1, stopping.max_iterations + 1):
        if active.size == 0:
            break
        tracking = accelerate and count >= AFTER - 1
        if tracking and count == AFTER - 1:
            best[:, :, active] = work
        before = work.copy()
        iteration(work, lengths, work_targets, bases)
        error = norms(work[-1] - work_targets)
        iterations[active] = count
        best_before = best_error[active]
        improved = error < best_before
        if tracking:
            best[:, :, active[improved]] = work[:, :, improved]
        best_error[active[improved]] = error[improved]
        going = previous - error > stopping.min_improvement * previous
        if tracking:
            going = secant.going(best_before - error > stopping.min_improvement * best_before, going)
            if count >= AFTER:
                secant.accelerate(going & (error > SLOW_RATIO * previous))
        going &= error > stopping.tolerance
        if tracking:
            secant.record(work, before)
        if not going.all():
            if not tracking:
                stopped = np.flatnonzero(~going)
                last = _frames(work, stopped), _frames(before, stopped)
                best[:, :, active[stopped]] = np.where(improved[stopped], *last)
            kept = np.flatnonzero(going)
            active, work, error = active[kept], _frames(work, kept), error[kept]
            work_targets, bases = _frames(work_targets, kept), _frames(bases, kept)
            secant.keep(going)
        previous = error
    if active.size and not tracking:  # out of iterations, still improving on plain iterations
        best[:, :, active] = work
    return best, iterations, best_error


def _frames(array: FloatArray, frames: NDArray[np.intp]) -> FloatArray:
    """The given frames (last axis) of ``array``, laid out frames last again, so that every row the passes touch
    is contiguous: ``take`` keeps that layout, where indexing the last axis with an array lays the result out
    frames first (and copying that back costs ten times as much). All of them (``frames`` are increasing) is a
    plain copy, five times as fast as taking them."""
    if frames.size == array.shape[-1]:
        return array.copy()
    return np.take(array, frames, axis=-1)
