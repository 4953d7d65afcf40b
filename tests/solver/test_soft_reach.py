"""Soft reach: a target near or beyond a chain's full reach is eased in, so the chain straightens gradually
instead of snapping straight (a knee that does not pop), on a chain (``solve_bones``) and on a tree
(``solve_tree_pose``); the error stays measured to the target as given."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabrik_addon.solver import (
    ChainRest,
    JointLimits,
    TreeRest,
    forward_kinematics,
    soften_reach,
    solve_bones,
    solve_tree_pose,
)

from .chains import FloatArray

TOLERANCE = 1e-6


def _leg() -> ChainRest:
    """A thigh and a shin of 0.45 m each, hanging down (-Y of the base frame is along the bones)."""
    offsets = np.array([[0.0, 0.45, 0.0], [0.0, 0.45, 0.0]])
    return ChainRest(np.broadcast_to(np.eye(3), (2, 3, 3)).copy(), offsets)


def _bent_start() -> FloatArray:
    """The knee bent 30 degrees about X, the hip straight."""
    half = np.radians(30.0) / 2
    return np.array([[1.0, 0.0, 0.0, 0.0], [np.cos(half), np.sin(half), 0.0, 0.0]])


def _knee_angles(rest: ChainRest, rotations: FloatArray) -> FloatArray:
    joints = forward_kinematics(rest, rotations)[0]
    thigh, shin = joints[:, 1] - joints[:, 0], joints[:, 2] - joints[:, 1]
    cos = np.einsum("fi,fi->f", thigh, shin) / (np.linalg.norm(thigh, axis=1) * np.linalg.norm(shin, axis=1))
    return np.asarray(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def _outward(frames: int, near: float, far: float) -> FloatArray:
    """Targets along the leg's line, a little in front (+Z), from ``near`` to ``far`` of the leg's reach."""
    distance = np.linspace(near, far, frames) * 0.9
    direction = np.array([0.0, 1.0, 0.05]) / np.linalg.norm([0.0, 1.0, 0.05])
    return np.asarray(distance[:, None] * direction)


@given(
    st.floats(0.0, 3.0),
    st.floats(0.1, 2.0),
    st.one_of(st.just(0.0), st.floats(1e-4, 1.0)),
)
def test_eased_points_keep_their_direction_stay_inside_the_reach_and_keep_the_order_of_distances(
    distance: float, reach: float, soft: float
) -> None:
    points = np.array([[distance, 0.0, 0.0], [distance + 0.01, 0.0, 0.0]]) * np.array([1.0, 0.0, 0.0])
    eased = soften_reach(points, reach, soft)
    assert (eased[:, 1:] == 0.0).all()
    assert (eased[:, 0] >= 0.0).all()
    assert eased[1, 0] >= eased[0, 0]  # farther stays farther (or equal, to rounding at full reach)
    if soft == 0 or distance <= reach - soft:
        assert eased[0, 0] == distance
    else:  # eased, short of the reach (at most reaching it, to rounding, from far beyond)
        assert reach - soft <= eased[0, 0] <= min(reach, distance) * (1 + 1e-12)


def test_easing_meets_the_kept_points_with_slope_one() -> None:
    reach, soft = 1.0, 0.2
    d = np.array([0.8 - 1e-6, 0.8, 0.8 + 1e-6, 0.8 + 2e-6])
    eased = soften_reach(np.stack([d, 0 * d, 0 * d], axis=1), reach, soft)[:, 0]
    np.testing.assert_allclose(np.diff(eased), np.diff(d), rtol=1e-4)
    far = soften_reach(np.array([[0.0, 0.0, 100.0]]), reach, soft)
    assert 1.0 - 1e-9 < far[0, 2] < 1.0 or far[0, 2] == pytest.approx(1.0)


def test_zero_soft_reach_changes_no_result() -> None:
    rest = _leg()
    targets = _outward(40, 0.7, 1.2)
    plain = solve_bones(rest, _bent_start(), targets, limits=JointLimits.free(2), tolerance=TOLERANCE)
    zero = solve_bones(rest, _bent_start(), targets, limits=JointLimits.free(2), tolerance=TOLERANCE, soft_reach=0)
    np.testing.assert_array_equal(plain.rotations, zero.rotations)
    np.testing.assert_array_equal(plain.error, zero.error)


@pytest.mark.parametrize("limited", [False, True])
def test_a_leg_reaching_out_straightens_gradually_with_soft_reach_and_snaps_without(limited: bool) -> None:
    """The target moves steadily from 85% to 110% of the leg's reach: without soft reach the knee straightens
    in the last few frames before full reach (the pop); with it the knee's turn per frame stays small."""
    rest = _leg()
    limits = JointLimits.free(2)
    if limited:  # the knee bends one way only, as a leg's does (about X, 0 to 150 degrees)
        limits = JointLimits(
            lock=np.array([[False] * 3, [False, True, True]]),
            use_limit=np.array([[False] * 3, [True, False, False]]),
            minimum=np.array([[0.0] * 3, [0.0, 0.0, 0.0]]),
            maximum=np.array([[0.0] * 3, [np.radians(150), 0.0, 0.0]]),
            stretch=np.zeros(2),
        )
    targets = _outward(120, 0.85, 1.1)
    hard = solve_bones(rest, _bent_start(), targets, limits=limits, tolerance=TOLERANCE)
    soft = solve_bones(rest, _bent_start(), targets, limits=limits, tolerance=TOLERANCE, soft_reach=0.05)
    hard_step = np.abs(np.diff(_knee_angles(rest, hard.rotations))).max()
    soft_step = np.abs(np.diff(_knee_angles(rest, soft.rotations))).max()
    assert soft_step < 0.5 * hard_step, (soft_step, hard_step)
    # Inside the soft zone the tip is short of the target, and the error says so, measured to the target given.
    tips = forward_kinematics(rest, soft.rotations)[0][:, -1]
    np.testing.assert_allclose(np.linalg.norm(tips - targets, axis=1), soft.error, atol=1e-9)
    distance = np.linalg.norm(targets, axis=1)
    assert (soft.error[distance > 0.9 - 0.05 + 0.005] > TOLERANCE).all()
    assert (soft.error[distance <= 0.9 - 0.05] <= TOLERANCE).all()
    assert (np.linalg.norm(tips, axis=1) < 0.9).all()  # never quite straight


def test_stretch_reaches_the_target_and_leaves_soft_reach_aside() -> None:
    rest = _leg()
    stretchy = JointLimits(
        np.zeros((2, 3), bool), np.zeros((2, 3), bool), np.zeros((2, 3)), np.zeros((2, 3)), np.full(2, 0.5)
    )
    targets = _outward(10, 0.95, 1.05)
    kw = {"limits": stretchy, "stretch": True, "tolerance": TOLERANCE}
    with_soft = solve_bones(rest, _bent_start(), targets, soft_reach=0.1, **kw)  # type: ignore[arg-type]
    without = solve_bones(rest, _bent_start(), targets, **kw)  # type: ignore[arg-type]
    np.testing.assert_array_equal(with_soft.rotations, without.rotations)


def test_a_tip_turned_to_its_target_eases_the_chain_above_it() -> None:
    """With the tip bone turned to a goal orientation the bones above aim its head, eased against their own
    reach: the error is still measured from the tip's tail to the target."""
    offsets = np.array([[0.0, 0.45, 0.0], [0.0, 0.45, 0.0], [0.0, 0.15, 0.0]])
    rest = ChainRest(np.broadcast_to(np.eye(3), (3, 3, 3)).copy(), offsets)
    start = np.array([[1.0, 0, 0, 0], [np.cos(0.26), np.sin(0.26), 0, 0], [1.0, 0, 0, 0]])
    targets = _outward(30, 0.9, 1.1) / 0.9 * 1.05  # along the leg, to beyond the whole chain
    down = np.broadcast_to(np.eye(3), (30, 3, 3))
    kw = {"limits": JointLimits.free(3), "orientations": down, "tolerance": TOLERANCE}
    soft = solve_bones(rest, start, targets, soft_reach=0.05, **kw)  # type: ignore[arg-type]
    joints, frames = forward_kinematics(rest, soft.rotations)
    np.testing.assert_allclose(frames[:, -1], down, atol=1e-9)  # the tip bone still turned to its goal
    np.testing.assert_allclose(np.linalg.norm(joints[:, -1] - targets, axis=1), soft.error, atol=1e-9)
    assert (np.linalg.norm(joints[:, 2], axis=1) < 0.9).all()  # the head of the tip never at full reach


def test_each_branch_of_a_tree_eases_toward_its_own_reach() -> None:
    """A Y: a trunk and two branches. The branch with soft reach stops short near its full reach, the other
    reaches its target; errors are measured to the targets as given."""
    parents = np.array([-1, 0, 0])
    heads = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    rest = TreeRest(parents, np.broadcast_to(np.eye(3), (3, 3, 3)).copy(), heads, np.ones(3))
    targets = np.array([[[0.6, 1.78, 0.0], [-0.6, 1.78, 0.0]]])  # both 1.88 from the root, of a reach of 2
    solution = solve_tree_pose(
        rest, np.array([[1.0, 0, 0, 0]] * 3), [1, 2], targets, tolerance=TOLERANCE, soft_reach=[0.2, 0.0]
    )
    np.testing.assert_allclose(np.linalg.norm(solution.ends - targets, axis=-1), solution.errors, atol=1e-9)
    assert solution.errors[0, 0] > 0.01
    assert not solution.reached[0, 0]
    assert solution.reached[0, 1]
    with pytest.raises(ValueError, match="soft_reach"):
        solve_tree_pose(rest, np.array([[1.0, 0, 0, 0]] * 3), [1, 2], targets, soft_reach=[-1.0, 0.0])
