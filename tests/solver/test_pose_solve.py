"""FABRIK on bones with limits, a pole target and stretch: limits never broken, targets within them reached."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import JointLimits, solve_pose
from fabrik_addon.solver._validate import FloatArray
from fabrik_addon.solver.pose import ChainRest, forward_kinematics
from fabrik_addon.solver.rotations import quat_normalize, quat_to_matrix

DEG = np.pi / 180
IDENTITY = np.array([1.0, 0, 0, 0])
#: Hinge about X; cone (X and Z limited); cone with a twist limit; free.
KINDS = ("hinge", "cone", "cone+twist", "free")


def _leg(stretch: tuple[float, float] = (0.0, 0.0)) -> tuple[ChainRest, JointLimits]:
    """A thigh and a shin along Y, the knee a hinge about X from 0 to 150 degrees."""
    rest = ChainRest(np.tile(np.eye(3), (2, 1, 1)), np.array([[0, 1.0, 0], [0, 1.2, 0]]))
    knee = JointLimits.of(
        2,
        lock=[[0, 0, 0], [0, 1, 1]],
        use_limit=[[0, 0, 0], [1, 0, 0]],
        minimum=0.0,
        maximum=[[0.0, 0.0, 0.0], [150 * DEG, 0.0, 0.0]],
        stretch=stretch,
    )
    return rest, knee


def _random_chain(rng: np.random.Generator, bones: int) -> tuple[ChainRest, JointLimits, list[str]]:
    """Random rest frames and lengths (some bones disconnected), each bone a random kind of joint."""
    rest_rotations = quat_to_matrix(quat_normalize(rng.normal(size=(bones, 4)) * [3, 1, 1, 1]))
    rest_rotations[0] = np.eye(3)
    offsets = np.zeros((bones, 3))
    offsets[:, 1] = rng.uniform(0.2, 2.0, bones)
    disconnected = rng.random(bones) < 0.2
    offsets[disconnected] += rng.normal(size=(int(disconnected.sum()), 3)) * 0.2
    kinds = [KINDS[i] for i in rng.integers(0, len(KINDS), bones)]
    lock = np.array([[False, k == "hinge", k == "hinge"] for k in kinds])
    use = np.array([[k != "free", k == "cone+twist", k in ("cone", "cone+twist")] for k in kinds])
    limits = JointLimits.of(
        bones,
        lock=lock,
        use_limit=use,
        minimum=-rng.uniform(0, np.pi, (bones, 3)),
        maximum=rng.uniform(0, np.pi, (bones, 3)),
    )
    return ChainRest(rest_rotations, offsets), limits, kinds


@settings(max_examples=15)
@given(st.integers(0, 2**32 - 1), st.integers(2, 8))
def test_random_limited_chains_keep_their_limits_and_reach_what_they_can(seed: int, bones: int) -> None:
    rng = np.random.default_rng(seed)
    rest, limits, kinds = _random_chain(rng, bones)
    reach = rest.lengths.sum()
    # Targets the chain can reach: the tips of random poses within the limits.
    poses = limits.clamp(quat_normalize(rng.normal(size=(16, bones, 4))))
    joints, _ = forward_kinematics(rest, poses)
    far = rng.normal(size=(4, 3))
    far *= (1.5 * reach / np.linalg.norm(far, axis=1))[:, None]
    targets = np.vstack([joints[:, -1], far])
    solution = solve_pose(rest, np.tile(IDENTITY, (bones, 1)), targets, limits=limits, tolerance=1e-3 * reach)

    assert np.isfinite(solution.rotations).all()
    assert np.isfinite(solution.joints).all()
    assert limits.excess(solution.rotations).max() <= 1e-6
    hinges = [k for k, kind in enumerate(kinds) if kind == "hinge"]
    np.testing.assert_allclose(solution.rotations[:, hinges, 2:], 0.0, atol=1e-9)  # turns about X only
    rebuilt, _ = forward_kinematics(rest, solution.rotations)
    np.testing.assert_allclose(rebuilt, solution.joints, atol=1e-9 * reach)
    np.testing.assert_allclose(solution.error, np.linalg.norm(rebuilt[:, -1] - targets, axis=1), atol=1e-9 * reach)
    assert not solution.reached[16:].any()  # out of the chain's reach


def test_targets_within_the_limits_are_reached_in_essentially_every_case() -> None:
    """Over many random chains together: a chain of hinges only (as few turns as the three coordinates of
    its tip) can miss a few targets, as FABRIK, moving points, finds them one bone at a time."""
    rng = np.random.default_rng(7)
    reached = total = 0
    for _ in range(30):
        bones = int(rng.integers(2, 9))
        rest, limits, _ = _random_chain(rng, bones)
        poses = limits.clamp(quat_normalize(rng.normal(size=(20, bones, 4))))
        joints, _ = forward_kinematics(rest, poses)
        solution = solve_pose(
            rest, np.tile(IDENTITY, (bones, 1)), joints[:, -1], limits=limits, tolerance=1e-3 * rest.lengths.sum()
        )
        reached += int(solution.reached.sum())
        total += len(poses)
    assert reached / total >= 0.95, f"{reached} of {total} reached"  # 97.0 % when written


def test_a_hinged_knee_reaches_every_target_its_range_allows() -> None:
    rest, knee = _leg()
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(300, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    # The knee bends 0 to 150 degrees: the tip can be from |1 - 1.2 e^(i 150deg)| to 2.2 from the hip.
    nearest = np.hypot(1 + 1.2 * np.cos(150 * DEG), 1.2 * np.sin(150 * DEG))
    distance = rng.uniform(nearest + 0.01, 2.19, 300)
    solution = solve_pose(rest, np.tile(IDENTITY, (2, 1)), directions * distance[:, None], limits=knee)
    assert solution.reached.all(), solution.error.max()
    knee_angle = 2 * np.arctan2(solution.rotations[:, 1, 1], solution.rotations[:, 1, 0])
    assert knee_angle.min() >= 0
    assert knee_angle.max() <= 150 * DEG + 1e-9
    inside = directions * (nearest - 0.05)
    assert not solve_pose(rest, np.tile(IDENTITY, (2, 1)), inside, limits=knee).reached.any()


@pytest.mark.parametrize("pole_angle", [-90 * DEG, 0.0, 30 * DEG])
def test_the_pole_turns_the_chain_as_blenders_ik_does(pole_angle: float) -> None:
    """The root's X axis, turned toward its Z axis by the pole angle, faces the pole as seen along the
    root-to-tip line; the knee therefore bends toward it (the hinge bends to +Z, so for -90 deg its side)."""
    rest, knee = _leg()
    rng = np.random.default_rng(4)
    goals = rng.normal(size=(200, 3))
    goals *= (rng.uniform(0.8, 2.1, 200) / np.linalg.norm(goals, axis=1))[:, None]
    poles = rng.normal(size=(200, 3)) * 3
    solution = solve_pose(rest, np.tile(IDENTITY, (2, 1)), goals, limits=knee, poles=poles, pole_angle=pole_angle)
    assert solution.reached.all()
    root = quat_to_matrix(solution.rotations[:, 0])
    up = root[:, :, 0] * np.cos(pole_angle) + root[:, :, 2] * np.sin(pole_angle)
    line = solution.joints[:, -1] / np.linalg.norm(solution.joints[:, -1], axis=1, keepdims=True)

    def across(v: FloatArray) -> FloatArray:
        v = v - line * np.sum(v * line, axis=1, keepdims=True)
        return np.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float64)

    np.testing.assert_allclose(np.sum(across(up) * across(poles), axis=1), 1.0, atol=1e-6)
    if pole_angle == -90 * DEG:
        knees = solution.joints[:, 1]
        assert (np.sum(across(knees) * across(poles), axis=1) > 0.999).all()


def test_stretch_lengthens_the_bones_by_their_shares_to_reach_beyond_the_chain() -> None:
    rest, knee = _leg(stretch=(0.5, 1.0))
    rng = np.random.default_rng(5)
    goals = rng.normal(size=(50, 3))
    goals *= (rng.uniform(2.3, 3.0, 50) / np.linalg.norm(goals, axis=1))[:, None]
    start = np.tile(IDENTITY, (2, 1))
    assert not solve_pose(rest, start, goals, limits=knee).reached.any()
    assert (solve_pose(rest, start, goals, limits=knee).scales == 1).all()
    stretched = solve_pose(rest, start, goals, limits=knee, stretch=True)
    assert stretched.reached.all()
    grown = stretched.scales - 1
    assert (grown > 0).all()
    np.testing.assert_allclose(grown[:, 0] / grown[:, 1], 0.5)  # in proportion to the shares
    assert knee.excess(stretched.rotations).max() <= 1e-6


def test_a_free_chain_reaches_like_plain_fabrik() -> None:
    rng = np.random.default_rng(6)
    rest = ChainRest(np.tile(np.eye(3), (6, 1, 1)), np.tile([0, 1.0, 0], (6, 1)))
    goals = rng.normal(size=(100, 3))
    goals *= (rng.uniform(0.1, 5.9, 100) / np.linalg.norm(goals, axis=1))[:, None]
    solution = solve_pose(rest, np.tile(IDENTITY, (6, 1)), goals)
    assert solution.reached.all()
    assert solution.iterations.max() < 100


def test_bad_input_is_named() -> None:
    rest, _knee = _leg()
    start = np.tile(IDENTITY, (2, 1))
    with pytest.raises(
        ValueError, match=r"rotations must have shape \(2, 4\), \(1, 2, 4\) or \(1, 2, 4\), got \(3, 4\)"
    ):
        solve_pose(rest, np.tile(IDENTITY, (3, 1)), [[0, 1, 0]])
    with pytest.raises(ValueError, match="limits are for 3 bones, the chain has 2"):
        solve_pose(rest, start, [[0, 1, 0]], limits=JointLimits.free(3))
    with pytest.raises(ValueError, match="poles must have one point per target"):
        solve_pose(rest, start, [[0, 1, 0]], poles=[[1, 0, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match="pole_angle must be a finite number"):
        solve_pose(rest, start, [[0, 1, 0]], poles=[[1, 0, 0]], pole_angle=float("nan"))
    with pytest.raises(ValueError, match="targets"):
        solve_pose(rest, start, [[0, np.nan, 0]])
    with pytest.raises(ValueError, match="tolerance"):
        solve_pose(rest, start, [[0, 1, 0]], tolerance=0)
