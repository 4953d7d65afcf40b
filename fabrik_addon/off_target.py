"""Why a tip misses its goal: the frames where Blender's evaluation of a bake's keys puts a chain's tip (or a
planted foot's ball) farther from its goal than the tolerance, each put down to one cause, so that a report
names it and no frame misses silently. Pure numpy.

The causes, in the order they are tried on each frame that misses:

``"out of reach"``
    The goal is farther from the chain's root than its bones reach (or nearer than they fold), so no pose
    gets there (for a planted foot: even with the hips lowered, where that was asked). Where the tip bone
    turns to its target's rotation in full, its head has one place to be (``tip_heads``): the bones above it
    must reach that.
``"soft reach"``
    Soft reach eased the tip short of a goal near full reach, as asked.
``"IK limits"``
    The solve could not get there within the chain's IK limits.
``"goals apart"``
    The chain shares bones with other chains of a tree whose goals pull them apart: no pose puts every tip on
    its goal, and the solve settled where the goals balance (more Iterations do not help).
``"not converged"``
    The solve ran out of iterations short of a goal within reach (more Iterations may get there).
``"within key error"``
    The solve got there, and Blender plays the keys kept (a bake with a Key Error keeps fewer) within the
    Key Error of it, as asked.
``"the scene"``
    The solve got there, but Blender plays the keys elsewhere: something the bake does not own moves the
    chain (a constraint, a driver), or float32 rounding beyond a tolerance too small for it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .solver import FloatArray

#: Every cause a report names, in the order they are tried.
CAUSES = ("out of reach", "soft reach", "IK limits", "goals apart", "not converged", "within key error", "the scene")


def reach_span(lengths: Sequence[float] | FloatArray) -> tuple[float, float]:
    """How near and how far from its root a chain of bones of ``lengths`` can put its tip: folded as far as it
    goes (the longest bone less all the others, or 0) and straight (their sum)."""
    lengths = np.asarray(lengths, dtype=np.float64)
    total = float(lengths.sum())
    return max(0.0, 2.0 * float(lengths.max()) - total), total


def beyond_reach(
    roots: FloatArray, goals: FloatArray, span: tuple[float, float], scales: FloatArray | float = 1.0
) -> NDArray[np.bool_]:
    """Frames whose goal (F, 3) no pose of a chain hanging from ``roots`` (F, 3) reaches: farther from the root
    than the chain's ``span`` (``reach_span``, in the chain's own units, ``scales`` (F,) world units each), or
    nearer. A chain that stretches reaches farther: leave it out."""
    distance = np.linalg.norm(np.asarray(goals) - np.asarray(roots), axis=-1)
    near, far = (np.asarray(scales, dtype=np.float64) * bound for bound in span)
    return np.asarray((distance > far * (1.0 + 1e-9)) | (distance < near * (1.0 - 1e-9)))


def tip_heads(goals: FloatArray, orientations: FloatArray, tip_lengths: FloatArray | float) -> FloatArray:
    """Compute where a tip bone's head must be for its tail to be on ``goals`` (F, 3) with the bone turned to
    ``orientations`` (F, 3, 3; its Y axis, the second column, along the bone), the bone ``tip_lengths`` (F,)
    long in world units: the goal the bones above it must reach."""
    axes = np.asarray(orientations, dtype=np.float64)[:, :, 1]
    lengths = np.asarray(tip_lengths, dtype=np.float64).reshape(-1, 1)
    return np.asarray(goals, dtype=np.float64) - axes * lengths


def off_target_causes(
    frames: Sequence[int],
    tips: FloatArray,
    goals: FloatArray,
    *,
    tolerance: float,
    out_of_reach: NDArray[np.bool_],
    eased: NDArray[np.bool_],
    unsolved: NDArray[np.bool_],
    limited: bool,
    stalled: NDArray[np.bool_] | None = None,
    key_error: float = 0.0,
) -> dict[str, tuple[int, ...]]:
    """Compute the frames where a tip (F, 3), as Blender evaluates the keys, is farther than ``tolerance`` from
    its goal (F, 3), by cause (``CAUSES``, those with frames only): its goal ``out_of_reach`` (F,), ``eased`` (F,)
    by soft reach, or neither and the solve short of it (``unsolved``, (F,)) on a chain ``limited`` by IK limits,
    or in a tree whose solve ``stalled`` (F,) there with iterations left (its goals apart; None: not in a tree),
    or not; or solved, and the keys kept within ``key_error`` of it (with a tolerance to spare), or the scene
    plays it elsewhere. Empty where the tip is on its goal on every frame."""
    distance = np.linalg.norm(np.asarray(tips) - np.asarray(goals), axis=-1)
    missed = distance > tolerance * (1.0 + 1e-6)
    reachable = missed & ~out_of_reach & ~eased
    short = reachable & unsolved & (not limited)
    apart = short & (np.zeros_like(short) if stalled is None else np.asarray(stalled))
    kept = reachable & ~unsolved & (distance <= (tolerance + key_error) * (1.0 + 1e-6)) & (key_error > 0.0)
    causes = {
        "out of reach": missed & out_of_reach,
        "soft reach": missed & eased & ~out_of_reach,
        "IK limits": reachable & unsolved & limited,
        "goals apart": apart,
        "not converged": short & ~apart,
        "within key error": kept,
        "the scene": reachable & ~unsolved & ~kept,
    }
    found = {cause: tuple(int(frames[i]) for i in np.flatnonzero(where).tolist()) for cause, where in causes.items()}
    return {cause: where for cause, where in found.items() if where}
