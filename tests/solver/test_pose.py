"""From local rotations to joints and back, keeping each bone's twist."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.solver import ChainRest, forward_kinematics, inherited_stretch, local_rotations, solve_frames
from fabrik_addon.solver.bones.chain import FLOAT_BONES
from fabrik_addon.solver.core import quat_normalize, quat_to_matrix, twist


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


@pytest.mark.parametrize("bones", [1, 3, 12])
def test_one_frame_gets_the_rotations_that_frame_gets_among_many(bones: int) -> None:
    """A frame's rotations do not depend on the frames solved beside it, to the bit (one frame is worked out on
    plain floats, many on arrays, with the same arithmetic): the live preview's single frames equal a bake's.
    Each bone's quaternion up to its sign, which follows the frame before among many."""
    rng = np.random.default_rng(bones)
    rest = _random_rest(rng, bones)
    offsets = rest.offsets.copy()
    offsets[min(1, bones - 1)] = 0.0  # a bone that carries nothing keeps its input rotation
    rest = ChainRest(rest.rest_rotations, offsets)
    inputs = quat_normalize(rng.normal(size=(20, bones, 4)))
    joints, _ = forward_kinematics(rest, quat_normalize(rng.normal(size=(20, bones, 4))))
    together = local_rotations(rest, joints, inputs)
    for frame in range(20):
        alone = local_rotations(rest, joints[frame : frame + 1], inputs[frame : frame + 1])[0]
        for k in range(bones):
            assert np.array_equal(alone[k], together[frame, k]) or np.array_equal(alone[k], -together[frame, k])


@pytest.mark.parametrize("bones", [1, 4, FLOAT_BONES, FLOAT_BONES + 1])
@pytest.mark.parametrize("stretched", [False, True])
def test_one_frame_is_posed_as_among_many(bones: int, stretched: bool) -> None:
    """Up to ``FLOAT_BONES`` bones, one frame is posed on plain floats (the live preview's), more frames on
    arrays: the same joints and orientations to rounding (a segment's sum may pair its terms otherwise)."""
    rng = np.random.default_rng(bones)
    rest = _random_rest(rng, bones)
    rotations = quat_normalize(rng.normal(size=(10, bones, 4)))
    scales = rng.uniform(0.5, 2.0, size=(10, bones)) if stretched else None
    joints, orientations = forward_kinematics(rest, rotations, scales)
    for frame in range(10):
        one = forward_kinematics(
            rest, rotations[frame : frame + 1], None if scales is None else scales[frame : frame + 1]
        )
        np.testing.assert_allclose(one[0][0], joints[frame], rtol=0, atol=1e-12 * bones)
        np.testing.assert_allclose(one[1][0], orientations[frame], rtol=0, atol=1e-14 * bones)


def test_one_frame_with_a_bone_solved_to_no_length_is_as_among_many() -> None:
    """A bone whose solved segment has no length has no direction: one frame gives it NaN, as many frames do,
    and raises nothing."""
    rest = ChainRest(np.tile(np.eye(3), (2, 1, 1)), np.array([[0, 1.0, 0], [0, 1.0, 0]]))
    joints = np.array([[[0, 0, 0], [0, 1.0, 0], [0, 1.0, 0]]])
    inputs = np.tile([1.0, 0, 0, 0], (1, 2, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        many = local_rotations(rest, np.repeat(joints, 2, 0), np.repeat(inputs, 2, 0))
        one = local_rotations(rest, joints, inputs)
    assert np.isnan(one[0, 1]).all()
    np.testing.assert_array_equal(one[0], many[0])


def test_rest_pose_is_the_identity() -> None:
    rest = ChainRest(np.tile(np.eye(3), (3, 1, 1)), np.array([[0, 1.0, 0], [0, 2.0, 0], [0.5, 0.5, 0]]))
    joints, orientations = forward_kinematics(rest, np.tile([1.0, 0, 0, 0], (1, 3, 1)))
    np.testing.assert_allclose(joints[0], np.array([[0, 0, 0], [0, 1, 0], [0, 3, 0], [0.5, 3.5, 0]]))
    np.testing.assert_allclose(orientations[0], np.tile(np.eye(3), (3, 1, 1)))
    rotations = local_rotations(rest, joints, np.array([[1.0, 0, 0, 0]] * 3))
    np.testing.assert_allclose(rotations, np.tile([1.0, 0, 0, 0], (1, 3, 1)), atol=1e-12)


def test_a_bone_turned_straight_back_gets_a_half_turn() -> None:
    """Where a segment points exactly against its bone's rest offset there is no smallest swing: the bone
    gets a half turn (about a fixed perpendicular) and still lies along its segment, as does every bone after
    it, on every frame, the folded one among others."""
    rest = ChainRest(np.tile(np.eye(3), (3, 1, 1)), np.array([[0, 1.0, 0], [0, 1.0, 0], [1.0, 0, 0]]))
    joints = np.array(
        [
            [[0, 0, 0], [0, 1, 0], [0, 0, 0], [1, 0, 0]],  # the middle bone folded back along the first
            [[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 2, 0]],  # the rest pose
            [[0, 0, 0], [0, -1, 0], [0, -2, 0], [-1, -2, 0]],  # the root turned straight back
        ],
        dtype=np.float64,
    )
    rotations = local_rotations(rest, joints, np.array([[1.0, 0, 0, 0]] * 3))
    posed, _ = forward_kinematics(rest, rotations)
    np.testing.assert_allclose(posed, joints, atol=1e-12)


def test_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="rest_rotations"):
        ChainRest(np.eye(3)[None], np.zeros((2, 3)))


@pytest.mark.parametrize("bones", [1, 2, 6])
def test_stretched_bones_keyed_for_full_scale_inheritance_lie_where_the_solver_put_them(bones: int) -> None:
    """Evaluate the keys as Blender does with "Full" scale inheritance (each bone's matrix is its parent's,
    scale and all, times its rest offset and its own rotation and scale) and find the solved joints."""
    rng = np.random.default_rng(bones)
    rest_rotations = quat_to_matrix(quat_normalize(rng.normal(size=(bones, 4))))
    rest_rotations[0] = np.eye(3)
    rest = ChainRest(rest_rotations, np.column_stack([np.zeros(bones), rng.uniform(0.5, 2, bones), np.zeros(bones)]))
    rotations = quat_normalize(rng.normal(size=(20, bones, 4)))
    scales = rng.uniform(1.0, 1.6, size=(20, bones))
    solved, _ = forward_kinematics(rest, rotations, scales)
    keyed_rotations, keyed_scales = inherited_stretch(rest, rotations, scales)

    heads = np.zeros((20, bones + 1, 3))
    linear = np.broadcast_to(np.eye(3), (20, 3, 3))
    for k in range(bones):
        stretch = np.ones((20, 3))
        stretch[:, 1] = keyed_scales[:, k]
        linear = linear @ rest.rest_rotations[k] @ quat_to_matrix(keyed_rotations[:, k]) * stretch[:, None, :]
        heads[:, k + 1] = heads[:, k] + linear @ rest.offsets[k]
    np.testing.assert_allclose(heads, solved, atol=1e-9)
    unstretched, ones = inherited_stretch(rest, rotations, np.ones((20, bones)))
    np.testing.assert_allclose(ones, 1.0)
    np.testing.assert_allclose(np.abs(np.sum(unstretched * rotations, axis=-1)), 1.0, atol=1e-12)
