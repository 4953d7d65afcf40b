"""Compute the curve a run of Bezier keys plays, given the keys' frames and values and each segment's two inner
control values; fit those to the values on every frame; and the handles such keys are written with.

Blender evaluates a Bezier segment from key ``a`` to key ``b`` as a curve (x(s), y(s)) through ``a``'s value,
its right handle, ``b``'s left handle and ``b``'s value. With the handles' frames at ``a + (b - a) / 3`` and
``b - (b - a) / 3``, x(s) is linear in s, so the value on frame ``t`` is the cubic y(s) at ``s = (t - a) / (b -
a)``, whose inner control values are the handles' values: what ``fit`` computes, and what Blender plays (to
float32 rounding: the tests hold the two together by Blender's own evaluation). Each segment's control values
are its own (Free handles), fitted by least squares to the values of the frames it spans.

>>> import numpy as np
>>> times = np.arange(7.0)
>>> values = (times**3 - 6 * times**2)[:, None]  # a cubic: two keys play it exactly
>>> played, controls = keyed_curve(times, np.array([0, 6]), values)
>>> np.round(played[:, 0], 6)
array([  0.,  -5., -16., -27., -32., -25.,   0.])
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..solver import FloatArray

#: How strongly the control values of a segment with fewer than two frames inside (which least squares leaves
#: unsettled) lean toward those of the samples' slopes (``slopes``); a segment with more is least squares' alone.
_LEAN = 1e-6


def slopes(times: FloatArray, values: FloatArray) -> FloatArray:
    """Compute each frame's slope (value per frame) given the values on every frame: the central difference
    between its neighbours, one-sided at the ends.

    Parameters
    ----------
    times : ndarray, shape (F,)
        The frames, increasing (F >= 2; steps may differ).
    values : ndarray, shape (F, n)

    Returns
    -------
    ndarray, shape (F, n)
    """
    result = np.empty_like(values)
    result[1:-1] = (values[2:] - values[:-2]) / (times[2:] - times[:-2])[:, None]
    result[0] = (values[1] - values[0]) / (times[1] - times[0])
    result[-1] = (values[-1] - values[-2]) / (times[-1] - times[-2])
    return result


def segments(keys: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Compute, for each row and set of keys, the rows of the keys that start and end its segment, given which
    rows each set keys.

    Parameters
    ----------
    keys : ndarray of bool, shape (F, A)
        Per set of keys (a column), whether each row is keyed; the first and last rows always are (F >= 2).

    Returns
    -------
    start, end : ndarray of int, shape (F, A)
        A keyed row starts the segment after it, but the last row, which ends the last segment.
    """
    frames = len(keys)
    rows = np.arange(frames)[:, None]
    start = np.maximum.accumulate(np.where(keys, rows, -1), axis=0)
    start[-1] = start[-2]
    later = np.minimum.accumulate(np.where(keys, rows, frames)[::-1], axis=0)[::-1]
    after = np.empty_like(later)
    after[:-1], after[-1] = later[1:], frames - 1
    return start, np.take_along_axis(after, start, axis=0)


def fit(
    times: FloatArray,
    keys: NDArray[np.bool_],
    owner: NDArray[np.int64],
    values: FloatArray,
    tangents: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Compute what Bezier keys play on every frame given which rows they key and the values on every frame: each
    segment's control values those whose cubic is nearest the values on the frames it spans, in least squares
    (where fewer than two frames lie inside, leaning toward the cubic through the keys with the samples' slopes,
    ``_LEAN``).

    Parameters
    ----------
    times : ndarray, shape (F,)
        The frames, increasing (F >= 2).
    keys : ndarray of bool, shape (F, A)
        The rows each set of keys keys (``segments``).
    owner : ndarray of int, shape (C,)
        The set of keys of each column of ``values``.
    values : ndarray, shape (F, C)
        What the F-curves hold on every frame.
    tangents : ndarray, shape (F, C), optional
        The samples' slopes (``slopes`` by default).

    Returns
    -------
    played : ndarray, shape (F, C)
    controls : ndarray, shape (2, F, C)
        Each segment's inner control values (its first key's right handle, its second key's left handle), on
        the row of the key that starts it.
    """
    tangents = slopes(times, values) if tangents is None else tangents
    frames, sets = keys.shape
    # Worked set after set and column after column (rows of (A, F) and (C, F)): each segment's sums are one
    # ``np.add.reduceat`` over the flat rows from its first key's, the rows at its keys adding nothing (their
    # weights are 0).
    marks = np.ascontiguousarray(keys.T)
    ordinal = np.cumsum(marks, axis=1) - 1  # each row's segment among its set's (the last row closes the last)
    ordinal[:, -1] -= 1
    keyed = np.flatnonzero(marks)
    opens = keyed % frames != frames - 1
    begin = keyed[opens]  # (S,): where each segment starts, flat, set after set
    a, b = begin % frames, keyed[np.flatnonzero(opens) + 1] % frames
    counts = np.bincount(begin // frames, minlength=sets)
    before = np.concatenate([[0], np.cumsum(counts)[:-1]])
    span = times[b] - times[a]
    segment = ordinal + before[:, None]  # (A, F)
    s = (times - times[a][segment]) / span[segment]
    t = 1.0 - s
    first: FloatArray = 3.0 * s * t * t
    second: FloatArray = 3.0 * s * s * t
    lean = np.where(b - a < 3, _LEAN, 0.0)
    m11 = np.add.reduceat((first * first).ravel(), begin) + lean
    m12 = np.add.reduceat((first * second).ravel(), begin)
    m22 = np.add.reduceat((second * second).ravel(), begin) + lean
    determinant = m11 * m22 - m12 * m12
    # Every column's segments (its set's), column after column.
    per = counts[owner]
    opened = np.concatenate([[0], np.cumsum(per)[:-1]])
    column = np.repeat(np.arange(len(owner)), per)
    own = np.arange(int(per.sum())) - np.repeat(opened, per) + before[owner][column]  # (CS,): the set's segment
    at_a, at_b = column * frames + a[own], column * frames + b[own]
    flat = np.ascontiguousarray(values.T).ravel()
    slope = np.ascontiguousarray(tangents.T).ravel()
    va, vb = flat[at_a], flat[at_b]
    rows = ordinal[owner] + opened[:, None]  # (C, F): each row's segment among all columns'
    sc, tc, firstc, secondc = s[owner], t[owner], first[owner], second[owner]
    ends = tc**3 * va[rows] + sc**3 * vb[rows]
    rest = flat.reshape(len(owner), frames) - ends
    third = span[own] / 3.0
    r1 = np.add.reduceat((firstc * rest).ravel(), at_a) + lean[own] * (va + slope[at_a] * third)
    r2 = np.add.reduceat((secondc * rest).ravel(), at_a) + lean[own] * (vb - slope[at_b] * third)
    c1 = (m22[own] * r1 - m12[own] * r2) / determinant[own]
    c2 = (m11[own] * r2 - m12[own] * r1) / determinant[own]
    played = ends + firstc * c1[rows] + secondc * c2[rows]
    controls = np.zeros((2, len(owner) * frames))
    controls[0, at_a], controls[1, at_a] = c1, c2
    return played.T, controls.reshape(2, len(owner), frames).transpose(0, 2, 1)


def keyed_curve(times: FloatArray, keys: NDArray[np.int64], values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``fit`` for one set of keys, given as rows: what they play (F, n) and each segment's control values
    (K - 1, 2, n)."""
    mask = np.zeros((len(times), 1), dtype=bool)
    mask[keys] = True
    played, controls = fit(times, mask, np.zeros(values.shape[1], dtype=np.int64), values)
    return played, np.moveaxis(controls[:, keys[:-1]], 0, 1)


def handles(times: FloatArray, values: FloatArray, controls: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Compute the handles of Bezier keys that play ``played``'s cubics, given the keys' frames, values and the
    segments' control values for one channel: each handle a third of the way to the neighbouring key in time, at
    its control value. The first key's left handle and the last key's right handle (which play nothing between
    the keys) point back along the other handle.

    Parameters
    ----------
    times : ndarray, shape (K,)
        The keys' frames, increasing (K >= 1).
    values : ndarray, shape (K,)
    controls : ndarray, shape (K - 1, 2)

    Returns
    -------
    left, right : ndarray, shape (K, 2)
        Each key's left and right handle as (frame, value).
    """
    if len(times) == 1:
        return np.array([[times[0] - 1.0, values[0]]]), np.array([[times[0] + 1.0, values[0]]])
    third = np.diff(times) / 3.0
    left = np.empty((len(times), 2))
    right = np.empty((len(times), 2))
    right[:-1, 0], right[:-1, 1] = times[:-1] + third, controls[:, 0]
    left[1:, 0], left[1:, 1] = times[1:] - third, controls[:, 1]
    left[0] = 2.0 * np.array([times[0], values[0]]) - right[0]
    right[-1] = 2.0 * np.array([times[-1], values[-1]]) - left[-1]
    return left, right
