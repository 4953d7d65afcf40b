"""The tip's goal orientation (``tip_rotation``): where the head must go, the chain above the tip, the tip's
rotation within its limits, and the blend toward the goal."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.solver import ChainRest, JointLimits, forward_kinematics
from fabrik_addon.solver.bones.tip_rotation import above, blend, head_goals, tip_rotations
from fabrik_addon.solver.core import matrix_to_quat, quat_normalize, quat_to_matrix

from .chains import FloatArray, random_limited_chain


def _angle(a: FloatArray, b: FloatArray) -> FloatArray:
    cos = (np.trace(np.swapaxes(a, 1, 2) @ b, axis1=1, axis2=2) - 1.0) / 2.0
    return np.asarray(np.arccos(np.clip(cos, -1.0, 1.0)))


def _random_orientations(rng: np.random.Generator, frames: int) -> FloatArray:
    return np.asarray(quat_to_matrix(quat_normalize(rng.normal(size=(frames, 4)))))


def test_the_head_goal_puts_the_tail_on_the_target() -> None:
    rng = np.random.default_rng(1)
    rest, _, _ = random_limited_chain(rng, 3)
    orientations = _random_orientations(rng, 10)
    targets = rng.normal(size=(10, 3))
    heads = head_goals(rest, orientations, targets)
    np.testing.assert_allclose(heads + orientations @ rest.offsets[-1], targets, atol=1e-12)


def test_above_is_the_chain_without_its_tip() -> None:
    rng = np.random.default_rng(2)
    rest, limits, _ = random_limited_chain(rng, 4)
    rest_above, limits_above = above(rest, limits)
    np.testing.assert_array_equal(rest_above.offsets, rest.offsets[:-1])
    np.testing.assert_array_equal(rest_above.rest_rotations, rest.rest_rotations[:-1])
    np.testing.assert_array_equal(limits_above.maximum, limits.maximum[:-1])
    with pytest.raises(ValueError, match="a chain of one bone has no bones above its tip"):
        above(ChainRest(np.eye(3)[None], np.array([[0.0, 1.0, 0.0]])), JointLimits.free(1))


def test_a_free_tip_turns_exactly_to_its_goal_under_its_parent() -> None:
    rng = np.random.default_rng(3)
    rest, _, _ = random_limited_chain(rng, 3)
    free = JointLimits.free(3)
    parents = _random_orientations(rng, 12)
    goals = _random_orientations(rng, 12)
    local = tip_rotations(rest, free, parents, goals)
    world = parents @ rest.rest_rotations[-1] @ quat_to_matrix(local)
    np.testing.assert_allclose(world, goals, atol=1e-12)


def test_a_limited_tip_takes_the_nearest_orientation_its_limits_allow() -> None:
    rng = np.random.default_rng(4)
    rest, _, _ = random_limited_chain(rng, 2)
    limits = JointLimits.of(2, lock=[[0, 0, 0], [0, 1, 1]], use_limit=[[0, 0, 0], [1, 0, 0]], minimum=0.0, maximum=1.2)
    parents = _random_orientations(rng, 30)
    goals = _random_orientations(rng, 30)
    local = tip_rotations(rest, limits, parents, goals)
    assert limits.take([1]).excess(local[:, None]).max() <= 1e-12
    wanted = matrix_to_quat(np.swapaxes(parents @ rest.rest_rotations[-1], 1, 2) @ goals)
    np.testing.assert_allclose(np.abs(local), np.abs(limits.clamp(wanted, bone=1)), atol=1e-12)


def test_blend_goes_from_the_free_orientation_to_the_goal_along_the_shorter_way() -> None:
    rng = np.random.default_rng(5)
    free, goal = _random_orientations(rng, 20), _random_orientations(rng, 20)
    np.testing.assert_allclose(blend(free, goal, 0.0), free, atol=1e-12)
    np.testing.assert_allclose(blend(free, goal, 1.0), goal, atol=1e-9)
    middle = blend(free, goal, 0.5)
    whole = _angle(free, goal)
    assert (whole <= np.pi + 1e-12).all()
    np.testing.assert_allclose(_angle(free, middle), 0.5 * whole, atol=1e-9)
    np.testing.assert_allclose(_angle(middle, goal), 0.5 * whole, atol=1e-9)


def test_the_chain_above_and_the_turned_tip_pose_the_whole_chain() -> None:
    """Posing the bones above toward the head goal, then the tip by ``tip_rotations``, puts the tail on the target
    with the tip turned as asked (what ``solve_bones`` does with its solver in the middle)."""
    rng = np.random.default_rng(6)
    rest, _, _ = random_limited_chain(rng, 3)
    free = JointLimits.free(3)
    posed = quat_normalize(rng.normal(size=(8, 3, 4)))
    joints, orientations = forward_kinematics(rest, posed)
    rest_above, _ = above(rest, free)
    parents = forward_kinematics(rest_above, posed[:, :-1])[1][:, -1]
    tip = tip_rotations(rest, free, parents, orientations[:, -1])
    again, turned = forward_kinematics(rest, np.concatenate([posed[:, :-1], tip[:, None]], axis=1))
    np.testing.assert_allclose(again[:, -1], joints[:, -1], atol=1e-12)
    np.testing.assert_allclose(turned[:, -1], orientations[:, -1], atol=1e-12)
