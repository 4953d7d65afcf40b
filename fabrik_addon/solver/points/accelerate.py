"""Secant acceleration of slow FABRIK frames: extrapolated FABRIK iterations.

Near full reach FABRIK crawls: the chain is nearly straight, and each iteration shrinks the error by a
fraction of a percent (a 32-bone tail at 93-99% of its reach took up to 479 iterations). Treating one FABRIK
iteration as a map ``F`` on the joint positions, a crawling frame's steps ``g = F(x) - x`` barely change
from one iteration to the next, and the secant through the last two steps (Anderson acceleration with a
memory of one) predicts where they lead:

    x_next = F(x) - damping * gamma * (F(x) - F(x_prev)),   gamma = <g, g - g_prev> / |g - g_prev|^2

taken only forward (where the steps grow, gamma > 0, it would point back the way the chain came). Damped
by one half this took the tail's hard frames from 479 to 36 iterations (full steps overshoot
and take longer). The extrapolated pose breaks segment lengths, so it is never a result: it only starts the
next FABRIK iteration, which puts every joint back at its segment's length and the root back on its base,
and the solver keeps the best of the FABRIK poses. Every sum runs over the joints of one frame in a fixed
order, so a frame's result does not depend on the frames solved beside it.

Frames that converge quickly never see it: a frame is accelerated only once it has run ``AFTER`` plain
iterations and its last one still shrank the error by less than ``1 - SLOW_RATIO``, and from then on.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..core import FloatArray, dots

#: Plain FABRIK iterations a frame runs before it may be accelerated: frames done in fewer are untouched.
AFTER = 20
#: A frame is slow, and accelerated from then on, when an iteration leaves more than this share of its error.
SLOW_RATIO = 0.9
#: How much of the secant's extrapolation is taken: full steps overshoot on nearly straight chains.
DAMPING = 0.5
#: An accelerated frame's error is not monotone, so it stops when its best error has not shrunk by
#: ``min_improvement`` for this many iterations in a row, rather than after one such iteration.
PATIENCE = 6


class Secant:
    """The secant state of the frames still iterating: their last FABRIK step and result, and which of them
    are accelerated. Call ``record`` from iteration ``AFTER - 1`` on, so that a frame has a secant when it
    first may need one. (An accelerated frame stops by patience: see ``iterate``.)"""

    def __init__(self, frames: int) -> None:
        self.fast = np.zeros(frames, dtype=np.bool_)
        self.step: FloatArray | None = None
        self.result: FloatArray | None = None

    def keep(self, going: NDArray[np.bool_]) -> None:
        """Drop the frames that stopped (``going`` False)."""
        self.fast = self.fast[going]
        if self.step is not None and self.result is not None:
            self.step = np.compress(going, self.step, axis=-1)
            self.result = np.compress(going, self.result, axis=-1)

    def accelerate(self, slow: NDArray[np.bool_]) -> None:
        """Accelerate the frames ``slow`` too, from now on."""
        self.fast |= slow

    def record(self, work: FloatArray, before: FloatArray) -> None:
        """Remember the FABRIK iteration that took ``before`` to ``work`` (both (n+1, 3, m)), then move the
        accelerated frames of ``work`` along the secant, in place."""
        step = work - before
        result = work.copy()
        if self.step is not None and self.result is not None and self.fast.any():
            change = step - self.step
            square = joint_sums(dots(change, change))
            gamma = joint_sums(dots(step, change)) / np.where(square > 0, square, 1.0)
            # Only forward: where the steps grow (gamma > 0) the secant points back the way the chain came.
            gamma = np.where(self.fast & (square > 0), DAMPING * np.minimum(gamma, 0.0), 0.0)
            work[1:] -= gamma * (result[1:] - self.result[1:])
        self.step, self.result = step, result


def joint_sums(rows: FloatArray) -> FloatArray:
    """Sums over the first axis, (k, m) -> (m,), added in a fixed pairwise order: ``sum`` adds in an order
    that depends on the array's layout, and so on how many frames there are."""
    while rows.shape[0] > 1:
        half = rows.shape[0] // 2
        pairs = rows[:half] + rows[half : 2 * half]
        rows = np.concatenate([pairs, rows[2 * half :]]) if rows.shape[0] % 2 else pairs
    return np.asarray(rows[0], dtype=np.float64)
