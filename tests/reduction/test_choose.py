"""Which keys to keep, in numpy: every point within its bound on every frame as the kept keys play (recomputed
here from the keys alone, through the same forward kinematics), the ends always keyed, never more keys than
frames, and the choice made on the whole pose (a bone's error weighed by how far it moves what hangs below)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from fabrik_addon.reduction import (
    Channels,
    Skeleton,
    basis,
    bone_points,
    keyed_curve,
    keys_report,
    points_of,
    posed,
    thin_keys,
    turns,
)
from fabrik_addon.solver import EULER_ORDERS, euler_to_matrix, quat_to_matrix

Array = NDArray[np.float64]
Nodes = list[list[Channels]]


def _smooth(rng: np.random.Generator, frames: int, width: int, wiggle: float) -> Array:
    """Smooth random curves (frames, width): a few sines of random phase and frequency."""
    t = np.linspace(0.0, 1.0, frames)[:, None]
    curves = np.zeros((frames, width))
    for _ in range(3):
        frequency = rng.uniform(0.5, 3.0, width)
        curves += wiggle * rng.uniform(0.2, 1.0, width) * np.sin(2 * np.pi * frequency * t + rng.uniform(0, 6, width))
    return curves


def _chain(rng: np.random.Generator, bones: int, frames: int, mode: str = "QUATERNION") -> tuple[Skeleton, Nodes]:
    """A chain of bones, each keyed on its rotation on every frame, the first on its location too."""
    lengths = rng.uniform(0.2, 1.0, bones)
    offsets = [np.eye(4)]
    for k in range(1, bones):
        offset = np.eye(4)
        offset[1, 3] = lengths[k - 1]
        offsets.append(offset)
    nodes = []
    for k in range(bones):
        if mode == "QUATERNION":
            values = np.concatenate([np.ones((frames, 1)), _smooth(rng, frames, 3, 0.3)], axis=1)
        else:
            values = _smooth(rng, frames, 3, 0.6)
        node = [Channels("rotation", values, mode, values, tuple(range(values.shape[1])))]
        if k == 0:
            location = _smooth(rng, frames, 3, 0.5)
            node.append(Channels("location", location, "", location, (0, 1, 2)))
        nodes.append(node)
    skeleton = Skeleton(tuple(range(-1, bones - 1)), tuple(offsets), tuple(bone_points(length) for length in lengths))
    return skeleton, nodes


def _played_points(times: Array, skeleton: Skeleton, nodes: Nodes, thinned: object) -> Array:
    """Where the kept keys put every point, from the keys alone: each curve played from its kept keys, the
    handles fitted as ``thin_keys`` fits them, then the forward kinematics."""
    kept = iter(zip(thinned.keys, thinned.values, strict=True))  # type: ignore[attr-defined]
    bases = []
    for node in nodes:
        values = []
        for channels in node:
            keys, keyed = next(kept)
            assert channels.keyed is not None
            np.testing.assert_array_equal(keyed, channels.keyed[keys])
            played, _ = keyed_curve(times, keys, channels.keyed)
            values.append(played)
        bases.append(basis(node, values))
    return points_of(skeleton, posed(skeleton, bases))


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), bones=st.integers(1, 6), mode=st.sampled_from(["QUATERNION", "ZXY", "XYZ"]))
def test_every_point_stays_within_its_bound_as_the_kept_keys_play(seed: int, bones: int, mode: str) -> None:
    rng = np.random.default_rng(seed)
    frames = int(rng.integers(20, 120))
    times = np.arange(frames, dtype=float) + 7.0
    skeleton, nodes = _chain(rng, bones, frames, mode)
    reference = points_of(skeleton, posed(skeleton, [basis(node, [c.values for c in node]) for node in nodes]))
    bound = float(rng.uniform(1e-4, 2e-2))
    thinned = thin_keys(times, skeleton, nodes, bound)
    error = np.linalg.norm(_played_points(times, skeleton, nodes, thinned) - reference, axis=-1)
    assert error.max() <= bound * (1 + 1e-9)
    np.testing.assert_allclose(thinned.error, error, atol=1e-12)
    for keys in thinned.keys:
        assert keys[0] == 0
        assert keys[-1] == frames - 1
        assert np.all(np.diff(keys) > 0)


def test_a_loose_bound_keeps_few_keys_and_a_bound_of_zero_keeps_the_pose() -> None:
    rng = np.random.default_rng(2)
    skeleton, nodes = _chain(rng, 3, 90)
    times = np.arange(90.0)
    loose = thin_keys(times, skeleton, nodes, 0.05)
    assert sum(len(k) for k in loose.keys) < 0.25 * 90 * len(loose.keys)
    exact = thin_keys(times, skeleton, nodes, 0.0)
    assert exact.error.max() == 0.0
    assert sum(len(k) for k in exact.keys) > 0.9 * 90 * len(exact.keys)


def test_a_still_pose_keeps_its_first_and_last_keys() -> None:
    still = np.tile([0.9, 0.1, 0.3, -0.2], (40, 1))
    node = [Channels("rotation", still, "QUATERNION", still, (0, 1, 2, 3))]
    thinned = thin_keys(np.arange(40.0), Skeleton((-1,), (np.eye(4),), (bone_points(1.0),)), [node], 1e-6)
    np.testing.assert_array_equal(thinned.keys[0], [0, 39])


def test_a_long_lever_keeps_more_keys_than_a_short_one_turning_alike() -> None:
    """Two bones turn with the same curve; one carries a long bone below it, the other a short one: the same
    turn moves the long one's points farther, so it keeps more keys (curve by curve, they would keep alike)."""
    frames = 120
    t = np.linspace(0.0, 1.0, frames)
    angle = 0.8 * np.sin(2 * np.pi * 1.5 * t) + 0.3 * np.sin(2 * np.pi * 3.7 * t)
    turn = np.stack([np.cos(angle / 2), np.sin(angle / 2), 0 * t, 0 * t], axis=1)
    still = np.tile([1.0, 0.0, 0.0, 0.0], (frames, 1))

    def keys_of(length: float) -> int:
        offset = np.eye(4)
        offset[1, 3] = 0.1
        nodes = [
            [Channels("rotation", turn, "QUATERNION", turn, (0, 1, 2, 3))],
            [Channels("rotation", still, "QUATERNION")],
        ]
        skeleton = Skeleton((-1, 0), (np.eye(4), offset), (bone_points(0.1), bone_points(length)))
        return len(thin_keys(np.arange(float(frames)), skeleton, nodes, 1e-3).keys[0])

    assert keys_of(2.0) > 1.5 * keys_of(0.1)


def test_bounds_may_differ_by_frame_and_point() -> None:
    """A point held tighter on some frames (a pinned foot's ball) keeps more keys, and its bound holds."""
    rng = np.random.default_rng(9)
    skeleton, nodes = _chain(rng, 2, 80)
    times = np.arange(80.0)
    reference = points_of(skeleton, posed(skeleton, [basis(node, [c.values for c in node]) for node in nodes]))
    bound = np.full(reference.shape[:2], 1e-2)
    bound[30:50, 6] = 1e-5  # the second bone's tail
    thinned = thin_keys(times, skeleton, nodes, bound)
    error = np.linalg.norm(_played_points(times, skeleton, nodes, thinned) - reference, axis=-1)
    assert np.all(error <= bound * (1 + 1e-9))
    loose = thin_keys(times, skeleton, nodes, 1e-2)
    assert sum(map(len, thinned.keys)) > sum(map(len, loose.keys))


@pytest.mark.parametrize(
    ("times", "bound", "message"),
    [
        (np.array([0.0, 2.0, 1.0]), 1e-3, "increasing"),
        (np.arange(3.0), -1e-3, ">= 0"),
        (np.arange(3.0), float("nan"), ">= 0"),
    ],
)
def test_bad_input_is_refused_naming_what(times: Array, bound: float, message: str) -> None:
    still = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
    node = [Channels("rotation", still, "QUATERNION", still, (0, 1, 2, 3))]
    with pytest.raises(ValueError, match=message):
        thin_keys(times, Skeleton((-1,), (np.eye(4),), (bone_points(1.0),)), [node], bound)


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_turns_are_the_solvers_euler_rotations(order: str) -> None:
    angles = np.random.default_rng(4).uniform(-3, 3, (20, 3))
    np.testing.assert_allclose(quat_to_matrix(turns(order, angles)), euler_to_matrix(angles, order), atol=1e-12)


def test_the_report_counts_keys_and_takes_the_largest_and_99th_percentile_errors() -> None:
    errors = np.linspace(0.0, 1.0, 1000).reshape(100, 10)
    report = keys_report(np.arange(100), errors, 50, 400, 1.0)
    assert (report.keys, report.dense_keys, report.kept) == (50, 400, 0.125)
    assert report.max_error == 1.0
    assert report.p99_error == pytest.approx(np.percentile(errors, 99))
    np.testing.assert_allclose(report.frame_errors, errors.max(axis=1))
    assert report.within
