"""The limited solver's steps, written on rows of quaternions for speed, equal the same steps written plainly
with rotation matrices, frames first."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import ChainRest, FloatArray, JointLimits, forward_kinematics
from fabrik_addon.solver.bones.chain_steps import ChainSteps
from fabrik_addon.solver.core import (
    axis_angle_to_quat,
    matrix_to_quat,
    quat_between,
    quat_multiply,
    quat_normalize,
    quat_to_matrix,
)

from .chains import random_limited_chain


def _unit(v: FloatArray) -> FloatArray:
    return np.asarray(v / np.linalg.norm(v, axis=-1, keepdims=True))


def _aim(orientation: FloatArray, direction: FloatArray, toward: FloatArray) -> FloatArray:
    """``orientation`` (F, 3, 3) turned by the smallest turn taking its ``direction`` onto ``toward``."""
    return np.asarray(quat_to_matrix(quat_between(orientation @ direction, _unit(toward))) @ orientation)


def _fabrik(
    rest: ChainRest, limits: JointLimits, quats: FloatArray, scales: FloatArray, goals: FloatArray
) -> FloatArray:
    """One backward and one forward pass (see ``_pose_solve``), on (F, m, 4) rotations and (F, m) scales."""
    bones = len(rest.offsets)
    offsets = rest.stretched_offsets(scales)
    directions = rest.offsets / rest.lengths[:, None]
    joints, orientations = forward_kinematics(rest, quats, scales)
    placed = np.empty_like(joints)
    placed[:, -1] = goals
    turned = orientations.copy()
    for k in range(bones - 1, -1, -1):
        turned[:, k] = _aim(orientations[:, k], directions[k], placed[:, k + 1] - joints[:, k])
        if k + 1 < bones:  # the child's local rotation, clamped, decides the parent's orientation
            rest_rotation = rest.rest_rotations[k + 1]
            local = matrix_to_quat(np.swapaxes(turned[:, k] @ rest_rotation, 1, 2) @ turned[:, k + 1])
            allowed = quat_to_matrix(limits.clamp(local, bone=k + 1))
            turned[:, k] = turned[:, k + 1] @ np.swapaxes(rest_rotation @ allowed, 1, 2)
        placed[:, k] = placed[:, k + 1] - np.einsum("fij,fj->fi", turned[:, k], offsets[:, k])
    result = np.empty_like(quats)
    head = np.zeros((len(goals), 3))
    parent = np.broadcast_to(np.eye(3), (len(goals), 3, 3))
    for k in range(bones):
        frame = parent @ rest.rest_rotations[k]
        local = np.swapaxes(frame, 1, 2) @ turned[:, k]
        aimed = _aim(local, directions[k], np.einsum("fji,fj->fi", frame, placed[:, k + 1] - head))
        result[:, k] = limits.clamp(matrix_to_quat(aimed), bone=k)
        parent = frame @ quat_to_matrix(result[:, k])
        head = head + np.einsum("fij,fj->fi", parent, offsets[:, k])
    return result


def _least_squares(
    rest: ChainRest, limits: JointLimits, quats: FloatArray, scales: FloatArray, goals: FloatArray
) -> FloatArray:
    """One damped-least-squares step (damping 0.1 squared times the chain's length times the smaller of that
    length and the miss, each frame's own; turns of 0.3 radians at most)."""
    frames, bones = quats.shape[:2]
    joints, orientations = forward_kinematics(rest, quats, scales)
    arms = joints[:, -1:] - joints[:, :-1]
    cross = np.cross(np.eye(3)[None, None], arms[:, :, None, :])  # (F, m, axis, 3): axis x arm
    jacobian = cross.transpose(0, 3, 1, 2).reshape(frames, 3, 3 * bones)
    error = goals - joints[:, -1]
    reach = scales @ rest.lengths
    damping = 0.01 * reach * np.minimum(reach, np.linalg.norm(error, axis=-1))
    normal = jacobian @ np.swapaxes(jacobian, 1, 2) + damping[:, None, None] * np.eye(3)
    turns = (np.swapaxes(jacobian, 1, 2) @ np.linalg.solve(normal, error[..., None]))[..., 0].reshape(frames, bones, 3)
    angles = np.linalg.norm(turns, axis=-1, keepdims=True)
    turns *= np.minimum(1.0, 0.3 / np.maximum(angles, 1e-300))
    result = np.empty_like(quats)
    parent = np.broadcast_to(np.eye(3), (frames, 3, 3))
    for k in range(bones):
        local_turn = np.einsum("fji,fj->fi", parent @ rest.rest_rotations[k], turns[:, k])
        angle = np.linalg.norm(local_turn, axis=-1, keepdims=True)
        turn = axis_angle_to_quat(np.concatenate([angle, local_turn], axis=-1))
        result[:, k] = limits.clamp(quat_multiply(turn, quats[:, k]), bone=k)
        parent = orientations[:, k]
    return result


def _case(seed: int, bones: int, stretched: bool) -> tuple[ChainRest, JointLimits, FloatArray, FloatArray, FloatArray]:
    """A random limited chain, 30 poses within its limits, scales and goals around it."""
    rng = np.random.default_rng(seed)
    rest, limits, _ = random_limited_chain(rng, bones)
    quats = limits.clamp(quat_normalize(rng.normal(size=(30, bones, 4))))
    scales = rng.uniform(1.0, 1.5, (30, bones)) if stretched else np.ones((30, bones))
    goals = rng.normal(size=(30, 3)) * rest.lengths.sum() / 2
    return rest, limits, quats, scales, goals


def _rows(quats: FloatArray) -> FloatArray:
    return np.ascontiguousarray(quats.transpose(1, 2, 0))


def _same_rotations(a: FloatArray, b: FloatArray) -> None:
    np.testing.assert_allclose(quat_to_matrix(a), quat_to_matrix(b), atol=1e-7)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8), st.booleans())
def test_a_fabrik_iteration_on_rows_is_the_one_on_matrices(seed: int, bones: int, stretched: bool) -> None:
    rest, limits, quats, scales, goals = _case(seed, bones, stretched)
    steps = ChainSteps(rest, limits)
    posed = steps.fabrik(steps.pose(_rows(quats), np.ascontiguousarray(scales.T)), np.ascontiguousarray(goals.T))
    expected = _fabrik(rest, limits, quats, scales, goals)
    _same_rotations(posed.local.transpose(2, 0, 1), expected)
    joints, orientations = forward_kinematics(rest, expected, scales)
    np.testing.assert_allclose(posed.joints.transpose(2, 0, 1), joints, atol=1e-7 * rest.lengths.sum())
    np.testing.assert_allclose(quat_to_matrix(posed.world.transpose(2, 0, 1)), orientations, atol=1e-7)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8), st.booleans())
def test_a_least_squares_step_on_rows_is_the_one_on_matrices(seed: int, bones: int, stretched: bool) -> None:
    rest, limits, quats, scales, goals = _case(seed, bones, stretched)
    steps = ChainSteps(rest, limits)
    start = steps.pose(_rows(quats), np.ascontiguousarray(scales.T))
    posed = steps.least_squares(start, np.ascontiguousarray(goals.T))
    _same_rotations(posed.local.transpose(2, 0, 1), _least_squares(rest, limits, quats, scales, goals))


@pytest.mark.parametrize("stretched", [False, True])
def test_forward_kinematics_on_rows_is_the_one_on_matrices(stretched: bool) -> None:
    rest, limits, quats, scales, _ = _case(5, 6, stretched)
    posed = ChainSteps(rest, limits).pose(_rows(quats), np.ascontiguousarray(scales.T))
    joints, orientations = forward_kinematics(rest, quats, scales)
    np.testing.assert_allclose(posed.joints.transpose(2, 0, 1), joints, atol=1e-12 * rest.lengths.sum())
    np.testing.assert_allclose(quat_to_matrix(posed.world.transpose(2, 0, 1)), orientations, atol=1e-13)


def test_frames_taken_from_poses_are_laid_out_frames_last() -> None:
    """Indexing the frames axis with an array lays the result out frames first; the steps' per-bone rows
    would then be strided, several times slower, so taking frames lays them out again."""
    rest, limits, quats, scales, _ = _case(6, 4, True)
    posed = ChainSteps(rest, limits).pose(_rows(quats), np.ascontiguousarray(scales.T)).take(np.arange(0, 30, 3))
    for array in (posed.local, posed.scales, posed.world, posed.joints):
        assert array.flags.c_contiguous
    np.testing.assert_array_equal(posed.local, _rows(quats)[..., ::3])
