"""The solvers' histories (``history=True``): every step's joints, by the rules ``solve`` and ``solve_pose``
document, on random chains; and the same solve with or without."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import ChainRest, JointLimits, forward_kinematics, solve, solve_pose
from fabrik_addon.solver.bones import BENT, LENGTHENED, RESTART, SOLVED, STRAIGHTENED, TURNED_TO_POLE
from fabrik_addon.solver.bones.chain_steps import chain_steps
from fabrik_addon.solver.core import chain_reach, inner_radius, quat_normalize
from fabrik_addon.solver.points import BACK, LEAST_SQUARES, START, TOWARD

from .chains import FloatArray, chain_and_targets, lengths_of, random_limited_chain, shell

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def _assert_lengths_kept(history: FloatArray, chain: FloatArray) -> None:
    np.testing.assert_allclose(
        lengths_of(history), np.broadcast_to(lengths_of(chain), (len(history), len(chain) - 1)), rtol=1e-9
    )


def _index_of(pose: FloatArray, poses: FloatArray) -> list[int]:
    return [i for i, candidate in enumerate(poses) if np.array_equal(candidate, pose)]


@settings(max_examples=60)
@given(case=chain_and_targets(max_joints=40))
def test_fabrik_history_alternates_target_and_root(case: tuple[FloatArray, FloatArray]) -> None:
    chain, targets = case
    inner, reach = shell(chain)
    for target in targets:
        plain = solve(chain, target, tolerance=1e-6 * reach)
        result = solve(chain, target, tolerance=1e-6 * reach, history=True)
        assert plain.history is None
        np.testing.assert_array_equal(result.joints, plain.joints)  # the same solve
        assert (result.iterations, result.error) == (plain.iterations, plain.error)
        history = result.history
        assert history is not None
        assert history.shape == (2 * result.iterations + 1, len(chain), 3)
        assert result.history_steps == (START, *([TOWARD, BACK] * result.iterations))
        np.testing.assert_array_equal(history[0], chain)
        _assert_lengths_kept(history, chain)
        np.testing.assert_array_equal(history[2::2, 0], np.broadcast_to(chain[0], history[2::2, 0].shape))
        distance = np.linalg.norm(target - chain[0])
        if inner <= distance < reach:
            np.testing.assert_allclose(history[1::2, -1], np.broadcast_to(target, history[1::2, -1].shape), atol=0)
        else:  # one step, no iterating: the straight (or folded) chain pointing at the target
            np.testing.assert_array_equal(history[1], result.joints)
        assert any(i % 2 == 0 for i in _index_of(result.joints, history))  # the best of the even entries


@pytest.mark.slow
@settings(max_examples=20)
@given(case=chain_and_targets(max_joints=12))
def test_ccd_history_turns_one_joint_at_a_time(case: tuple[FloatArray, FloatArray]) -> None:
    chain, targets = case
    inner, reach = shell(chain)
    bones = len(chain) - 1
    for target in targets:
        result = solve(chain, target, tolerance=1e-6 * reach, method="ccd", history=True)
        np.testing.assert_array_equal(result.joints, solve(chain, target, tolerance=1e-6 * reach, method="ccd").joints)
        history = result.history
        assert history is not None
        assert history.shape == (bones * result.iterations + 1, len(chain), 3)
        names = [f"turn about joint {k}" for k in range(bones - 1, -1, -1)]
        assert result.history_steps == (START, *(names * result.iterations))
        np.testing.assert_array_equal(history[0], chain)
        _assert_lengths_kept(history, chain)
        np.testing.assert_array_equal(history[:, 0], np.broadcast_to(chain[0], history[:, 0].shape))
        assert set(_index_of(result.joints, history)) & set(range(0, len(history), bones))  # an iteration's end
        if not inner <= np.linalg.norm(target - chain[0]) < reach:
            continue
        for step in range(1, len(history)):
            pivot = bones - 1 - (step - 1) % bones
            before, after = history[step - 1], history[step]
            # Only the joints past the pivot move, and the tip then points from the pivot at the target.
            np.testing.assert_array_equal(after[: pivot + 1], before[: pivot + 1])
            arm, aim = after[-1] - after[pivot], target - after[pivot]
            if np.linalg.norm(arm) > 1e-6 * reach and np.linalg.norm(aim) > 1e-6 * reach:
                unit_arm, unit_aim = arm / np.linalg.norm(arm), aim / np.linalg.norm(aim)
                np.testing.assert_allclose(unit_arm, unit_aim, atol=1e-6)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.booleans(), st.booleans())
def test_pose_history_names_every_step_and_counts_the_iterations(
    seed: int, bones: int, with_pole: bool, far: bool
) -> None:
    rng = np.random.default_rng(seed)
    rest, limits, _ = random_limited_chain(rng, bones)
    reach = float(rest.lengths.sum())
    pose = limits.clamp(quat_normalize(rng.normal(size=(1, bones, 4))))
    target = forward_kinematics(rest, pose)[0][:, -1] * (1.5 if far else 1.0)
    start = quat_normalize(rng.normal(size=(bones, 4)))
    keywords = {"limits": limits, "tolerance": 1e-4 * reach}
    if with_pole:
        keywords["poles"] = rng.normal(size=(1, 3))
    plain = solve_pose(rest, start, target, **keywords)  # type: ignore[arg-type]
    result = solve_pose(rest, start, target, history=True, **keywords)  # type: ignore[arg-type]
    np.testing.assert_array_equal(result.rotations, plain.rotations)  # the same solve
    history, names = result.history, result.history_steps
    assert history is not None
    assert plain.history is None
    assert len(history) == len(names)
    np.testing.assert_allclose(history[0], forward_kinematics(rest, start[None])[0][0], atol=1e-12 * reach)
    np.testing.assert_array_equal(history[-1], result.joints[0])
    assert names[0] == START
    assert names[-1] == SOLVED
    assert (names[1] == TURNED_TO_POLE) == with_pole
    steps = {TURNED_TO_POLE, TOWARD, BACK, LEAST_SQUARES, RESTART, LENGTHENED, STRAIGHTENED, BENT}
    assert set(names[1:-1]) <= steps
    # A target no pose reaches (farther from the root than the tip can come, or nearer: by the bounds that hold
    # for every chain, the reach itself where known exactly) is met in a step, the chain straightened (or
    # folded) toward it, and iterated too where that step is not the closest any pose comes; any other is
    # iterated.
    distance = float(np.linalg.norm(target))
    bounds = chain_steps(rest, limits).bounds
    assert (STRAIGHTENED in names) == (distance >= bounds.farthest or distance < bounds.nearest)
    # A limited chain whose reach is exact bends first, once: no pose is bent after FABRIK has run.
    if limits.any and _bends_first(rest, limits) and TOWARD in names:
        assert BENT not in names[names.index(TOWARD) :]
    # FABRIK's two passes come in pairs; every iteration counted is one FABRIK or least-squares step, the one
    # step that straightens the chain, or a pose measured on the way to the target's distance.
    assert [n for n in names if n in (TOWARD, BACK)] == [TOWARD, BACK] * names.count(BACK)
    counted = names.count(BACK) + names.count(LEAST_SQUARES) + names.count(STRAIGHTENED) + names.count(BENT)
    assert counted == result.iterations[0]
    _assert_lengths_kept(history[[n != TOWARD for n in names]], history[0])  # rebuilt from rotations
    for k, name in enumerate(names):
        if name == TOWARD:
            np.testing.assert_allclose(history[k, -1], target[0], atol=1e-12 * reach)
        elif name != START:
            np.testing.assert_allclose(history[k, 0], 0.0, atol=0)  # the root's head stays at the base


def _bends_first(rest: ChainRest, limits: JointLimits) -> bool:
    """Whether a chain's reach under its limits is known exactly and its root is free (it bends first)."""
    free_root = not limits.lock[0].any() and not limits.use_limit[0].any()
    return free_root and chain_reach(rest.rest_rotations, rest.offsets, limits).exact


def test_pose_history_with_stretch_records_the_rounds() -> None:
    rest_rotations = np.broadcast_to(np.eye(3), (2, 3, 3)).copy()
    rest = ChainRest(rest_rotations, np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]))
    limits = JointLimits.of(2, stretch=np.array([0.5, 1.0]))
    result = solve_pose(rest, np.tile(IDENTITY, (2, 1)), [[0.0, 2.5, 0.0]], limits=limits, stretch=True, history=True)
    assert result.reached[0]
    assert LENGTHENED in result.history_steps
    assert result.history is not None
    np.testing.assert_allclose(np.linalg.norm(result.history[-1, -1] - [0.0, 2.5, 0.0]), result.error[0])


def test_pose_history_is_for_one_target() -> None:
    rng = np.random.default_rng(1)
    rest, limits, _ = random_limited_chain(rng, 3)
    with pytest.raises(ValueError, match="one target at a time, got 2 targets"):
        solve_pose(rest, np.tile(IDENTITY, (3, 1)), np.ones((2, 3)), limits=limits, history=True)


def test_inner_radius_case_is_one_step() -> None:
    chain = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 10.0], [0.0, 0.0, 11.0]])
    assert inner_radius(lengths_of(chain)) == pytest.approx(9.0)
    result = solve(chain, [1.0, 0.0, 0.0], history=True)
    assert result.iterations == 1
    assert result.history is not None
    np.testing.assert_array_equal(result.history[1], result.joints)
    np.testing.assert_array_equal(result.history[2], result.joints)
