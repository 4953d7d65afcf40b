"""Compute how far to lower the hips so every pinned foot is within its leg's reach, and where a leg that still
cannot reach straightens gradually (soft reach) rather than snapping straight.

Each leg is the chain's bones above the foot: from its root's head (the hip joint) they reach ``reach`` at
most, and the foot, keeping its animated orientation, puts the ball at a fixed offset from the ankle. So a
ball goal is an ankle goal (``heads``) that must be within ``reach`` of the hip joint. Up is +Z.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..solver import FloatArray, soften_reach

_UP = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class HipsDrop:
    """How far the hips go down on each frame.

    Attributes
    ----------
    drop : ndarray, shape (F,)
        Scene units, >= 0: a lowering that brings every leg's ankle goal within its reach less its soft margin,
        changing slowly (``smooth_drop``) and by at most the rate given from one frame to the next.
    out_of_reach : ndarray of bool, shape (F, L)
        Where no lowering brings the goal within reach: it is too far out sideways.
    """

    drop: FloatArray
    out_of_reach: NDArray[np.bool_]


def needed_drop(hips: FloatArray, heads: FloatArray, reach: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Compute the least drop per frame and leg (F, L) given the hip joints and ankle goals (F, L, 3) and the
    reach per frame and leg (F, L): 0 where the goal is within reach, and where it is too far out sideways
    for any drop (also returned, (F, L)), the drop that brings it nearest."""
    offset = hips - heads
    across = np.linalg.norm(offset - offset[..., 2:3] * _UP, axis=-1)
    inside = np.maximum(reach, 0.0) ** 2 - across**2
    out_of_reach = inside < 0.0
    drop = offset[..., 2] - np.sqrt(np.maximum(inside, 0.0))
    return np.maximum(drop, 0.0), out_of_reach


def rate_limited(needed: npt.ArrayLike, max_step: float) -> FloatArray:
    """The least values (F,) at or above ``needed`` (F,) that change by at most ``max_step`` (>= 0) from one
    frame to the next: the upper envelope of cones of slope ``max_step`` on every frame's need."""
    values = np.array(needed, dtype=np.float64)
    for i in range(1, len(values)):
        values[i] = max(values[i], values[i - 1] - max_step)
    for i in range(len(values) - 2, -1, -1):
        values[i] = max(values[i], values[i + 1] - max_step)
    return values


def smooth_drop(needed: npt.ArrayLike, span_frames: float) -> FloatArray:
    """Compute a drop (F,) at or above ``needed`` (F,, >= 0) on every frame that changes slowly: the most any frame
    within half ``span_frames`` either side needs, averaged with a raised cosine over that half span either side.

    The average of a frame's neighbours within half the span each needing at least what any frame within half the
    span of them needs is at least what the frame itself needs; the raised cosine makes the curve's slope change
    gradually, so a walk's drop, which comes and goes with its steps, becomes a steady one that eases in and out
    over about ``span_frames``. A span under two frames leaves the need as it is.
    """
    need = np.asarray(needed, dtype=np.float64)
    half = int(span_frames // 2)
    if half < 1 or len(need) < 2:
        return need.copy()
    padded = np.concatenate([np.zeros(half), need, np.zeros(half)])
    most = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1).max(axis=1)  # (F,)
    kernel = 0.5 + 0.5 * np.cos(np.pi * np.arange(-half, half + 1) / (half + 1))
    # At the ends, the frames beyond are the end frame's own: the curve neither falls nor rises past the clip.
    edged = np.concatenate([np.full(half, most[0]), most, np.full(half, most[-1])])
    smooth = np.convolve(edged, kernel / kernel.sum(), mode="valid")
    return np.asarray(np.maximum(smooth, need))  # equal or above already, but for rounding


def hips_drop(
    hips: npt.ArrayLike,
    heads: npt.ArrayLike,
    reach: npt.ArrayLike,
    *,
    weights: npt.ArrayLike,
    margin: npt.ArrayLike = 0.0,
    max_step: float,
    span_frames: float = 0.0,
) -> HipsDrop:
    """Compute how far to lower the hips on each frame.

    Parameters
    ----------
    hips : array-like, shape (F, L, 3)
        Each leg's hip joint (its chain's root head) as animated.
    heads : array-like, shape (F, L, 3)
        Each leg's ankle goal: where the foot's head must be for its ball to be on its goal.
    reach : array-like, shape (L,)
        Each leg's reach from the hip joint to the ankle.
    weights : array-like, shape (F, L)
        How far each frame is pinned (``PinnedPath.weights``): the margin applies in proportion, so where a
        frame is not pinned the animation, within reach as it was captured, needs no lowering.
    margin : array-like, shape (L,) or scalar
        Each leg's soft reach: the goal must come this much within reach (times the weight).
    max_step : float
        The largest change of the drop from one frame to the next (scene units, >= 0).
    span_frames : float
        How slowly the drop changes (``smooth_drop``): 0 for the least drop each frame needs.
    """
    limit = np.asarray(reach, dtype=np.float64) - np.asarray(margin, dtype=np.float64) * np.asarray(weights)
    needed, out_of_reach = needed_drop(np.asarray(hips, dtype=np.float64), np.asarray(heads, dtype=np.float64), limit)
    return HipsDrop(rate_limited(smooth_drop(needed.max(axis=1), span_frames), max_step), out_of_reach)


def lowered(points: npt.ArrayLike, drop: npt.ArrayLike) -> FloatArray:
    """Points (F, ..., 3) moved down by ``drop`` (F,)."""
    moved = np.array(points, dtype=np.float64)
    moved[..., 2] -= np.asarray(drop, dtype=np.float64).reshape(-1, *([1] * (moved.ndim - 2)))
    return moved


def eased_heads(hips: npt.ArrayLike, heads: npt.ArrayLike, reach: npt.ArrayLike, soft: npt.ArrayLike) -> FloatArray:
    """Ankle goals (F, L, 3) eased toward each hip joint (F, L, 3) near full reach (``solver.soften_reach``)
    with a soft distance per frame and leg (F, L): the leg straightens gradually instead of snapping."""
    base, goals = np.asarray(hips, dtype=np.float64), np.asarray(heads, dtype=np.float64)
    relative = goals - base
    eased = soften_reach(relative, np.asarray(reach, dtype=np.float64), np.asarray(soft))
    return np.where((eased != relative).any(axis=-1, keepdims=True), eased + base, goals)  # the rest as given
