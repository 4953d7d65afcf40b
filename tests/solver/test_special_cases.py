"""Configurations where a naive FABRIK stalls, divides by zero or never stops."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.solver import solve
from fabrik_addon.solver.core import is_straight_line, may_bend, unbend_starts

from .chains import assert_chain_kept

STRAIGHT = np.column_stack([np.zeros(5), np.zeros(5), np.arange(5.0)])  # 4 unit segments up the z axis


@pytest.mark.parametrize("method", ["fabrik", "ccd"])
@pytest.mark.parametrize("height", [0.5, 1.0, 2.5, 3.9, -2.0])
def test_straight_chain_collinear_with_its_target_still_bends(method: str, height: float) -> None:
    result = solve(STRAIGHT, [0.0, 0.0, height], tolerance=1e-6, method=method)
    assert_chain_kept(result.joints, STRAIGHT)
    assert result.reached, result
    off_axis = np.linalg.norm(result.joints[:, :2], axis=1)
    assert off_axis.max() > 1e-3  # it left the line to fold


@pytest.mark.parametrize("method", ["fabrik", "ccd"])
def test_target_on_the_root(method: str) -> None:
    chain = np.array([[0.0, 0, 0], [0.3, 0, 0.9], [0.2, 0.5, 1.7], [0.0, 0.1, 2.5]])
    result = solve(chain, chain[0], tolerance=1e-6, method=method)
    assert_chain_kept(result.joints, chain)
    assert result.reached, result


def test_coincident_joints_in_the_start_pose() -> None:
    # Joints 0 and 2 coincide (the chain doubles back), and the target sits on joint 3.
    chain = np.array([[0.0, 0, 0], [0.0, 0, 1], [0.0, 0, 0], [1.0, 0, 0], [1.0, 1, 0]])
    for target in (chain[3], chain[0], chain[2], [0.5, 0.5, 0.5]):
        result = solve(chain, target, tolerance=1e-6)
        assert_chain_kept(result.joints, chain)
        assert result.reached, (target, result)


def test_target_inside_the_ball_a_dominant_segment_leaves() -> None:
    # The first segment (5) is longer than the rest (1 + 1): the tip can never come within 3 of the root.
    chain = np.array([[0.0, 0, 0], [5.0, 0, 0], [6.0, 0, 0], [7.0, 0, 0]])
    target = np.array([0.0, 1.0, 0.0])
    result = solve(chain, target, tolerance=1e-6)
    assert_chain_kept(result.joints, chain)
    assert not result.reached
    # The best the chain can do: the long segment towards the target, the others folded back along it.
    np.testing.assert_allclose(result.joints, [[0, 0, 0], [0, 5, 0], [0, 4, 0], [0, 3, 0]], atol=1e-12)
    assert np.isclose(result.error, 2.0)


def test_dominant_segment_target_just_outside_the_ball_is_reached() -> None:
    chain = np.array([[0.0, 0, 0], [5.0, 0, 0], [6.0, 0, 0], [7.0, 0, 0]])
    result = solve(chain, [0.0, 3.2, 0.5], tolerance=1e-6)
    assert_chain_kept(result.joints, chain)
    assert result.reached


def test_single_segment_points_at_any_target() -> None:
    chain = np.array([[1.0, 1, 1], [1.0, 1, 3]])
    result = solve(chain, [4.0, 1, 1])
    np.testing.assert_allclose(result.joints, [[1, 1, 1], [3, 1, 1]], atol=1e-12)
    assert np.isclose(result.error, 1.0)


def test_start_pose_already_on_target_takes_no_iteration() -> None:
    result = solve(STRAIGHT, [2e-5, 0.0, 4.0 - 5e-5], tolerance=1e-4)
    np.testing.assert_array_equal(result.joints, STRAIGHT)
    assert result.iterations == 0
    assert result.reached


def test_stops_early_when_stalled() -> None:
    # With every iteration required to improve the error by half, a slow convergence stops long before the
    # limit, and the best pose seen is returned.
    chain = np.column_stack([np.arange(10.0), np.zeros(10), np.zeros(10)])
    target = [8.9, 0.3, 0.0]
    stalled = solve(chain, target, tolerance=1e-9, max_iterations=500, min_improvement=0.5)
    patient = solve(chain, target, tolerance=1e-9, max_iterations=500, min_improvement=0.0)
    assert stalled.iterations < patient.iterations
    assert stalled.error >= patient.error
    assert_chain_kept(stalled.joints, chain)


def test_a_chain_is_straight_when_every_joint_and_the_target_lie_on_one_line_through_its_root() -> None:
    """The check as defined (each joint and the target within 1e-9 of the farthest one's distance from the
    line through the root and the tip), against chains on a line, off it by 1e-14 to 0.1 of their length, and
    targets on it or off it the same way."""
    rng = np.random.default_rng(11)
    for _ in range(100):
        segments, frames = int(rng.integers(1, 8)), 50
        line = rng.normal(size=(3, frames))
        line /= np.linalg.norm(line, axis=0)
        along = np.cumsum(rng.uniform(-2, 2, (segments, 1, frames)) * line, axis=0)
        root = rng.normal(size=(1, 3, frames))
        joints = root + np.concatenate([np.zeros((1, 3, frames)), along])
        off = 10.0 ** rng.integers(-14, 0, (2, frames)) * (rng.random((2, frames)) < 0.6)
        joints[1:] += rng.normal(size=(segments, 3, frames)) * off[0]
        targets = root[0] + line * rng.uniform(-5, 5, frames) + rng.normal(size=(3, frames)) * off[1]
        offsets = np.concatenate([joints[1:] - root, (targets - root[0])[None]])
        axis = (joints[-1] - root[0]) / np.linalg.norm(joints[-1] - root[0], axis=0)
        off_line = np.linalg.norm(np.cross(offsets, axis[None], axis=1), axis=1).max(axis=0)
        expected = off_line <= 1e-9 * np.linalg.norm(offsets, axis=1).max(axis=0)
        np.testing.assert_array_equal(is_straight_line(joints, targets), expected)


def test_a_straight_chain_toward_a_target_just_off_its_line_near_full_reach_is_bent_first() -> None:
    """A straight leg (heel strike) toward a foot held just short of its length: FABRIK from the straight chain
    creeps (hundreds of iterations, 317 on a captured walk); bent first toward the target, it takes a few tens,
    and ends where FABRIK alone does: the knee on the side away from the target's offset, in its plane."""
    chain = np.array([[0.0, 0, 0], [0, 0, 1], [0, 0, 2]])
    for offset, fraction in ((0.01, 0.995), (0.05, 0.99), (-0.03, 0.999)):
        d = 2.0 * fraction
        target = np.array([offset, 0.0, np.sqrt(d * d - offset * offset)])
        result = solve(chain, target, tolerance=1e-6, max_iterations=200)
        assert result.reached
        assert result.iterations <= 60
        # The knee of two unit segments: half way to the target, off the root-target line by sqrt(1 - (d/2)^2),
        # in the x-z plane, on the far side from the target's offset.
        along = target / d
        across = np.cross([0.0, 1.0, 0.0], along) * -np.sign(offset)
        knee = 0.5 * target + np.sqrt(1.0 - (d / 2) ** 2) * across
        np.testing.assert_allclose(result.joints[1], knee, atol=1e-5)


def test_a_frame_may_bend_says_no_only_where_nothing_is_bent() -> None:
    """``may_bend`` (one frame, plain floats) rules frames out of ``unbend_starts`` by necessary conditions: on
    bent and straight chains, nearly straight ones, folded ones lying on a line, goals on the chain's line, near
    and at full reach, wherever it says no, ``unbend_starts`` leaves the start pose as it is. It says no to a bent
    chain whose goal is well inside its reach."""
    rng = np.random.default_rng(12)
    said_no = bent = 0
    for case in range(2000):
        segments = int(rng.integers(1, 8))
        lengths = rng.uniform(0.1, 2.0, size=segments)
        direction = rng.normal(size=3)
        directions = np.tile(direction / np.linalg.norm(direction), (segments, 1))
        shape = case % 4  # straight, folded on its line, nearly straight, bent
        if shape == 1:
            directions[rng.random(segments) < 0.5] *= -1.0
        elif shape >= 2:
            directions += rng.normal(size=(segments, 3)) * (0.01 if shape == 2 else 1.0)
            directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        start = np.concatenate([np.zeros((1, 3)), np.cumsum(directions * lengths[:, None], axis=0)])[:, :, None]
        line = start[-1, :, 0] - start[0, :, 0]
        on_line = line / max(float(np.linalg.norm(line)), 1e-300) * rng.uniform(-1.0, 1.0) * lengths.sum()
        goal = on_line if rng.random() < 0.3 else rng.normal(size=3) * rng.uniform(0.1, 1.2) * lengths.sum()
        goal = goal[:, None]
        moved = start.copy()
        unbend_starts(moved, goal, lengths, np.array([True]))
        if not may_bend(start, goal, lengths):
            said_no += 1
            np.testing.assert_array_equal(moved, start)
        bent += not np.array_equal(moved, start)
    assert said_no > 200
    assert bent > 200
    chain = np.array([[0.0, 0, 0], [1.0, 0, 0], [1.0, 1.0, 0]])[:, :, None]
    assert not may_bend(chain, np.array([[0.5], [0.5], [0.2]]), np.array([1.0, 1.0]))


@pytest.mark.parametrize("scale", [1.0, 1e100, 1e150])
def test_a_frame_may_bend_where_its_measures_overflow(scale: float) -> None:
    """A chain folded back on its own line toward a goal on that line is bent by ``unbend_starts`` at any scale;
    where squaring its coordinates overflows, ``may_bend`` cannot rule it out and says it may."""
    line = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
    lengths = np.array([2.0, 1.0]) * scale
    start = np.array([[0.0, 0, 0], 2 * scale * line, scale * line])[:, :, None]
    goal = (0.3 * scale * line)[:, None]
    moved = start.copy()
    unbend_starts(moved, goal, lengths, np.array([True]))
    assert not np.array_equal(moved, start)
    assert may_bend(start, goal, lengths)
