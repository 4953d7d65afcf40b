"""What a reduction of keys did: the keys it kept against a key on every frame, and how far the kept keys put
the measured points from the pose, as Blender evaluates them (``KeysReport``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..solver import FloatArray
from ..words import SCENE_UNITS, Unit, kept_words, length_words


@dataclass(frozen=True)
class KeysReport:
    """The keys kept within an error, and the error Blender's evaluation of them shows.

    Attributes
    ----------
    keys : int
        Keys written in the frame range (every F-curve's keys counted).
    dense_keys : int
        The keys a key on every frame would have written there.
    key_error : float
        The error allowed, in world units.
    max_error : float
        The largest distance, in world units, of any measured point (each bone's head, tail and points off its
        axis) from where a key on every frame puts it, on any frame, as Blender evaluates the kept keys: the
        solved pose (the keys that were there, for ``reduce_keys``).
    p99_error : float
        The 99th percentile of those distances, over every point on every frame.
    frames : ndarray of int, shape (F,)
    frame_errors : ndarray, shape (F,)
        The largest distance on each frame.
    rounding : float
        How far a key on every frame already puts a point from the solved pose, as Blender plays it: 0 for keys
        in an Action; in a layer, Blender's Combine rounds small quaternion turns (by up to about 0.04 degrees),
        with or without ``key_error``. From the solved pose the kept keys are within ``max_error`` plus that.
    length_unit : (str, float)
        The unit the report's ``repr`` gives lengths in, as its symbol and the world units in one (the scene's,
        where a bake or reduction made the report; Blender units where none is known).
    """

    keys: int
    dense_keys: int
    key_error: float
    max_error: float
    p99_error: float
    frames: NDArray[np.int64]
    frame_errors: FloatArray
    rounding: float = 0.0
    length_unit: Unit = SCENE_UNITS

    def __repr__(self) -> str:
        return f"KeysReport({self.words()}, key error {length_words(self.key_error, self.length_unit)})"

    def words(self) -> str:
        """The keys kept and the largest error, in ``length_unit``: "kept 8% of the keys (1234 of 15360), largest
        error 0.48 mm"."""
        return kept_words(self.keys, self.dense_keys, self.max_error, self.length_unit)

    @property
    def kept(self) -> float:
        """The share of a key on every frame's keys kept (0 to 1)."""
        return self.keys / self.dense_keys if self.dense_keys else 1.0

    @property
    def within(self) -> bool:
        """Whether every point is within ``key_error`` on every frame."""
        return self.max_error <= self.key_error


def keys_report(
    frames: npt.ArrayLike, errors: npt.ArrayLike, keys: int, dense_keys: int, key_error: float, rounding: float = 0.0
) -> KeysReport:
    """Compute the report of a reduction given each point's distance on each frame, as Blender evaluated it.

    Parameters
    ----------
    frames : array-like of int, shape (F,)
    errors : array-like, shape (F, P)
        World units.
    keys, dense_keys : int
    key_error, rounding : float
        See ``KeysReport``; its ``length_unit`` is Blender units (the Blender layer gives it the scene's).
    """
    distances = np.asarray(errors, dtype=np.float64).reshape(len(np.asarray(frames)), -1)
    worst = distances.max(axis=1) if distances.size else np.zeros(len(distances))
    return KeysReport(
        int(keys),
        int(dense_keys),
        float(key_error),
        float(worst.max()) if worst.size else 0.0,
        float(np.percentile(distances, 99)) if distances.size else 0.0,
        np.asarray(frames, dtype=np.int64),
        worst,
        float(rounding),
    )
