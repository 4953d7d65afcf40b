"""Validators: take array-likes, return clean float64 arrays, or raise ``ValueError`` naming what is wrong.

Public, with ``FloatArray``: the Blender layer checks its numbers with the same rules.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

#: A segment shorter than this fraction of the longest one counts as zero-length.
_ZERO_LENGTH_FRACTION = 1e-12


def _as_float_array(value: npt.ArrayLike, name: str) -> FloatArray:
    try:
        return np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from exc


def _check_finite(array: FloatArray, name: str, row_label: str) -> None:
    """Raise naming the first row (joint, frame) that holds NaN or infinity."""
    bad = ~np.isfinite(array)
    if not bad.any():
        return
    if array.ndim == 1:
        raise ValueError(f"{name} contains NaN or infinity: {array.tolist()}")
    row = int(np.flatnonzero(bad.reshape(array.shape[0], -1).any(axis=1))[0])
    raise ValueError(f"{name} contains NaN or infinity at {row_label} {row}: {array[row].tolist()}")


def segment_lengths(joints: FloatArray) -> FloatArray:
    """Distances between consecutive joints.

    Parameters
    ----------
    joints : ndarray, shape (n+1, 3)

    Returns
    -------
    ndarray, shape (n,)
    """
    segments = np.diff(joints, axis=0)
    lengths: FloatArray = np.sqrt((segments * segments).sum(axis=1))
    return lengths


def as_joints(joints: npt.ArrayLike, name: str = "joints") -> FloatArray:
    """A chain's joint positions, root first, with no zero-length segment.

    Parameters
    ----------
    joints : array-like, shape (n+1, 3)
        At least two joints (one segment), all finite.

    Returns
    -------
    ndarray, shape (n+1, 3)
        A float64 copy.
    """
    array = _as_float_array(joints, name)
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"{name} must have shape (n+1, 3), one row per joint, got shape {array.shape}")
    if array.shape[0] < 2:
        raise ValueError(f"{name} needs at least two joints (one segment), got {array.shape[0]}")
    _check_finite(array, name, "joint")
    lengths = segment_lengths(array)
    zero = np.flatnonzero(lengths <= _ZERO_LENGTH_FRACTION * lengths.max())
    if zero.size:
        i = int(zero[0])
        raise ValueError(f"{name}: segment {i} (joints {i} to {i + 1}) has zero length")
    return array


def as_point(point: npt.ArrayLike, name: str) -> FloatArray:
    """One finite point, shape (3,)."""
    array = _as_float_array(point, name)
    if array.shape != (3,):
        raise ValueError(f"{name} must have shape (3,), got shape {array.shape}")
    _check_finite(array, name, "")
    return array


def as_points(points: npt.ArrayLike, name: str) -> FloatArray:
    """Finite points, one per frame, shape (F, 3) with F >= 1."""
    array = _as_float_array(points, name)
    if array.ndim != 2 or array.shape[1] != 3 or array.shape[0] < 1:
        raise ValueError(f"{name} must have shape (F, 3), one row per frame, got shape {array.shape}")
    _check_finite(array, name, "frame index")
    return array


def positive_float(value: float, name: str) -> float:
    """A finite number > 0."""
    number = float(value)
    if not (np.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return number


def non_negative_float(value: float, name: str) -> float:
    """A finite number >= 0."""
    number = float(value)
    if not (np.isfinite(number) and number >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def positive_int(value: int, name: str) -> int:
    """An integer >= 1 (bools are refused)."""
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)
