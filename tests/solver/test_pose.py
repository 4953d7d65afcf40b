"""From local rotations to joints and back, keeping each bone's twist."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.solver import solve_frames
from fabrik_addon.solver.pose import ChainRest, forward_kinematics, local_rotations
from fabrik_addon.solver.rotations import quat_normalize, quat_to_matrix, twist


def _random_rest(rng: np.random.Generator, bones: int) -> ChainRest:
    rest_rotations = quat_to_matrix(quat_normalize(rng.normal(size=(bones, 4))))
    rest_rotations[0] = np.eye(3)
    return ChainRest(rest_rotations, rng.normal(size=(bones, 3)))


@pytest.mark.parametrize("bones", [1, 2, 7, 30])
def test_local_rotations_reproduce_the_solved_joints_and_keep_twist(bones: int) -> None:
    rng = np.random.default_rng(bones)
    rest = _random_rest(rng, bones)
    inputs = quat_normalize(rng.normal(size=(bones, 4)))
    start, _ = forward_kinematics(rest, inputs[None])
    reach = rest.lengths.sum()
    targets = rng.normal(size=(80, 3)) * 0.5 * reach / np.sqrt(3)
    solved = solve_frames(start[0], targets, tolerance=1e-9 * reach)
    rotations = local_rotations(rest, solved.joints, inputs)
    joints, _ = forward_kinematics(rest, rotations)
    np.testing.assert_allclose(joints, solved.joints, atol=1e-9 * reach)
    axes = rest.offsets / rest.lengths[:, None]
    np.testing.assert_allclose(np.abs(np.sum(twist(rotations, axes) * twist(inputs, axes), axis=-1)), 1.0, atol=1e-12)
    assert (np.sum(rotations[1:] * rotations[:-1], axis=-1) >= 0).all()  # sign-continuous


def test_rest_pose_is_the_identity() -> None:
    rest = ChainRest(np.tile(np.eye(3), (3, 1, 1)), np.array([[0, 1.0, 0], [0, 2.0, 0], [0.5, 0.5, 0]]))
    joints, orientations = forward_kinematics(rest, np.tile([1.0, 0, 0, 0], (1, 3, 1)))
    np.testing.assert_allclose(joints[0], np.array([[0, 0, 0], [0, 1, 0], [0, 3, 0], [0.5, 3.5, 0]]))
    np.testing.assert_allclose(orientations[0], np.tile(np.eye(3), (3, 1, 1)))
    rotations = local_rotations(rest, joints, np.array([[1.0, 0, 0, 0]] * 3))
    np.testing.assert_allclose(rotations, np.tile([1.0, 0, 0, 0], (1, 3, 1)), atol=1e-12)


def test_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="rest_rotations"):
        ChainRest(np.eye(3)[None], np.zeros((2, 3)))
