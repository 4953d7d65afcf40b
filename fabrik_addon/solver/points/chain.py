"""FABRIK (and CCD) on a chain of joint positions: ``solve`` (one target) and ``solve_frames`` (one target per
frame)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MIN_IMPROVEMENT,
    DEFAULT_TOLERANCE,
    FALLBACK_DIRECTION,
    FloatArray,
    Stopping,
    as_joints,
    as_point,
    as_points,
    chain_along,
    inner_radius,
    may_bend,
    norms,
    segment_lengths,
    unbend_starts,
    unit_or,
)
from .ccd import ccd_iteration
from .fabrik import fabrik_iteration, plain_iteration
from .history import START, Recorder, point_stages
from .iterate import Iteration, iterate
from .two_bones import two_bone_step
from .warm_start import solve_warm

#: The algorithms on points, by name: each is one iteration the loop (``iterate``) repeats.
METHODS: dict[str, Iteration] = {"fabrik": fabrik_iteration, "ccd": ccd_iteration}


@dataclass(frozen=True)
class Solution:
    """The result of ``solve``.

    Attributes
    ----------
    joints : ndarray, shape (n+1, 3)
        New joint positions, root first: the best pose seen.
    iterations : int
        Iterations run (a target out of reach takes one step).
    error : float
        Distance from the end effector (last joint) to the target, in scene units.
    reached : bool
        ``error <= tolerance``.
    history : ndarray, shape (steps, n+1, 3), or None
        With ``history=True``, the joints after every step (see ``solve``), else None.
    history_steps : tuple of str
        The name of each step of ``history`` (``history``'s ``START``, ``TOWARD``, ``BACK``, CCD's
        ``"turn about joint k"``); empty without history.
    """

    joints: FloatArray
    iterations: int
    error: float
    reached: bool
    history: FloatArray | None = None
    history_steps: tuple[str, ...] = ()


@dataclass(frozen=True)
class FramesSolution:
    """The result of ``solve_frames``: one ``Solution`` per frame, as arrays.

    Attributes
    ----------
    joints : ndarray, shape (F, n+1, 3)
    iterations : ndarray of int, shape (F,)
    error : ndarray, shape (F,)
    reached : ndarray of bool, shape (F,)
    """

    joints: FloatArray
    iterations: NDArray[np.int64]
    error: FloatArray
    reached: NDArray[np.bool_]


def solve(
    joints: npt.ArrayLike,
    target: npt.ArrayLike,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT,
    method: str = "fabrik",
    history: bool = False,
) -> Solution:
    """Move a chain's end effector to a target, keeping its root and segment lengths.

    Parameters
    ----------
    joints : array-like, shape (n+1, 3)
        Start positions of the joints, root first; the last joint is the end effector. Not modified.
    target : array-like, shape (3,)
        Where the end effector should go, in the same units.
    tolerance : float
        Stop once the end effector is this close to the target (scene units, > 0).
    max_iterations : int
        Stop after this many iterations (>= 1).
    min_improvement : float
        Stop early when an iteration shrinks the error by less than this fraction of it (>= 0); a frame on
        extrapolated iterations (below) stops when its best error has not shrunk so for a few iterations in a
        row (``Stopping``).
    method : {"fabrik", "ccd"}
        FABRIK (Aristidou & Lasenby 2011), or Cyclic Coordinate Descent for comparison. FABRIK frames still
        crawling after 20 iterations (near full reach) continue with extrapolated FABRIK iterations, each
        started from a secant extrapolation of the last two (``accelerate``); every returned pose is a
        FABRIK iteration's, and frames done in 20 iterations or fewer are plain FABRIK.
    history : bool
        Also return the joints after every step, to watch the solver work (``Solution.history``). With
        FABRIK, ``2 * iterations + 1`` poses: ``joints`` as given, then after each of the two reaching passes
        of every iteration, from the tip to the root (the tip on the target, the root off its place) and
        back from the root (the root in place); the pose returned is one of the even entries, the best. With
        CCD, ``n * iterations + 1`` poses: ``joints``, then after each joint's turn, from the joint before
        the end effector down to the root. A target out of reach, or too near the root, is solved in one
        step that needs no iterating: every step of that iteration holds its result. Solving costs the
        same without history as before it existed. An accelerated FABRIK iteration starts from the
        extrapolated pose, not from the step before it.

    Returns
    -------
    Solution
        The best pose seen. A target farther than the chain's reach gives the straight chain pointing at
        it; one inside the ball that a single dominant segment leaves around the root gives the chain
        folded back along that segment, pointing at it; both with ``reached`` False unless within
        tolerance.

    Raises
    ------
    ValueError
        Naming the problem: wrong shape, fewer than two joints, a zero-length segment, NaN or infinity, a
        non-positive tolerance, an unknown method.
    """
    point = as_point(target, "target")
    if history:
        return _solve_recorded(joints, point, tolerance, max_iterations, min_improvement, method)
    frames = solve_frames(
        joints,
        point[None],
        tolerance=tolerance,
        max_iterations=max_iterations,
        min_improvement=min_improvement,
        method=method,
        warm_start=False,
    )
    return Solution(
        joints=frames.joints[0],
        iterations=int(frames.iterations[0]),
        error=float(frames.error[0]),
        reached=bool(frames.reached[0]),
    )


def solve_frames(
    joints: npt.ArrayLike,
    targets: npt.ArrayLike,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT,
    method: str = "fabrik",
    warm_start: bool = True,
) -> FramesSolution:
    """Solve one target per frame, vectorised across frames.

    Parameters
    ----------
    joints : array-like, shape (n+1, 3) or (F, n+1, 3)
        The chain's start pose, root first, the root staying there on every frame; or each frame's own start
        pose (its root staying where that pose has it), every frame then solved from its own, as with
        ``warm_start=False``, and a chain of two segments solved with FABRIK put where its iterations end in
        one step (``two_bones``: an animated leg's or arm's frames). Not modified.
    targets : array-like, shape (F, 3)
        The end effector's target on each frame.
    tolerance, max_iterations, min_improvement, method
        As for ``solve``.
    warm_start : bool
        For one start pose only. If False, every frame starts from ``joints``: deterministic, independent of frame
        order, and each frame equals ``solve(joints, targets[f])`` exactly. If True, frames start from earlier
        frames' results, which follow a continuous motion with fewer iterations: the first frame starts from
        ``joints``, then frames are solved in blocks of up to ``WARM_START_BLOCK`` consecutive frames, all of a
        block at once, each starting from the result of the frame just before the block. A block ends early at a
        frame where some joint moves more than ``JUMP_RATIO`` times as far as the target (plus ``tolerance``) since
        the frame before: FABRIK from the block's start chose another solution there, so that frame starts the next
        block, from the frame before it. So every frame either stays that close to the frame before it or is exactly
        ``solve(result[f - 1], targets[f])``.

    Returns
    -------
    FramesSolution
    """
    goals = as_points(targets, "targets").T  # (3, F)
    stopping = _stopping(method, tolerance, max_iterations, min_improvement)
    starts = _start_poses(joints, goals.shape[1])
    lengths = segment_lengths(starts[:, :, 0])
    iteration, accelerate = METHODS[method], method == "fabrik"

    def solve_block(P: FloatArray, aims: FloatArray) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
        return _solve_block(P, lengths, aims, iteration, stopping, accelerate)

    if np.ndim(joints) == 3:  # each frame from its own pose: two segments where FABRIK ends, in one step
        exact = method == "fabrik" and lengths.size == 2
        P, iterations, error = _solve_block(starts, lengths, goals, iteration, stopping, accelerate, exact)
    elif warm_start:
        P, iterations, error = solve_warm(starts[:, :, 0], goals, solve_block, stopping.tolerance)
    else:
        P, iterations, error = solve_block(np.repeat(starts, goals.shape[1], axis=2), goals)
    return FramesSolution(
        joints=np.ascontiguousarray(P.transpose(2, 0, 1)),
        iterations=iterations,
        error=error,
        reached=error <= stopping.tolerance,
    )


def _start_poses(joints: npt.ArrayLike, frames: int) -> FloatArray:
    """The start poses as the solver lays them out, (n+1, 3, 1) for one pose or (n+1, 3, F) for one per frame,
    checked: every frame's pose a chain (``as_joints``) with the first frame's segment lengths (to a millionth:
    poses made by turning bones keep their lengths to rounding).

    Raises
    ------
    ValueError
        Naming the problem and, for a pose per frame, the frame.
    """
    try:
        array = np.asarray(joints, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.empty(0)  # not numbers: ``as_joints`` names the problem
    if array.ndim != 3:
        return as_joints(joints)[:, :, None]
    if len(array) != frames:
        raise ValueError(f"joints must be one pose, or one per target ({frames}), got {len(array)} poses")
    as_joints(array[0], "joints of frame index 0")  # its shape, numbers and lengths; the others' by its
    if not np.isfinite(array).all():
        bad = int(np.flatnonzero(~np.isfinite(array).all(axis=(1, 2)))[0])
        raise ValueError(f"joints contains NaN or infinity in the pose of frame index {bad}")
    poses = np.ascontiguousarray(array.transpose(1, 2, 0))  # (n+1, 3, F)
    lengths = norms(np.diff(poses, axis=0))  # (n, F)
    bad_lengths = np.flatnonzero(np.abs(lengths - lengths[:, :1]).max(axis=0) > 1e-6 * lengths[:, :1].max())
    if bad_lengths.size:
        raise ValueError(
            f"joints: the pose of frame index {int(bad_lengths[0])} has other segment lengths than the first "
            "frame's: a chain keeps its lengths"
        )
    return poses


def _stopping(method: str, tolerance: float, max_iterations: int, min_improvement: float) -> Stopping:
    """The stopping rules, checked, after checking ``method``."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    return Stopping.checked(tolerance, max_iterations, min_improvement)


def _solve_recorded(
    joints: npt.ArrayLike, point: FloatArray, tolerance: float, max_iterations: int, min_improvement: float, method: str
) -> Solution:
    """``solve`` with its history: the same block solve, its iterations run stage by stage and recorded."""
    start = as_joints(joints)
    stopping = _stopping(method, tolerance, max_iterations, min_improvement)
    lengths = segment_lengths(start)
    recorder = Recorder()
    recorder.add(START, start)
    stages = point_stages(method, lengths.size)
    P, iterations, error = _solve_block(
        start[:, :, None].copy(), lengths, point[:, None], recorder.recording(stages), stopping, method == "fabrik"
    )
    if iterations[0] and len(recorder.joints) == 1:  # out of reach or too near: one step without iterating
        for name, _ in stages:
            recorder.add(name, P[:, :, 0])
    steps, names = recorder.history()
    return Solution(
        joints=np.ascontiguousarray(P[:, :, 0]),
        iterations=int(iterations[0]),
        error=float(error[0]),
        reached=bool(error[0] <= stopping.tolerance),
        history=steps,
        history_steps=names,
    )


def _solve_block(
    P: FloatArray,
    lengths: FloatArray,
    targets: FloatArray,
    iteration: Iteration,
    stopping: Stopping,
    accelerate: bool,
    two_bones: bool = False,
) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """Solve frames from the start poses ``P`` (n+1, 3, m): targets out of reach in one step, the rest by
    iterating (slow frames accelerated if ``accelerate``: FABRIK's, see ``iterate``), or with ``two_bones`` (a
    chain of two segments solved with FABRIK) put where the iterations end in one step (``two_bone_step``).
    Returns (joints (n+1, 3, m), iterations (m,), error (m,))."""
    root = P[0]
    offsets = targets - root
    distance = norms(offsets)
    too_far = distance >= lengths.sum()
    too_near = distance < inner_radius(lengths)
    result = P.copy()
    if too_far.any() or too_near.any():
        # Where the target sits on the root, point the chain the way its end effector already points.
        toward = unit_or(offsets, unit_or(P[-1] - root, unit_or(P[1] - root, FALLBACK_DIRECTION[:, None])))
        if too_far.any():
            result[:, :, too_far] = chain_along(root[:, too_far], toward[:, too_far], lengths)
        if too_near.any():
            folded = np.where(np.arange(lengths.size) == np.argmax(lengths), lengths, -lengths)
            result[:, :, too_near] = chain_along(root[:, too_near], toward[:, too_near], folded)
    iterations = np.ones(P.shape[2], dtype=np.int64)
    free = np.flatnonzero(~(too_far | too_near))
    if free.size:
        every = free.size == P.shape[2]  # as a smooth path's frames usually are: nothing to copy out and back
        # Every frame free: ``result`` is still the copy of ``P``, and the solve replaces it.
        starts, goals = (result, targets) if every else (np.take(P, free, axis=2), targets[:, free])
        if starts.shape[2] > 1 or may_bend(starts, goals, lengths):  # one frame: worked out on plain floats
            unbend_starts(starts, goals, lengths, norms(starts[-1] - goals) > stopping.tolerance)
        plain = plain_iteration if iteration is fabrik_iteration else None
        if two_bones:
            solved, solved_iterations = _two_bones(starts, lengths, goals, stopping)
        else:
            solved, solved_iterations, _ = iterate(
                starts, lengths, goals, iteration, stopping, accelerate=accelerate, plain=plain
            )
        if every:
            result, iterations = solved, solved_iterations
        else:
            result[:, :, free], iterations[free] = solved, solved_iterations
    return result, iterations, norms(result[-1] - targets)


def _two_bones(
    P: FloatArray, lengths: FloatArray, goals: FloatArray, stopping: Stopping
) -> tuple[FloatArray, NDArray[np.int64]]:
    """FABRIK on two segments from ``P`` (3, 3, m) toward ``goals`` (3, m) within reach: frames already within the
    tolerance kept (no iteration), the rest where FABRIK's iterations end in one step (``two_bone_step``), and
    any whose knee lies on the line to its goal iterated."""
    waiting = norms(P[-1] - goals) > stopping.tolerance
    solved, done = two_bone_step(P, lengths, goals)
    done &= waiting
    result = np.where(done, solved, P)
    iterations = np.where(done, 1, 0).astype(np.int64)
    rest = np.flatnonzero(waiting & ~done)
    if rest.size:
        iterated, counts, _ = iterate(
            np.take(P, rest, axis=2), lengths, goals[:, rest], fabrik_iteration, stopping, accelerate=True
        )
        result[:, :, rest], iterations[rest] = iterated, counts
    return result, iterations
