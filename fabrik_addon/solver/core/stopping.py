"""When a solver stops iterating a frame: the tolerance, the most iterations, the least improvement worth going
on for, their defaults, and the one place they are checked."""

from __future__ import annotations

from dataclasses import dataclass

from .validate import non_negative_float, positive_float, positive_int

DEFAULT_TOLERANCE = 1e-3
DEFAULT_MAX_ITERATIONS = 200
DEFAULT_MIN_IMPROVEMENT = 1e-6


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
        Stop when an iteration shrinks the error by less than this fraction of it (the solver has stalled); a
        frame whose error is not monotone (an accelerated chain's, a tree's) stops when its best error has not
        shrunk by this fraction for a few iterations in a row (see ``points.iterate``).
    """

    tolerance: float
    max_iterations: int
    min_improvement: float

    @classmethod
    def checked(
        cls,
        tolerance: float = DEFAULT_TOLERANCE,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        min_improvement: float = DEFAULT_MIN_IMPROVEMENT,
    ) -> Stopping:
        """The stopping rules from a caller's values, checked.

        Raises
        ------
        ValueError
            Naming the value: a tolerance that is not a positive finite number, an iteration limit below 1, a
            negative minimum improvement.
        """
        return cls(
            tolerance=positive_float(tolerance, "tolerance"),
            max_iterations=positive_int(max_iterations, "max_iterations"),
            min_improvement=non_negative_float(min_improvement, "min_improvement"),
        )
