"""``solve_tree``: FABRIK for a tree of joints with several end effectors (Aristidou & Lasenby 2011), on joint
positions, vectorised across frames.

This is the paper's algorithm as written, the reference the solver on bones is measured against
(``scripts/bench/bench_solver.py``, the tests); the add-on itself bakes trees with ``bones.tree_solve`` (on the bones'
rotations, with their limits, poles and stretch)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import DEFAULT_MAX_ITERATIONS, DEFAULT_MIN_IMPROVEMENT, DEFAULT_TOLERANCE, FloatArray, Stopping
from .iterate import iterate
from .tree import Tree
from .tree_layout import Layout, layout
from .tree_passes import backward, errors, forward
from .warm_start import solve_warm

#: A frame stops when its best ``rms_error`` has not shrunk by ``min_improvement`` of itself over this many
#: iterations in a row: on a tree one iteration can lose a little ground that the next ones win back.
PATIENCE = 10


@dataclass(frozen=True)
class TreeReach:
    """How close a tree's effectors came, per frame (what ``TreeSolution`` and ``TreePoseSolution`` share).

    Attributes
    ----------
    iterations : ndarray of int, shape (F,)
        Iterations run.
    errors : ndarray, shape (F, E)
        Distance from each effector to its target, in scene units.
    reached : ndarray of bool, shape (F, E)
        ``errors <= tolerance``, per effector.
    rms_error : ndarray, shape (F,)
        The weighted root-mean-square of the errors, ``sqrt(sum(weights * errors**2) / sum(weights))``: the
        measure the best pose is chosen by, among poses that do not reach every target.
    """

    iterations: NDArray[np.int64]
    errors: FloatArray
    reached: NDArray[np.bool_]
    rms_error: FloatArray

    @property
    def all_reached(self) -> NDArray[np.bool_]:
        """Per frame, whether every effector is within tolerance, shape (F,)."""
        return np.asarray(self.reached.all(axis=1))


@dataclass(frozen=True)
class TreeSolution(TreeReach):
    """The result of ``solve_tree``, per frame: ``TreeReach``, and

    Attributes
    ----------
    joints : ndarray, shape (F, n, 3)
        Every joint's position: the best pose seen.
    """

    joints: FloatArray


def solve_tree(
    tree: Tree,
    effectors: npt.ArrayLike,
    targets: npt.ArrayLike,
    *,
    weights: npt.ArrayLike | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT,
    warm_start: bool = True,
) -> TreeSolution:
    """Move several end effectors of a tree to their targets on each frame, keeping the root where it is,
    every segment length and every rigid body's offsets.

    Parameters
    ----------
    tree : Tree
        The structure and the start pose (the root stays at ``tree.joints[0]``).
    effectors : array-like of int, shape (E,)
        Distinct joints (not the root) that have a target: leaves or any joint on the way.
    targets : array-like, shape (F, E, 3)
        Each effector's target on each frame.
    weights : array-like, shape (E,), optional
        How hard each effector pulls (> 0; default all 1). Where branches meet, the joint goes to the centroid
        of where each branch wants it, each weighted by the total weight of the effectors beyond it (and its
        own target by its own weight). Only their ratios matter. When the targets cannot all be reached, the
        pose settles on a compromise that misses the heavier effectors by less.
    tolerance : float
        A frame is done once every effector is this close to its target (scene units, > 0).
    max_iterations : int
        Stop after this many iterations (>= 1).
    min_improvement : float
        Stop early when an iteration shrinks ``rms_error`` by less than this fraction of it (>= 0).
    warm_start : bool
        As for ``solve_frames``: if False every frame starts from ``tree.joints`` (each frame's result is the
        same as solving it alone); if True frames start from the frame before, in blocks of up to
        ``WARM_START_BLOCK`` frames solved at once, a block ending early at a frame where some joint moves more
        than ``JUMP_RATIO`` times as far as the farthest-moving target (plus ``tolerance``).

    Returns
    -------
    TreeSolution
        Per frame the best pose seen (the start pose included): one with every effector within tolerance if
        one was found, else the one with the smallest ``rms_error``.

    Raises
    ------
    ValueError
        Naming the problem: an effector that is the root, out of range or repeated; targets of the wrong
        shape or not finite; a weight that is not positive; a bad tolerance or iteration limit.
    """
    joint_of = _as_effectors(effectors, tree.size)
    goals = _as_targets(targets, len(joint_of))
    stopping = Stopping.checked(tolerance, max_iterations, min_improvement)
    plan = layout(tree, joint_of, _as_weights(weights, len(joint_of)))
    start = plan.to_rows(tree.joints[:, :, None])
    goals_t = np.ascontiguousarray(goals.transpose(1, 2, 0))  # (E, 3, F)

    def solve_block(P: FloatArray, aims: FloatArray) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
        return _solve_block(P, plan, aims, stopping)

    if warm_start:
        P, iterations, _ = solve_warm(start[:, :, 0], goals_t, solve_block, stopping.tolerance)
    else:
        P, iterations, _ = solve_block(np.repeat(start, goals_t.shape[2], axis=2), goals_t)
    error = errors(P, plan, goals_t).T
    return TreeSolution(
        joints=np.ascontiguousarray(plan.to_joints(P).transpose(2, 0, 1)),
        iterations=iterations,
        errors=error,
        reached=error <= stopping.tolerance,
        rms_error=weighted_rms(error.T, plan.weights),
    )


def weighted_rms(error: FloatArray, weights: FloatArray) -> FloatArray:
    """Weighted root-mean-square over effectors: errors (E, m) and weights (E,) -> (m,)."""
    return np.asarray(np.sqrt((weights[:, None] * error * error).sum(axis=0) / weights.sum()))


def _solve_block(
    P: FloatArray, plan: Layout, targets: FloatArray, stopping: Stopping
) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """Iterate every frame of the working array ``P`` (rows, 3, m) toward ``targets`` (E, 3, m) until it stops
    (every effector within tolerance, ``rms_error`` stalled for ``PATIENCE`` iterations, or out of iterations);
    returns each frame's best pose, its iterations and its ``rms_error``."""

    def iteration(work: FloatArray, lengths: FloatArray, aims: FloatArray, bases: FloatArray) -> None:
        forward(work, plan, aims)
        backward(work, plan, bases)

    def measure(work: FloatArray, aims: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
        error = errors(work, plan, aims)
        return weighted_rms(error, plan.weights), (error <= stopping.tolerance).all(axis=0)

    return iterate(
        P, np.empty(0), targets, iteration, stopping, measure=measure, root=int(plan.rows[0]), patience=PATIENCE
    )


def _as_effectors(effectors: npt.ArrayLike, joint_count: int) -> NDArray[np.int64]:
    array = np.asarray(effectors)
    if array.ndim != 1 or array.size < 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"effectors must be joint indices of shape (E,), E >= 1, got {array.dtype} {array.shape}")
    bad = array[(array < 1) | (array >= joint_count)]
    if bad.size:
        raise ValueError(f"effectors must be joints 1 to {joint_count - 1} (the root cannot move), got {int(bad[0])}")
    values, counts = np.unique(array, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"effectors must be distinct: joint {int(values[counts > 1][0])} is given twice")
    return array.astype(np.int64)


def _as_targets(targets: npt.ArrayLike, effector_count: int) -> FloatArray:
    try:
        array = np.array(targets, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"targets must be numeric: {exc}") from exc
    if array.ndim != 3 or array.shape[1:] != (effector_count, 3) or array.shape[0] < 1:
        raise ValueError(
            f"targets must have shape (F, {effector_count}, 3), one point per frame and effector, got {array.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(array).all(axis=(1, 2)))
    if bad.size:
        raise ValueError(f"targets contains NaN or infinity at frame index {int(bad[0])}")
    return array


def _as_weights(weights: npt.ArrayLike | None, effector_count: int) -> FloatArray:
    if weights is None:
        return np.ones(effector_count)
    try:
        array = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"weights must be numeric: {exc}") from exc
    if array.shape != (effector_count,):
        raise ValueError(f"weights must have shape ({effector_count},), one per effector, got {array.shape}")
    if not (np.isfinite(array) & (array > 0)).all():
        raise ValueError(f"weights must be positive finite numbers, got {array.tolist()}")
    return array
