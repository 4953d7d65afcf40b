"""Warm start in blocks: frames solved together from the result of the frame before them, checked for jumps.
The same for a chain (``solve_frames``) and a tree (``solve_tree``), which plug in their own solve of a block.

A block costs as many iterations as its slowest frame needs, each about as dear for a few frames as for a
thousand (numpy's per-call cost), so fewer, larger blocks take less time. But FABRIK from one start pose can
switch to another solution part-way through a block (an elbow flipping sides as the target passes it), which
solving every frame from the one before would not do. So a block keeps its frames only up to the first that
jumps, moving much farther than its targets do; the next block starts at that frame, from the frame before it.
A block's first frame always starts from the frame before it, so every block keeps at least one frame.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..core import FloatArray, dots, norms

#: Frames are solved in blocks of this many consecutive frames. 1,000 frames of a 16-bone chain on a smooth path
#: took about twice as long in blocks of 256 (scripts/bench/bench_solver.py); with the jump check, blocks of 64 to
#: 1,024 frames gave equally coherent motion on smooth paths.
WARM_START_BLOCK = 1024
#: A frame of a block "jumps" when some joint moves more than this many times as far as the farthest-moving
#: target does since the frame before (plus the tolerance); it then starts the next block. Solved frame by frame,
#: chains of five or more bones stay within 1.0x on smooth paths; blocks checked at 1.5x cost about the same
#: as unchecked ones (scripts/bench/bench_solver.py).
JUMP_RATIO = 1.5

#: A solve of a block: (start poses (rows, 3, m), targets (..., 3, m)) -> (joints (rows, 3, m), iterations (m,),
#: error (m,)).
BlockSolve = Callable[[FloatArray, FloatArray], tuple[FloatArray, NDArray[np.int64], FloatArray]]


def solve_warm(
    start: FloatArray, targets: FloatArray, solve_block: BlockSolve, tolerance: float
) -> tuple[FloatArray, NDArray[np.int64], FloatArray]:
    """Solve every frame, the first from ``start``, the others in blocks from the frame before each block.

    Parameters
    ----------
    start : ndarray, shape (rows, 3)
        The pose the first frame starts from.
    targets : ndarray, shape (..., 3, F)
        Per frame: the chain's target (3, F), or a tree's effectors' (E, 3, F).
    solve_block : callable
        See ``BlockSolve``.
    tolerance : float
        Added to the allowed move of a joint (see ``JUMP_RATIO``).

    Returns
    -------
    joints : ndarray, shape (rows, 3, F)
    iterations : ndarray of int, shape (F,)
    error : ndarray, shape (F,)
    """
    frame_count = targets.shape[-1]
    P = np.empty((start.shape[0], 3, frame_count))
    iterations = np.empty(frame_count, dtype=np.int64)
    error = np.empty(frame_count)
    P[:, :, :1], iterations[:1], error[:1] = solve_block(start[:, :, None].copy(), targets[..., :1])
    begin = 1
    while begin < frame_count:
        end = min(frame_count, begin + WARM_START_BLOCK)
        starts = np.repeat(P[:, :, begin - 1 : begin], end - begin, axis=2)
        goals = targets[..., begin:end]
        joints, its, errs = solve_block(starts, goals)
        # Joint and target moves from each frame of the block to the next one (the farthest joint's and target's).
        joint_steps = joints[:, :, 1:] - joints[:, :, :-1]
        joint_moves = np.sqrt(dots(joint_steps, joint_steps).max(axis=0))
        target_moves = norms(np.diff(goals, axis=-1))
        if target_moves.ndim > 1:
            target_moves = target_moves.max(axis=0)
        jumps = np.flatnonzero(joint_moves > JUMP_RATIO * target_moves + tolerance)
        kept = int(jumps[0]) + 1 if jumps.size else end - begin
        P[:, :, begin : begin + kept] = joints[:, :, :kept]
        iterations[begin : begin + kept], error[begin : begin + kept] = its[:kept], errs[:kept]
        begin += kept
    return P, iterations, error
