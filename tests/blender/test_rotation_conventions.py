"""Our rotation conventions are Blender's: mathutils is the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from mathutils import Euler, Matrix, Quaternion

from fabrik_addon.solver.core import (
    EULER_ORDERS,
    axis_angle_to_quat,
    euler_to_matrix,
    matrix_to_euler,
    matrix_to_quat,
    quat_to_matrix,
)

RNG = np.random.default_rng(99)


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_matrices_match_mathutils(order: str) -> None:
    for angles in RNG.uniform(-3, 3, size=(50, 3)):
        ours = euler_to_matrix(angles, order)
        theirs = np.array(Euler(angles.tolist(), order).to_matrix())
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
        back = matrix_to_euler(ours, order)
        np.testing.assert_allclose(np.array(Euler(back.tolist(), order).to_matrix()), theirs, atol=1e-6)


def test_quaternions_match_mathutils() -> None:
    for q in RNG.normal(size=(100, 4)):
        q /= np.linalg.norm(q)
        np.testing.assert_allclose(quat_to_matrix(q), np.array(Quaternion(q.tolist()).to_matrix()), atol=1e-6)
        ours = matrix_to_quat(quat_to_matrix(q))
        theirs = np.array(Matrix(quat_to_matrix(q).tolist()).to_quaternion())
        assert abs(abs(float(np.dot(ours, theirs))) - 1) < 1e-6


def test_axis_angle_matches_mathutils() -> None:
    for angle, *axis in RNG.normal(size=(50, 4)):
        ours = axis_angle_to_quat(np.array([angle, *axis]))
        theirs = np.array(Quaternion(np.array(axis) / np.linalg.norm(axis), angle))
        assert abs(abs(float(np.dot(ours, theirs))) - 1) < 1e-6
