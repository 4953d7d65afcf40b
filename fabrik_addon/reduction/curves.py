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


def fit_spans(
    times: FloatArray,
    values: FloatArray,
    slopes: FloatArray,
    first: NDArray[np.int64],
    last: NDArray[np.int64],
    controls: FloatArray | None = None,
) -> tuple[FloatArray, NDArray[np.int64], NDArray[np.int64], FloatArray]:
    """Compute what Bezier segments play on the frames inside them given the keys that start and end each and the
    values on every frame: each segment's control values those whose cubic is nearest the values on the frames it
    spans, in least squares (where fewer than two frames lie inside, leaning toward the cubic through the keys with
    the samples' slopes, ``_LEAN``), or ``controls`` where given.

    Parameters
    ----------
    times : ndarray, shape (F,)
        The frames, increasing.
    values, slopes : ndarray, shape (W, R)
        W F-curves of sets of keys, each set's F frames one after another (R = F times the sets), and their
        slopes (``slopes``).
    first, last : ndarray of int, shape (S,)
        Each segment's keys, as rows of ``values`` (of one set, ``first < last``).
    controls : ndarray, shape (2, W, S), optional
        Each segment's inner control values, to play instead of fitting them.

    Returns
    -------
    played : ndarray, shape (W, L)
        What the segments play on the rows inside them (between their keys), segment after segment.
    rows : ndarray of int, shape (L,)
        Those rows.
    segment : ndarray of int, shape (L,)
        The segment of each.
    controls : ndarray, shape (2, W, S)
        Each segment's inner control values (its first key's right handle, its second key's left handle).
    """
    frames = len(times)
    inside = last - first - 1
    rows, segment = inner_rows(first, last)
    start = times[first % frames]
    span = times[last % frames] - start
    s = (np.take(times, rows % frames) - np.take(start, segment)) / np.take(span, segment)
    t = 1.0 - s
    st = s * t
    weights = (t * t * t, 3.0 * st * t, 3.0 * st * s, s * s * s)
    va, vb = np.take(values, first, axis=1), np.take(values, last, axis=1)
    if controls is None:
        lean = np.where(inside < 2, _LEAN, 0.0)
        toward = None
        if lean.any():  # the cubic through the keys with the samples' slopes
            third = span / 3.0
            toward = (va + np.take(slopes, first, axis=1) * third, vb - np.take(slopes, last, axis=1) * third)
        inner = np.take(values, rows, axis=1)
        controls = _least_squares(weights, inner, segment, inside, va, vb, lean, toward)
    played = weights[0] * np.take(va, segment, axis=1) + weights[3] * np.take(vb, segment, axis=1)
    played += weights[1] * np.take(controls[0], segment, axis=1)
    played += weights[2] * np.take(controls[1], segment, axis=1)
    return played, rows, segment, controls


def inner_rows(first: NDArray[np.int64], last: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The rows strictly between each ``first`` and ``last`` (S,), segment after segment (L,), and the segment of
    each."""
    inside = last - first - 1
    segment = np.repeat(np.arange(len(first)), inside)
    opened = np.cumsum(inside) - inside  # where each segment's rows start among the rows inside
    return np.arange(len(segment)) + np.repeat(first + 1 - opened, inside), segment


def _sums(products: FloatArray, segment: NDArray[np.int64], inside: NDArray[np.int64]) -> FloatArray:
    """Each segment's sums (..., S) of ``products`` (..., L) over the rows inside it (0 where there is none)."""
    sums = np.zeros((*products.shape[:-1], len(inside)))
    full = np.flatnonzero(inside)
    if full.size:
        sums[..., full] = np.add.reduceat(products, (np.cumsum(inside) - inside)[full], axis=-1)
    return sums


def _least_squares(
    weights: tuple[FloatArray, ...],
    inner: FloatArray,
    segment: NDArray[np.int64],
    inside: NDArray[np.int64],
    va: FloatArray,
    vb: FloatArray,
    lean: FloatArray,
    toward: tuple[FloatArray, FloatArray] | None,
) -> FloatArray:
    """The inner control values (2, W, S) nearest ``inner`` (W, L) in least squares, the keys' values ``va``
    and ``vb`` (W, S) held, pulled ``lean`` (S,) strongly toward ``toward`` (two (W, S)) where given."""
    b0, b1, b2, b3 = weights
    m = _sums(np.stack([b1 * b1, b1 * b2, b2 * b2, b1 * b0, b1 * b3, b2 * b0, b2 * b3]), segment, inside)
    projected = _sums(np.stack([b1 * inner, b2 * inner]), segment, inside)  # (2, W, S)
    r1 = projected[0] - m[3] * va - m[4] * vb
    r2 = projected[1] - m[5] * va - m[6] * vb
    m11, m12, m22 = m[0] + lean, m[1], m[2] + lean
    if toward is not None:
        r1, r2 = r1 + lean * toward[0], r2 + lean * toward[1]
    inverse = 1.0 / (m11 * m22 - m12 * m12)
    return np.stack([(m22 * r1 - m12 * r2) * inverse, (m11 * r2 - m12 * r1) * inverse])


def fit(
    times: FloatArray,
    keys: NDArray[np.bool_],
    owner: NDArray[np.int64],
    values: FloatArray,
    tangents: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Compute what Bezier keys play on every frame given which rows they key and the values on every frame: each
    segment's control values those whose cubic is nearest the values on the frames it spans (``fit_spans``).

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
    frames = len(times)
    marks = np.ascontiguousarray(keys.T[owner])  # (C, F): each column keyed as its set
    keyed = np.flatnonzero(marks)
    opens = np.flatnonzero(keyed % frames != frames - 1)
    first, last = keyed[opens], keyed[opens + 1]
    flat = np.ascontiguousarray(values.T).reshape(1, -1)
    inner, rows, _, controls = fit_spans(times, flat, tangents.T.reshape(1, -1), first, last)
    played = flat.copy()
    played[0, rows] = inner[0]
    placed = np.zeros((2, len(owner) * frames))
    placed[:, first] = controls[:, 0]
    return played.reshape(len(owner), frames).T, placed.reshape(2, len(owner), frames).transpose(0, 2, 1)


def keyed_curve(times: FloatArray, keys: NDArray[np.int64], values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``fit`` for one set of keys, given as rows: what they play (F, n) and each segment's control values
    (K - 1, 2, n)."""
    mask = np.zeros((len(times), 1), dtype=bool)
    mask[keys] = True
    played, controls = fit(times, mask, np.zeros(values.shape[1], dtype=np.int64), values)
    return played, np.moveaxis(controls[:, keys[:-1]], 0, 1)


def handles(times: FloatArray, values: FloatArray, controls: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Compute the handles of Bezier keys that play ``fit``'s cubics, given the keys' frames, values and the
    segments' control values, for one channel or several: each handle a third of the way to the neighbouring key
    in time, at its control value. The first key's left handle and the last key's right handle (which play
    nothing between the keys) point back along the other handle.

    Parameters
    ----------
    times : ndarray, shape (K,)
        The keys' frames, increasing (K >= 1).
    values : ndarray, shape (K,) or (K, k)
    controls : ndarray, shape (K - 1, 2) or (K - 1, 2, k)

    Returns
    -------
    left, right : ndarray, shape (K, 2) or (K, 2, k)
        Each key's left and right handle as (frame, value).
    """
    columns = values.shape[1:]
    at = times.reshape(-1, *(1 for _ in columns))  # the frames, broadcast over the channels
    if len(times) == 1:
        left = np.stack(np.broadcast_arrays(at - 1.0, values), axis=1)
        right = np.stack(np.broadcast_arrays(at + 1.0, values), axis=1)
        return left, right
    third = np.diff(at, axis=0) / 3.0
    left = np.empty((len(times), 2, *columns))
    right = np.empty((len(times), 2, *columns))
    right[:-1, 0], right[:-1, 1] = at[:-1] + third, controls[:, 0]
    left[1:, 0], left[1:, 1] = at[1:] - third, controls[:, 1]
    left[0, 0], left[0, 1] = 2.0 * at[0] - right[0, 0], 2.0 * values[0] - right[0, 1]
    right[-1, 0], right[-1, 1] = 2.0 * at[-1] - left[-1, 0], 2.0 * values[-1] - left[-1, 1]
    return left, right
