"""Targets out of reach of a chain whose reach ``core.reach`` does not know exactly (two limited bones in a row),
or whose root is locked or limited: met in one step where no pose can come closer (``core.reach_bounds``), at
most three times the iterations of the median reachable frame of the same solve, and never at the cost of a
frame within reach."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import ChainRest, JointLimits, PoseSolution, forward_kinematics, solve_pose
from fabrik_addon.solver.bones.chain_steps import chain_steps
from fabrik_addon.solver.core import quat_normalize, quat_to_matrix

from .chains import FloatArray, points_at, random_limited_chain
from .test_reach_bounds import finger, spine

DEG = np.pi / 180
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def _thigh(lock_twist: bool) -> tuple[ChainRest, JointLimits]:
    """A thigh 1 long whose twist is locked (or limited to 20 degrees either way), swinging freely, and a shin
    1.2 long whose rest frame is bent 20 degrees about X from the thigh's, the knee a hinge bending 100 more."""
    bent = quat_to_matrix(np.array([np.cos(10 * DEG), np.sin(10 * DEG), 0.0, 0.0]))
    rest = ChainRest(np.stack([np.eye(3), bent]), np.array([[0.0, 1.0, 0.0], [0.0, 1.2, 0.0]]))
    return rest, JointLimits.of(
        2,
        lock=[[0, lock_twist, 0], [0, 1, 1]],
        use_limit=[[0, not lock_twist, 0], [1, 0, 0]],
        minimum=np.array([[0, -20, 0], [0, 0, 0]]) * DEG,
        maximum=np.array([[0, 20, 0], [100, 0, 0]]) * DEG,
    )


def _reachable(rest: ChainRest, limits: JointLimits, rng: np.random.Generator, count: int) -> FloatArray:
    """The tips of random poses within the limits."""
    quats = limits.clamp(quat_normalize(rng.normal(size=(count, len(rest.offsets), 4))))
    return np.asarray(forward_kinematics(rest, quats)[0][:, -1], dtype=np.float64)


def _beyond(rest: ChainRest, limits: JointLimits, rng: np.random.Generator, count: int) -> FloatArray:
    """Targets in random directions nearer the root than the tip can come, or farther (half each, up to 20 %
    of the bounds away from them)."""
    bounds = chain_steps(rest, limits).bounds
    near = bounds.nearest * rng.uniform(0.8, 0.999, count // 2)
    far = bounds.farthest * rng.uniform(1.001, 1.2, count - count // 2)
    return points_at(rng, np.zeros(3), np.concatenate([near, far]))


def _solve_mixed(
    rest: ChainRest, limits: JointLimits, seed: int, reachable: int = 60, beyond: int = 40
) -> tuple[FloatArray, PoseSolution]:
    """``reachable`` targets within reach then ``beyond`` out of it (``_beyond``), solved from random poses."""
    rng = np.random.default_rng(seed)
    goals = np.concatenate([_reachable(rest, limits, rng, reachable), _beyond(rest, limits, rng, beyond)])
    starts = limits.clamp(quat_normalize(rng.normal(size=(len(goals), len(rest.offsets), 4))))
    return goals, solve_pose(rest, starts, goals, limits=limits, tolerance=1e-4)


def _assert_met_in_one_step(rest: ChainRest, limits: JointLimits, seed: int, floor: float) -> None:
    """Of targets within reach and beyond it (``_solve_mixed``), at least ``floor`` of the first reached, and every
    other met in one step (no more than any frame reached), missing by what every pose misses by
    (``ReachBounds.miss``), every bone within its limits."""
    goals, solution = _solve_mixed(rest, limits, seed)
    reached = solution.reached[:60]
    assert reached.mean() >= floor
    np.testing.assert_array_equal(solution.iterations[60:], 1)
    miss = np.maximum(chain_steps(rest, limits).bounds.miss(goals[60:]), 0.0)
    np.testing.assert_allclose(solution.error[60:], miss, rtol=0, atol=1e-8)
    assert limits.excess(solution.rotations).max() <= 1e-9


def test_a_spine_of_cones_with_a_free_root_meets_targets_beyond_its_limits_in_one_step() -> None:
    """Four cones of 20 degrees in a row: no exact reach, but bounds (the arc's chord, the straight spine) that
    a search meets. Targets nearer than the spine can curl, or beyond it: one step, missing by just what the
    bounds say every pose misses by (iterated, they took a median 112 iterations, up to 419, against 5 for the
    frames the spine reaches)."""
    _assert_met_in_one_step(*spine(root_limited=False), seed=1, floor=0.95)


def test_a_finger_of_hinges_with_a_free_root_meets_targets_inside_its_curl_in_one_step() -> None:
    """Two hinges in a row after a free root: nearer than the finger curls (a median 120 iterations, up to 393,
    iterated), or beyond its length, in one step."""
    rest, limits = finger()
    held = [[False], [True], [True]]  # the same finger, its root free
    free = JointLimits(limits.lock & held, limits.use_limit & held, limits.minimum, limits.maximum, limits.stretch)
    _assert_met_in_one_step(rest, free, seed=2, floor=0.95)


def test_a_leg_whose_thigh_twists_at_most_20_degrees_meets_targets_beyond_its_reach_in_one_step() -> None:
    """The thigh's limit leaves the leg's extreme poses, turned about the line to the target, a turn that points
    them at it (``swivel_toward``): one step, as close as any pose comes. Iterated, they took a median 263
    iterations (up to 620), against 9 for the targets the leg reaches."""
    _assert_met_in_one_step(*_thigh(lock_twist=False), seed=3, floor=0.9)


def test_a_leg_whose_thigh_cannot_twist_reaches_what_it_can_and_meets_the_rest_in_one_step() -> None:
    """With the thigh's twist locked (Lock IK Y), the leg still points any way: of the turns about the line to
    the target, one needs no twist (``turns.untwisted``). So its reach is exact as with a free thigh: every
    target within it reached (bent to its distance first), every other met in one step, missing by what every
    pose must. (Before, a third of the targets beyond reach took a median 300 iterations, up to 600, and
    those within it a median 12, up to 1,100.)"""
    _assert_met_in_one_step(*_thigh(lock_twist=True), seed=4, floor=1.0)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6))
def test_frames_within_reach_are_solved_as_if_alone_and_one_step_frames_are_as_close_as_any_pose(
    seed: int, bones: int
) -> None:
    """Random limited chains (roots limited or not, limited bones in a row or not): the frames within reach
    get the poses and iterations they get solved without the targets out of reach beside them; a frame beyond
    the bounds met in one step lies no farther from its target than any of 3,000 poses within the limits."""
    rng = np.random.default_rng(seed)
    rest, limits, _ = random_limited_chain(rng, bones)
    inside = _reachable(rest, limits, rng, 12)
    outside = _beyond(rest, limits, rng, 12)
    start = np.tile(IDENTITY, (bones, 1))
    tolerance = 1e-3 * float(rest.lengths.sum())
    mixed = solve_pose(rest, start, np.concatenate([inside, outside]), limits=limits, tolerance=tolerance)
    alone = solve_pose(rest, start, inside, limits=limits, tolerance=tolerance)
    np.testing.assert_array_equal(mixed.iterations[:12], alone.iterations)
    np.testing.assert_allclose(mixed.error[:12], alone.error, rtol=0, atol=1e-9 * float(rest.lengths.sum()))
    samples = _reachable(rest, limits, rng, 3000)
    nearest = np.linalg.norm(samples[None] - outside[:, None], axis=-1).min(axis=1)
    lengths = rest.lengths
    distance = np.linalg.norm(outside, axis=1)
    within_lengths = (distance < lengths.sum()) & (distance > 2 * lengths.max() - lengths.sum())
    stepped = (mixed.iterations[12:] == 1) & within_lengths  # beyond the lengths, as before: straightened
    assert (mixed.error[12:][stepped] <= nearest[stepped] + 1e-9 * lengths.sum()).all()
    assert limits.excess(mixed.rotations).max() <= 1e-6


def test_a_chain_bent_at_rest_points_at_targets_beyond_its_lengths() -> None:
    """A finger whose hinges are bent 50 degrees at rest and bend -20 to 40 more (never straighter than 30
    degrees a joint), its root free: a target beyond its lengths gets the chain as straight as its limits let
    it, clamped before it is turned, so that its tip points at the target (straightened by the lengths, turned,
    then clamped, it pointed elsewhere and missed by up to twice as much)."""
    bent = quat_to_matrix(np.array([np.cos(25 * DEG), np.sin(25 * DEG), 0.0, 0.0]))
    rest = ChainRest(np.stack([np.eye(3), bent, bent]), np.array([[0.0, 1.0, 0.0], [0.0, 0.7, 0.0], [0.0, 0.5, 0.0]]))
    hinges = JointLimits.of(
        3,
        lock=[[0, 0, 0], [0, 1, 1], [0, 1, 1]],
        use_limit=[[0, 0, 0], [1, 0, 0], [1, 0, 0]],
        minimum=-20 * DEG,
        maximum=40 * DEG,
    )
    rng = np.random.default_rng(8)
    goals = points_at(rng, np.zeros(3), rng.uniform(2.21, 3.0, 30))  # the lengths: 2.2
    solution = solve_pose(rest, np.tile(IDENTITY, (3, 1)), goals, limits=hinges)
    tips = solution.joints[:, -1]
    np.testing.assert_array_equal(solution.iterations, 1)
    np.testing.assert_allclose(np.cross(tips, goals) / np.linalg.norm(goals, axis=1)[:, None], 0.0, atol=1e-9)
    np.testing.assert_allclose(solution.error, np.linalg.norm(goals, axis=1) - np.linalg.norm(tips, axis=1), atol=1e-9)
    assert hinges.excess(solution.rotations).max() <= 1e-9


def test_a_frame_beyond_reach_gets_the_same_pose_alone_as_among_others() -> None:
    """The live preview solves one frame, a bake many. A thigh whose twist is limited turns about the line to a
    target it cannot reach to where its clamped root misses least, and many turns miss alike there: of those
    the smallest is taken, not whichever rounding favours (it differs between one frame and many)."""
    rest, limits = _thigh(lock_twist=False)
    rng = np.random.default_rng(12)
    goals = _beyond(rest, limits, rng, 40)
    start = np.tile(IDENTITY, (2, 1))
    together = solve_pose(rest, start, goals, limits=limits)
    for k in range(len(goals)):
        alone = solve_pose(rest, start, goals[k : k + 1], limits=limits)
        sign = np.sign(np.einsum("mi,mi->m", alone.rotations[0], together.rotations[k]))[:, None]
        np.testing.assert_allclose(sign * alone.rotations[0], together.rotations[k], atol=1e-9)
        assert alone.iterations[0] == together.iterations[k]
