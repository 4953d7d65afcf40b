"""Rotation maths: round trips, the smallest rotation, swing-twist, continuity."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.solver import FloatArray
from fabrik_addon.solver.core import (
    EULER_ORDERS,
    cross,
    euler_continuous,
    euler_to_matrix,
    matrix_to_euler,
    matrix_to_quat,
    quat_between,
    quat_conjugate,
    quat_multiply,
    quat_normalize,
    quat_rotate,
    quat_to_matrix,
    sign_continuous,
    twist,
)
from fabrik_addon.solver.core.rotations import FLOAT_MATRICES

RNG = np.random.default_rng(1234)
QUATS = quat_normalize(RNG.normal(size=(500, 4)))
UNITS = RNG.normal(size=(500, 3))
UNITS /= np.linalg.norm(UNITS, axis=1, keepdims=True)
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def _same_rotation(a: FloatArray, b: FloatArray) -> None:
    np.testing.assert_allclose(np.abs(np.sum(a * b, axis=-1)), 1.0, atol=1e-12)


def test_matrix_round_trip_including_half_turns() -> None:
    half_turns = np.concatenate([np.zeros((3, 1)), np.eye(3)], axis=1)  # 180 degrees about x, y, z
    quats = np.concatenate([QUATS, half_turns])
    _same_rotation(matrix_to_quat(quat_to_matrix(quats)), quats)
    assert (matrix_to_quat(quat_to_matrix(quats))[:, 0] >= 0).all()


def test_rotate_agrees_with_matrix_and_product_composes() -> None:
    np.testing.assert_allclose(
        quat_rotate(QUATS, UNITS), np.einsum("fij,fj->fi", quat_to_matrix(QUATS), UNITS), atol=1e-12
    )
    other = QUATS[::-1]
    np.testing.assert_allclose(
        quat_to_matrix(quat_multiply(QUATS, other)), quat_to_matrix(QUATS) @ quat_to_matrix(other), atol=1e-12
    )
    np.testing.assert_allclose(
        quat_multiply(QUATS, quat_conjugate(QUATS)), np.tile([1.0, 0, 0, 0], (500, 1)), atol=1e-12
    )


def test_smallest_rotation_between_directions() -> None:
    targets = UNITS[::-1]
    q = quat_between(UNITS, targets)
    np.testing.assert_allclose(quat_rotate(q, UNITS), targets, atol=1e-12)
    # Smallest: its axis is perpendicular to both directions.
    np.testing.assert_allclose(np.sum(q[:, 1:] * UNITS, axis=1), 0.0, atol=1e-12)
    opposite = quat_between(UNITS, -UNITS)
    np.testing.assert_allclose(quat_rotate(opposite, UNITS), -UNITS, atol=1e-12)


def test_swing_twist_decomposition() -> None:
    t = twist(QUATS, UNITS)
    swing = quat_multiply(QUATS, quat_conjugate(t))
    np.testing.assert_allclose(np.sum(swing[:, 1:] * UNITS, axis=1), 0.0, atol=1e-12)  # swing axis _|_ axis
    np.testing.assert_allclose(np.cross(t[:, 1:], UNITS), 0.0, atol=1e-12)  # twist axis // axis


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_round_trip_every_order(order: str) -> None:
    angles = RNG.uniform(-np.pi, np.pi, size=(500, 3))
    matrices = euler_to_matrix(angles, order)
    back = matrix_to_euler(matrices, order)
    np.testing.assert_allclose(euler_to_matrix(back, order), matrices, atol=1e-9)
    middle = "XYZ".index(order[1])
    assert (np.abs(back[:, middle]) <= np.pi / 2 + 1e-12).all()


def test_continuity_helpers() -> None:
    flipped = QUATS * np.where(RNG.uniform(size=(500, 1)) < 0.5, -1.0, 1.0)
    smooth = sign_continuous(np.cumsum(np.full((50, 4), 0.01), axis=0) + IDENTITY)
    assert (np.sum(smooth[1:] * smooth[:-1], axis=1) > 0).all()
    q = sign_continuous(flipped, reference=-flipped[0])
    assert np.sum(q[0] * flipped[0]) < 0
    angles = np.unwrap(np.linspace(0, 12, 100))[:, None] * [1, 0.5, -1]
    wrapped = np.angle(np.exp(1j * angles))
    np.testing.assert_allclose(euler_continuous(wrapped, reference=angles[0]), angles, atol=1e-12)


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "axis"),
    [((3,), (3,), -1), ((7, 3), (1, 3), -1), ((3, 5), (3, 1), 0), ((4, 3, 6), (1, 3, 6), 1), ((2, 4, 3), (3,), -1)],
)
def test_cross_products_are_numpys_to_the_bit(a_shape: tuple[int, ...], b_shape: tuple[int, ...], axis: int) -> None:
    """``cross``, written out by component for its cost on single frames, rounds as ``np.cross`` does."""
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    assert np.array_equal(cross(a, b, axis=axis), np.cross(a, b, axis=axis))


def test_cross_products_along_an_axis_counted_from_the_back_but_the_last_are_refused() -> None:
    with pytest.raises(ValueError, match="axis"):
        cross(np.ones((3, 2)), np.ones((3, 2)), axis=-2)


@pytest.mark.parametrize("count", [1, 4, FLOAT_MATRICES])
def test_a_few_quaternions_convert_as_many_do_to_the_bit(count: int) -> None:
    """Up to ``FLOAT_MATRICES`` quaternions are converted to matrices on plain floats, more on arrays: the same
    matrices to the bit either way, unnormalised, float32-rounded and NaN quaternions included."""
    rng = np.random.default_rng(4)
    quats = np.concatenate([QUATS, rng.normal(size=(40, 4)), np.full((1, 4), np.nan)])
    for every in (quats, quats.astype(np.float32).astype(np.float64)):
        assert len(every) > FLOAT_MATRICES  # converted on arrays
        many = quat_to_matrix(every)
        for start in range(0, len(every) - count + 1, 13):
            few = quat_to_matrix(every[start : start + count])
            assert np.array_equal(few, many[start : start + count], equal_nan=True)
    assert quat_to_matrix(quats[0]).shape == (3, 3)
    assert quat_to_matrix(quats[:6].reshape(2, 3, 4)).shape == (2, 3, 3, 3)


@pytest.mark.parametrize("count", [1, 4, FLOAT_MATRICES])
def test_a_few_matrices_convert_as_many_do_to_the_bit(count: int) -> None:
    """Up to ``FLOAT_MATRICES`` matrices are converted on plain floats (the live preview's single frames), more
    on arrays: each matrix gets the same quaternion to the bit either way, half turns, float32-rounded
    matrices and NaN included."""
    matrices = quat_to_matrix(QUATS)
    rounded = matrices.astype(np.float32).astype(np.float64)
    half_turns = quat_to_matrix(np.concatenate([np.zeros((3, 1)), np.eye(3)], axis=1))
    odd = np.concatenate([half_turns, np.eye(3)[None], np.full((1, 3, 3), np.nan)])
    for every in (matrices, rounded, np.tile(odd, (FLOAT_MATRICES, 1, 1))):
        assert len(every) > FLOAT_MATRICES  # converted on arrays
        many = matrix_to_quat(every)
        for start in range(0, len(every) - count + 1, 37):
            few = matrix_to_quat(every[start : start + count])
            assert np.array_equal(few, many[start : start + count], equal_nan=True)
