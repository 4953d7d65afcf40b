"""Bezier keys as Blender plays them, in numpy: each segment an exact cubic in the frame whose inner control values
are fitted to the frames it spans; segments found from which rows are keyed; handles a third of the way to the
neighbours. (That Blender plays them so is tested in ``tests/blender/test_key_reduction.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from fabrik_addon.reduction import fit, handles, keyed_curve, segments, slopes

Array = NDArray[np.float64]


def _keys(rng: np.random.Generator, frames: int, sets: int) -> NDArray[np.bool_]:
    keys = rng.random((frames, sets)) < 0.3
    keys[[0, -1]] = True
    return keys


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), frames=st.integers(2, 40))
def test_segments_run_from_each_key_to_the_next(seed: int, frames: int) -> None:
    rng = np.random.default_rng(seed)
    keys = _keys(rng, frames, 3)
    start, end = segments(keys)
    for column in range(3):
        rows = np.flatnonzero(keys[:, column])
        for row in range(frames):
            # The key at or before the row starts its segment (the last row, a key, ends the last one).
            expected = rows[rows <= row].max() if row < frames - 1 else rows[-2]
            assert start[row, column] == expected
            assert end[row, column] == rows[rows > expected].min()


def test_two_keys_play_a_cubic_exactly_and_every_key_plays_its_value() -> None:
    times = np.arange(11.0) * 2.5  # steps of any size
    cubic = (0.3 * times**3 - times**2 + 4.0 * times - 7.0)[:, None]
    played, controls = keyed_curve(times, np.array([0, 10]), cubic)
    np.testing.assert_allclose(played, cubic, rtol=1e-9, atol=1e-9)
    assert controls.shape == (1, 2, 1)
    rng = np.random.default_rng(3)
    values = rng.normal(size=(11, 2))
    keys = np.array([0, 3, 4, 9, 10])
    played, _ = keyed_curve(times, keys, values)
    np.testing.assert_array_equal(played[keys], values[keys])


def test_sets_of_keys_fitted_together_play_as_each_set_alone() -> None:
    rng = np.random.default_rng(11)
    times = np.cumsum(rng.uniform(0.5, 2.0, 60))
    values = np.cumsum(rng.normal(size=(60, 5)), axis=0)
    owner = np.array([0, 0, 1, 2, 2])
    keys = _keys(rng, 60, 3)
    together, controls = fit(times, keys, owner, values)
    for column, set_ in enumerate(owner):
        rows = np.flatnonzero(keys[:, set_])
        alone, alone_controls = keyed_curve(times, rows, values[:, [column]])
        np.testing.assert_allclose(together[:, column], alone[:, 0], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(controls[:, rows[:-1], column].T, alone_controls[:, :, 0], rtol=1e-10, atol=1e-10)


def test_a_segment_fit_is_the_least_squares_cubic_between_its_keys() -> None:
    """No other inner control values come nearer the frames the segment spans."""
    rng = np.random.default_rng(5)
    times = np.arange(30.0)
    values = np.sin(times / 4.0)[:, None] + 0.01 * rng.normal(size=(30, 1))
    keys = np.array([0, 29])
    played, controls = keyed_curve(times, keys, values)
    best = float(np.sum((played - values) ** 2))
    s = times / 29.0
    for _ in range(50):
        c1, c2 = controls[0, :, 0] + rng.normal(scale=0.05, size=2)
        other = (
            (1 - s) ** 3 * values[0, 0] + 3 * s * (1 - s) ** 2 * c1 + 3 * s * s * (1 - s) * c2 + s**3 * values[-1, 0]
        )
        assert float(np.sum((other - values[:, 0]) ** 2)) >= best


def test_handles_sit_a_third_of_the_way_to_the_neighbours_at_the_control_values() -> None:
    times = np.array([1.0, 4.0, 13.0])
    values = np.array([0.0, 2.0, 1.0])
    controls = np.array([[0.5, 1.5], [2.5, 1.2]])
    left, right = handles(times, values, controls)
    np.testing.assert_allclose(right[:2], [[2.0, 0.5], [7.0, 2.5]])
    np.testing.assert_allclose(left[1:], [[3.0, 1.5], [10.0, 1.2]])
    # The outer handles point back along the inner ones: they play nothing between the keys.
    np.testing.assert_allclose(left[0], [0.0, -0.5])
    np.testing.assert_allclose(right[2], [16.0, 0.8])


def test_slopes_are_central_differences_one_sided_at_the_ends() -> None:
    times = np.array([0.0, 1.0, 3.0, 4.0])
    values = np.array([[0.0], [1.0], [9.0], [16.0]])
    np.testing.assert_allclose(slopes(times, values)[:, 0], [1.0, 3.0, 5.0, 7.0])


@pytest.mark.parametrize("frames", [2, 3])
def test_short_runs_keep_every_key(frames: int) -> None:
    times = np.arange(float(frames))
    values = np.arange(float(frames))[:, None] ** 2
    played, _ = keyed_curve(times, np.arange(frames), values)
    np.testing.assert_array_equal(played, values)
