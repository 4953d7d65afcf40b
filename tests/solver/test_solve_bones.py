"""``solve_bones``, the one entry every chain bake and preview goes through: points where nothing but the target
matters, rotations where limits, a pole or stretch do, and the tip turned to a goal orientation on top."""

from __future__ import annotations

import numpy as np
import pytest

import fabrik_addon.solver.bones.chain_steps as chain_steps_module
from fabrik_addon.solver import ChainRest, JointLimits, forward_kinematics, solve_bones
from fabrik_addon.solver.bones.tip_rotation import blend
from fabrik_addon.solver.core import chain_reach, quat_normalize, quat_to_matrix, twist

from .chains import FloatArray, points_at, random_limited_chain, random_rest_rotations

TOLERANCE = 1e-6


def _free_chain(rng: np.random.Generator, bones: int) -> ChainRest:
    offsets = np.zeros((bones, 3))
    offsets[:, 1] = rng.uniform(0.5, 1.5, bones)
    return ChainRest(random_rest_rotations(rng, bones), offsets)


def _tips(rest: ChainRest, rotations: FloatArray, scales: FloatArray | None = None) -> FloatArray:
    return np.asarray(forward_kinematics(rest, rotations, scales)[0][:, -1])


def _angle(a: FloatArray, b: FloatArray) -> FloatArray:
    """The angle of the turn between rotation matrices (F, 3, 3), radians."""
    cos = (np.trace(np.swapaxes(a, 1, 2) @ b, axis1=1, axis2=2) - 1.0) / 2.0
    return np.asarray(np.arccos(np.clip(cos, -1.0, 1.0)))


def test_a_free_chain_reaches_its_targets_and_keeps_every_bone_s_twist() -> None:
    rng = np.random.default_rng(1)
    rest = _free_chain(rng, 5)
    start = quat_normalize(rng.normal(size=(20, 5, 4)))
    targets = points_at(rng, np.zeros(3), rng.uniform(0.5, 0.9, 20) * rest.lengths.sum())
    solved = solve_bones(rest, start, targets, limits=JointLimits.free(5), tolerance=TOLERANCE)
    assert solved.scales is None
    np.testing.assert_array_less(np.linalg.norm(_tips(rest, solved.rotations) - targets, axis=1), 2 * TOLERANCE)
    assert solved.error.max() <= TOLERANCE
    axes = rest.offsets / rest.lengths[:, None]
    for k in range(5):  # the twist about each bone's own axis is the one it started with
        kept = twist(solved.rotations[:, k], axes[k])
        given = twist(start[:, k], axes[k])
        np.testing.assert_allclose(np.abs(np.einsum("fi,fi->f", kept, given)), 1.0, atol=1e-9)


def test_limited_chains_stay_within_their_limits() -> None:
    rng = np.random.default_rng(2)
    for _ in range(5):
        rest, limits, _ = random_limited_chain(rng, 4)
        targets = points_at(rng, np.zeros(3), rng.uniform(0.2, 1.2, 15) * rest.lengths.sum())
        solved = solve_bones(rest, np.array([[1.0, 0, 0, 0]] * 4), targets, limits=limits, tolerance=1e-4)
        assert limits.excess(solved.rotations).max() <= 1e-9
        np.testing.assert_allclose(
            np.linalg.norm(_tips(rest, solved.rotations) - targets, axis=1), solved.error, atol=1e-9
        )


def test_stretch_reaches_beyond_the_chain_and_keys_y_scales() -> None:
    rng = np.random.default_rng(3)
    rest = _free_chain(rng, 3)
    limits = JointLimits.of(3, stretch=0.5)
    targets = points_at(rng, np.zeros(3), np.full(6, 1.3 * rest.lengths.sum()))
    solved = solve_bones(rest, np.array([[1.0, 0, 0, 0]] * 3), targets, limits=limits, stretch=True, tolerance=1e-4)
    assert solved.scales is not None
    assert (solved.scales > 1.0).any()
    np.testing.assert_array_less(np.linalg.norm(_tips(rest, solved.rotations, solved.scales) - targets, axis=1), 2e-4)


def test_ccd_is_refused_where_the_chain_needs_its_rotations_solved() -> None:
    rng = np.random.default_rng(4)
    rest, limits, _ = random_limited_chain(rng, 3)
    limits = JointLimits.of(3, use_limit=[[1, 0, 0]] * 3, minimum=-0.5, maximum=0.5)
    with pytest.raises(ValueError, match="method 'ccd' does not support joint limits"):
        solve_bones(rest, np.array([[1.0, 0, 0, 0]] * 3), np.ones((2, 3)), limits=limits, method="ccd")


def test_cold_frames_are_each_solved_as_if_alone() -> None:
    """Each frame's points are those of solving it alone to the bit; its rotations the same to rounding (turning
    the points into rotations multiplies matrices of all frames at once), their quaternions' signs continuous
    with the frames before."""
    rng = np.random.default_rng(5)
    rest = _free_chain(rng, 4)
    start = quat_normalize(rng.normal(size=(4, 4)))
    targets = points_at(rng, np.zeros(3), rng.uniform(0.3, 0.9, 12) * rest.lengths.sum())
    together = solve_bones(rest, start, targets, limits=JointLimits.free(4), warm_start=False)
    for f in (0, 5, 11):
        alone = solve_bones(rest, start, targets[f : f + 1], limits=JointLimits.free(4), warm_start=False)
        np.testing.assert_allclose(
            quat_to_matrix(alone.rotations[0]), quat_to_matrix(together.rotations[f]), rtol=0, atol=1e-14
        )
        assert alone.iterations[0] == together.iterations[f]


@pytest.mark.parametrize("limited", [False, True])
def test_the_tip_turns_to_its_goal_orientation_and_its_tail_reaches_the_target(limited: bool) -> None:
    """Targets and orientations taken from poses the chain can take. Free, every tip is turned as asked with its
    tail on the target. Limited, the bones above the tip may end elsewhere than in the pose the goals came from,
    under which the tip's limits may not allow the goal: the tip then takes the nearest orientation they allow
    and its tail misses; where the tail reaches, the tip is turned as asked. No limit is broken."""
    rng = np.random.default_rng(6)
    rest = _free_chain(rng, 4)
    limits = JointLimits.of(4, use_limit=[[1, 0, 1]] * 4, minimum=-1.0, maximum=1.0) if limited else JointLimits.free(4)
    posed = limits.clamp(quat_normalize(np.array([1.0, 0, 0, 0]) + 0.3 * rng.normal(size=(10, 4, 4))))
    joints, orientations = forward_kinematics(rest, posed)
    solved = solve_bones(
        rest, np.array([[1.0, 0, 0, 0]] * 4), joints[:, -1], limits=limits, orientations=orientations[:, -1],
        tolerance=1e-5,
    )  # fmt: skip
    tips, turned = forward_kinematics(rest, solved.rotations)
    reached = np.linalg.norm(tips[:, -1] - joints[:, -1], axis=1) <= 1e-5
    assert reached.all() if not limited else reached.any()
    assert _angle(turned[reached, -1], orientations[reached, -1]).max() <= 1e-6
    assert limits.excess(solved.rotations).max() <= 1e-9


def test_a_rotation_weight_turns_the_tip_part_of_the_way() -> None:
    rng = np.random.default_rng(7)
    rest = _free_chain(rng, 3)
    start = np.array([[1.0, 0, 0, 0]] * 3)
    targets = points_at(rng, np.zeros(3), rng.uniform(0.4, 0.8, 8) * rest.lengths.sum())
    goals = quat_to_matrix(quat_normalize(rng.normal(size=(8, 4))))
    free = solve_bones(rest, start, targets, limits=JointLimits.free(3))
    free_tip = forward_kinematics(rest, free.rotations)[1][:, -1]
    half = solve_bones(rest, start, targets, limits=JointLimits.free(3), orientations=goals, orientation_weight=0.5)
    half_tip = forward_kinematics(rest, half.rotations)[1][:, -1]
    np.testing.assert_allclose(_angle(half_tip, blend(free_tip, goals, 0.5)), 0.0, atol=1e-6)
    np.testing.assert_allclose(_angle(half_tip, goals), 0.5 * _angle(free_tip, goals), atol=1e-6)


def test_a_chain_of_one_bone_only_turns() -> None:
    """One bone has no bones above its tip: it turns to the orientation, its tail where that puts it."""
    rest = ChainRest(np.eye(3)[None], np.array([[0.0, 2.0, 0.0]]))
    goal = quat_to_matrix(quat_normalize(np.array([[0.9, 0.3, -0.2, 0.1]])))
    target = goal @ np.array([0.0, 2.0, 0.0])
    solved = solve_bones(rest, np.array([[1.0, 0, 0, 0]]), target, limits=JointLimits.free(1), orientations=goal)
    assert solved.iterations.tolist() == [0]
    assert solved.error[0] <= 1e-12
    np.testing.assert_allclose(quat_to_matrix(solved.rotations[:, 0]), goal, atol=1e-12)


def test_a_chain_that_turns_its_tip_finds_the_reach_of_the_bones_above_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bones above the tip come as a new rest and new limits on every solve (``tip_rotation.above``); their
    steps, and the reach under their limits (``core.reach``, about a millisecond for a limited bone), are made
    once for the chain, as the live preview solves it again on every update (they were made on every solve)."""
    made = []

    def counted(*arguments: object) -> object:
        made.append(1)
        return chain_reach(*arguments)  # type: ignore[arg-type]

    monkeypatch.setattr(chain_steps_module, "chain_reach", counted)
    rng = np.random.default_rng(8)
    rest = _free_chain(rng, 3)  # lengths no other test's chain has
    limits = JointLimits.of(3, lock=[[0, 0, 0], [0, 1, 1], [0, 0, 0]], use_limit=[[0, 0, 0], [1, 0, 0], [0, 0, 0]])
    joints, orientations = forward_kinematics(rest, limits.clamp(quat_normalize(rng.normal(size=(5, 3, 4)))))
    for frame in range(5):
        solved = solve_bones(
            rest, np.array([[1.0, 0, 0, 0]] * 3), joints[frame : frame + 1, -1], limits=limits,
            orientations=orientations[frame : frame + 1, -1], tolerance=TOLERANCE,
        )  # fmt: skip
        assert solved.error[0] <= TOLERANCE
    assert len(made) == 1
