"""Bounds on a chain's reach that hold whatever its limits (``core.reach_bounds``): no pose within the limits puts
the tip beyond them, they meet the reach where the limits' angles are what holds the chain back (a spine of cones,
a finger of hinges), and ``seek_extremes`` finds poses that meet them there."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import ChainRest, JointLimits, forward_kinematics
from fabrik_addon.solver.bones.chain_steps import ChainSteps
from fabrik_addon.solver.core import (
    ReachBounds,
    chain_reach,
    free_root,
    quat_normalize,
    reach_bounds,
    seek_extremes,
)

from .chains import random_limited_chain

DEG = np.pi / 180


def spine(root_limited: bool = True) -> tuple[ChainRest, JointLimits]:
    """Four bones 1 long in a line, each swinging at most 20 degrees about X and Z (the root too, or not)."""
    use = np.tile([True, False, True], (4, 1))
    use[0] = root_limited
    return ChainRest(np.tile(np.eye(3), (4, 1, 1)), np.tile([0.0, 1.0, 0.0], (4, 1))), JointLimits.of(
        4, use_limit=use, minimum=-20 * DEG, maximum=20 * DEG
    )


def finger() -> tuple[ChainRest, JointLimits]:
    """Three bones 1, 0.7 and 0.5 long in a line, each a hinge bending 0 to 90 degrees about X."""
    rest = ChainRest(np.tile(np.eye(3), (3, 1, 1)), np.array([[0.0, 1.0, 0.0], [0.0, 0.7, 0.0], [0.0, 0.5, 0.0]]))
    return rest, JointLimits.of(3, lock=[0, 1, 1], use_limit=[1, 0, 0], minimum=0.0, maximum=[90 * DEG, 0, 0])


def _bounds(rest: ChainRest, limits: JointLimits) -> ReachBounds:
    reach = chain_reach(rest.rest_rotations, rest.offsets, limits)
    return reach_bounds(rest.rest_rotations, rest.offsets, limits, reach)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 7))
def test_no_pose_within_the_limits_puts_the_tip_beyond_the_bounds(seed: int, bones: int) -> None:
    """Random chains (hinges, cones, cones with a twist limit, free bones; rest frames turned, some offsets off
    their Y axes, some bones of no length) in random poses within their limits: every tip within the bounds."""
    rng = np.random.default_rng(seed)
    rest, limits, _ = random_limited_chain(rng, bones)
    rest = ChainRest(rest.rest_rotations, rest.offsets * (rng.random(bones) > 0.2)[:, None])
    bounds = _bounds(rest, limits)
    tips = forward_kinematics(rest, limits.clamp(quat_normalize(rng.normal(size=(5000, bones, 4)))))[0][:, -1]
    assert bounds.miss(tips).max() <= 1e-9 * max(float(rest.lengths.sum()), 1.0)


def test_a_spine_of_cones_curls_no_nearer_than_an_arc_bent_20_degrees_at_each_joint() -> None:
    """The bound is the arc's chord, 2 cos 10 + 2 cos 30 degrees (the relaxation's best is a curl in one plane,
    which the cones allow), and the search finds that curl; with the root limited too, a target 3.88 away 60
    degrees off the spine's line is ruled out by the direction bound, one 30 degrees off is not."""
    rest, limits = spine()
    bounds = _bounds(rest, limits)
    arc = 2 * np.cos(10 * DEG) + 2 * np.cos(30 * DEG)
    assert abs(bounds.nearest - arc) <= 1e-12
    assert bounds.farthest == 4.0
    extremes = seek_extremes(ChainSteps(rest, free_root(limits)), limits)
    assert abs(extremes.nearest - arc) <= 1e-9
    assert extremes.farthest == 4.0
    poses = np.stack([extremes.near, extremes.far])
    np.testing.assert_allclose(np.linalg.norm(forward_kinematics(rest, poses)[0][:, -1], axis=1), [arc, 4.0])
    assert free_root(limits).excess(poses).max() <= 1e-9
    off = np.array([[0.0, np.cos(a * DEG), np.sin(a * DEG)] for a in (60.0, 30.0)]) * 3.88
    miss = bounds.miss(off)
    assert miss[0] > 0.0 >= miss[1]
    assert _bounds(*spine(root_limited=False)).miss(off).max() <= 0.0  # a free root turns the spine anywhere


def test_a_finger_of_hinges_curls_no_nearer_than_all_three_bent_90_degrees() -> None:
    rest, limits = finger()
    bounds = _bounds(rest, limits)
    curled = np.hypot(1.0 - 0.5, 0.7)
    assert abs(bounds.nearest - curled) <= 1e-12
    assert bounds.farthest == 2.2
    extremes = seek_extremes(ChainSteps(rest, free_root(limits)), limits)
    assert abs(extremes.nearest - curled) <= 1e-9
