"""How near to and far from its root a chain's tip can come under its limits (``core.reach``): the bounds no
pose within the limits crosses, and poses that meet them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import ChainRest, JointLimits, forward_kinematics, solve_pose
from fabrik_addon.solver.core import chain_reach, inner_radius, quat_normalize, quat_to_matrix

from .chains import FloatArray, random_limits, random_rest_rotations

DEG = np.pi / 180
X = np.array([1.0, 0.0, 0.0])


def _hinge(maximum_deg: float) -> JointLimits:
    """A root free, the second bone bending about X from 0 to ``maximum_deg``."""
    return JointLimits.of(
        2, lock=[[0, 0, 0], [0, 1, 1]], use_limit=[[0, 0, 0], [1, 0, 0]], minimum=0.0, maximum=maximum_deg * DEG
    )


def _tips(rest: ChainRest, quats: FloatArray) -> FloatArray:
    return np.asarray(np.linalg.norm(forward_kinematics(rest, quats)[0][:, -1], axis=1), dtype=np.float64)


def test_a_hinged_knee_reaches_from_fully_bent_to_straight() -> None:
    lengths = np.array([1.0, 1.2])
    reach = chain_reach(np.tile(np.eye(3), (2, 1, 1)), np.outer(lengths, [0, 1, 0]), _hinge(150.0))
    assert reach.exact
    assert reach.nearest == pytest.approx(np.sqrt(lengths @ lengths + 2 * lengths.prod() * np.cos(150 * DEG)))
    assert reach.farthest == pytest.approx(2.2)


def test_an_elbow_bent_at_rest_that_its_limits_keep_bent_never_straightens() -> None:
    """The forearm's rest frame turned 30 degrees about X from the upper arm's, its limit bending it 0 to 60
    degrees more: the wrist comes from 90 degrees bent to 30 degrees bent, never straight."""
    lengths = np.array([1.0, 0.8])
    rest_rotations = np.stack([np.eye(3), quat_to_matrix(np.array([np.cos(15 * DEG), np.sin(15 * DEG), 0, 0]))])
    reach = chain_reach(rest_rotations, np.outer(lengths, [0, 1, 0]), _hinge(60.0))
    bent = [np.sqrt(lengths @ lengths + 2 * lengths.prod() * np.cos(a * DEG)) for a in (90.0, 30.0)]
    np.testing.assert_allclose([reach.nearest, reach.farthest], bent, rtol=1e-12)


@pytest.mark.parametrize(
    ("low_deg", "high_deg"),
    [
        ([0.0, 0.0, 0.0], [150.0, 0.0, 0.0]),
        ([-150.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
        ([0.0, 0.0, -150.0], [0.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 150.0]),
    ],
)
def test_a_knee_whose_other_swing_axis_is_limited_to_nothing_folds_as_if_it_were_locked(
    low_deg: list[float], high_deg: list[float]
) -> None:
    """A knee bending 150 degrees one way about X (or Z), the other swing axis limited to [0, 0] rather than
    locked: the same hinge. Its swing directions along the bending axis must have no component along the other
    (``cos(pi / 2)`` is 6e-17, which [0, 0] refuses): the reach was [2, 2], every target nearer sent to the one
    step that straightens the chain, missed by up to the knee's whole fold."""
    low, high = np.array([[0.0, 0.0, 0.0], low_deg]) * DEG, np.array([[0.0, 0.0, 0.0], high_deg]) * DEG
    limits = JointLimits.of(2, use_limit=[[0, 0, 0], [1, 0, 1]], minimum=low, maximum=high)
    rest = ChainRest(np.tile(np.eye(3), (2, 1, 1)), np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]))
    reach = chain_reach(rest.rest_rotations, rest.offsets, limits)
    np.testing.assert_allclose([reach.nearest, reach.farthest], [np.sqrt(2 + 2 * np.cos(150 * DEG)), 2.0], rtol=1e-12)
    angle = 0.5 * (low[1] + high[1])  # bent 75 degrees: a target the knee reaches
    bent = np.array([np.cos(0.5 * np.abs(angle).sum()), *np.sin(0.5 * angle)])
    target = forward_kinematics(rest, np.array([[[1.0, 0.0, 0.0, 0.0], bent]]))[0][:, -1]
    solution = solve_pose(rest, np.tile([1.0, 0.0, 0.0, 0.0], (2, 1)), target, limits=limits, tolerance=1e-6)
    assert solution.reached.all()


def test_a_hinge_whose_next_joint_lies_behind_its_head_reaches_from_the_root_to_its_fold() -> None:
    """A free root 1 long, then a hinge bending 0 to 90 degrees about X whose next joint lies 1 behind its head
    (along -Y: a disconnected child, as rigs allow): straight it folds the tip back onto the root, bent 90 degrees
    it puts the tip sqrt(2) away. The reach was [sqrt(2), 2] (the offset taken along +Y), and a target 1 from the
    root it reaches (bent 60 degrees) was sent to the one step that straightens the chain, missed by 0.41."""
    rest = ChainRest(np.tile(np.eye(3), (2, 1, 1)), np.array([[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]))
    limits = _hinge(90.0)
    reach = chain_reach(rest.rest_rotations, rest.offsets, limits)
    assert reach.exact
    np.testing.assert_allclose([reach.nearest, reach.farthest], [0.0, np.sqrt(2.0)], rtol=0, atol=1e-12)
    bent = np.array([[[1.0, 0.0, 0.0, 0.0], [np.cos(30 * DEG), np.sin(30 * DEG), 0.0, 0.0]]])
    target = forward_kinematics(rest, bent)[0][:, -1]
    solution = solve_pose(rest, np.tile([1.0, 0.0, 0.0, 0.0], (2, 1)), target, limits=limits, tolerance=1e-6)
    assert solution.reached.all()


def test_two_limited_bones_in_a_row_get_the_bounds_of_the_lengths() -> None:
    lengths = np.array([3.0, 0.5, 0.4])
    limits = JointLimits.of(3, use_limit=[[0, 0, 0], [1, 0, 1], [1, 0, 1]], minimum=-0.2, maximum=0.2)
    reach = chain_reach(np.tile(np.eye(3), (3, 1, 1)), np.outer(lengths, [0, 1, 0]), limits)
    assert not reach.exact
    assert reach.nearest == inner_radius(lengths)
    assert reach.farthest == pytest.approx(3.9)


def _limbs(rng: np.random.Generator, bones: int) -> tuple[ChainRest, JointLimits]:
    """A random chain whose limited bones (beyond the root) never come two in a row, every offset along its
    bone's Y axis (a few against it: a disconnected child behind its parent's head), some of no length: limbs
    as rigs have them (hip, knee, ankle; shoulder, elbow, wrist)."""
    limits, _ = random_limits(rng, bones)
    limited = rng.random(bones) < 0.6
    for k in range(2, bones):
        limited[k] &= not limited[k - 1]
    free = JointLimits.free(bones)
    keep = limited[:, None] | (np.arange(bones) == 0)[:, None]
    limits = JointLimits(
        np.where(keep, limits.lock, free.lock),
        np.where(keep, limits.use_limit, free.use_limit),
        limits.minimum,
        limits.maximum,
        limits.stretch,
    )
    lengths = rng.uniform(0.2, 2.0, bones) * (rng.random(bones) > 0.1) * np.where(rng.random(bones) < 0.2, -1, 1)
    return ChainRest(random_rest_rotations(rng, bones), np.outer(lengths, [0, 1, 0])), limits


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6))
def test_no_pose_within_the_limits_leaves_the_reach_and_its_two_shapes_meet_it(seed: int, bones: int) -> None:
    rng = np.random.default_rng(seed)
    rest, limits = _limbs(rng, bones)
    reach = chain_reach(rest.rest_rotations, rest.offsets, limits)
    assert reach.exact
    scale = float(rest.lengths.sum()) or 1.0
    distances = _tips(rest, limits.clamp(quat_normalize(rng.normal(size=(20000, bones, 4)))))
    assert distances.min() >= reach.nearest - 1e-9 * scale
    assert distances.max() <= reach.farthest + 1e-9 * scale
    start = limits.clamp(quat_normalize(rng.normal(size=(5, bones, 4))))
    toward = quat_normalize(rng.normal(size=(5, 3)))
    back = -toward
    for shape, extreme in ((reach.straight, reach.farthest), (reach.folded, reach.nearest)):
        if shape is reach.folded and reach.nearest == 0.0:
            continue  # the fold in line is then no extreme (three sides of a triangle come back to the root)
        posed = reach.pose(shape, start, toward, back)
        np.testing.assert_allclose(_tips(rest, posed), extreme, rtol=0, atol=1e-9 * scale)
        assert limits.excess(posed).max() <= 1e-9
        if not limits.lock[0].any() and not limits.use_limit[0].any():  # a free root points the tip along
            tips = forward_kinematics(rest, posed)[0][:, -1]
            np.testing.assert_allclose(np.cross(tips, toward), 0.0, atol=1e-9 * scale)


def test_a_knee_bends_to_any_distance_within_its_reach_in_a_few_steps() -> None:
    """From knees bent 10 to 140 degrees to goals from the fold to a hair short of straight, where the tip's
    distance is flat in the bend: regula falsi on the knee's angle measures five poses at most between the
    start and the extreme (on the distance itself, with the Illinois variant, up to fifteen)."""
    lengths = np.array([1.0, 1.2])
    rest = ChainRest(np.tile(np.eye(3), (2, 1, 1)), np.outer(lengths, [0, 1, 0]))
    reach = chain_reach(rest.rest_rotations, rest.offsets, _hinge(150.0))
    bends, shares = np.meshgrid(np.linspace(10, 140, 14) * DEG, [0.01, 0.3, 0.7, 0.99, 0.9999, 0.999999])
    start = np.zeros((bends.size, 2, 4))
    start[:, 0, 0] = 1.0
    start[:, 1, 0], start[:, 1, 1] = np.cos(bends.ravel() / 2), np.sin(bends.ravel() / 2)
    distances = reach.nearest + shares.ravel() * (reach.farthest - reach.nearest)
    goals = np.zeros((bends.size, 3))
    goals[:, 1] = distances
    toward = goals / distances[:, None]
    poses, steps = reach.bent(distances, start, toward, -toward, lambda quats: _tips(rest, quats), 1e-9)
    np.testing.assert_allclose(_tips(rest, poses), distances, atol=1e-9)
    assert steps.max() <= 2 + 5
