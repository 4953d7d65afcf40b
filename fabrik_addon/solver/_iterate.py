"""The iteration loop both solvers share: stopping rules, best solution seen, and frames dropping out.

Frames that have reached the target, stalled, or run out of iterations leave the working set, so each
iteration only pays for the frames still moving.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

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
        Stop when an iteration shrinks the error by less than this fraction of it (the solver has stalled).
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
) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """Run ``iteration`` on every frame until each one stops; keep each frame's best pose.

    Parameters
    ----------
    P : ndarray, shape (n+1, 3, m)
        Start poses; not modified. Row 0 holds the roots, which stay fixed.
    lengths : ndarray, shape (n,)
    targets : ndarray, shape (3, m)
    iteration : callable
        One iteration of a solver (see ``Iteration``).
    stopping : Stopping

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
    for count in range(1, stopping.max_iterations + 1):
        if active.size == 0:
            break
        iteration(work, lengths, work_targets, bases)
        error = norms(work[-1] - work_targets)
        iterations[active] = count
        improved = error < best_error[active]
        best[:, :, active[improved]] = work[:, :, improved]
        best_error[active[improved]] = error[improved]
        going = (error > stopping.tolerance) & (previous - error > stopping.min_improvement * previous)
        if not going.all():
            active, work = active[going], _frames(work, going)
            work_targets, bases = _frames(work_targets, going), _frames(bases, going)
            error = error[going]
        previous = error
    return best, iterations, best_error


def _frames(array: FloatArray, frames: NDArray[np.intp] | NDArray[np.bool_]) -> FloatArray:
    """The given frames (last axis) of ``array``, laid out frames last again: indexing the last axis with an
    array lays the result out frames first, and every row the passes touch would then be strided."""
    return np.ascontiguousarray(array[..., frames])
