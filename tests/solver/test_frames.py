"""solve_frames: vectorised over frames, agreeing with per-frame solve."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from fabrik_addon.solver import JUMP_RATIO, WARM_START_BLOCK, solve, solve_frames
from fabrik_addon.solver.points import iterate, warm_start

from .chains import FloatArray, assert_chain_kept, chain_and_targets, shell


@pytest.mark.parametrize("method", ["fabrik", pytest.param("ccd", marks=pytest.mark.slow)])
@settings(max_examples=40)
@given(case=chain_and_targets(max_joints=40))
def test_cold_start_equals_per_frame_solve_exactly(method: str, case: tuple[FloatArray, FloatArray]) -> None:
    chain, targets = case
    _, reach = shell(chain)
    frames = solve_frames(chain, targets, tolerance=1e-5 * reach, method=method, warm_start=False)
    for f, target in enumerate(targets):
        single = solve(chain, target, tolerance=1e-5 * reach, method=method)
        np.testing.assert_array_equal(frames.joints[f], single.joints)
        assert frames.iterations[f] == single.iterations
        assert frames.error[f] == single.error
        assert frames.reached[f] == single.reached


def _path(frames: int, reach: float) -> FloatArray:
    t = np.linspace(0, 2 * np.pi, frames)
    return reach * np.column_stack([0.5 * np.sin(2 * t), 0.4 * np.cos(3 * t), 0.3 + 0.2 * np.sin(t)])


@pytest.mark.parametrize("bones", [2, 5, 16, 48])
def test_warm_start_keeps_the_invariants(bones: int) -> None:
    chain = np.column_stack([np.zeros(bones + 1), np.zeros(bones + 1), np.arange(bones + 1.0)])
    result = solve_frames(chain, _path(300, float(bones)), tolerance=1e-3, warm_start=True)
    assert_chain_kept(result.joints, chain)
    assert result.reached.all()


@pytest.mark.parametrize("bones", [2, 5, 16])
@pytest.mark.parametrize("seed", [1, 2])
def test_warm_start_frames_never_jump_unless_solved_from_the_frame_before(bones: int, seed: int) -> None:
    chain = np.column_stack([np.zeros(bones + 1), np.zeros(bones + 1), np.arange(bones + 1.0)])
    targets = _wandering_path(np.random.default_rng(seed), 300, float(bones))
    tolerance = 1e-3
    result = solve_frames(chain, targets, tolerance=tolerance, warm_start=True)
    assert _unexplained_jumps(result.joints, targets, tolerance) == []


def test_the_jump_check_removes_jumps_that_unchecked_blocks_make(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = np.column_stack([np.zeros(6), np.zeros(6), np.arange(6.0)])
    targets = _wandering_path(np.random.default_rng(1), 300, 5.0)
    checked = solve_frames(chain, targets, tolerance=1e-3, warm_start=True)
    monkeypatch.setattr(warm_start, "JUMP_RATIO", np.inf)
    unchecked = solve_frames(chain, targets, tolerance=1e-3, warm_start=True)
    assert _unexplained_jumps(unchecked.joints, targets, 1e-3) != []
    assert _unexplained_jumps(checked.joints, targets, 1e-3) == []


def _unexplained_jumps(joints: FloatArray, targets: FloatArray, tolerance: float) -> list[int]:
    """Frames where some joint moves more than JUMP_RATIO times as far as the target since the frame before
    (plus the tolerance), and which are not what solving from the frame before gives."""
    joint_moves = np.linalg.norm(np.diff(joints, axis=0), axis=2).max(axis=1)
    target_moves = np.linalg.norm(np.diff(targets, axis=0), axis=1)
    jumps = np.flatnonzero(joint_moves > JUMP_RATIO * target_moves + tolerance) + 1
    return [
        int(f)
        for f in jumps
        if not np.allclose(joints[f], solve(joints[f - 1], targets[f], tolerance=tolerance).joints, rtol=0, atol=1e-9)
    ]


def _wandering_path(rng: np.random.Generator, frames: int, reach: float) -> FloatArray:
    """A smooth random path: a few sinusoids of random phase and direction, within 0.6 of the reach."""
    t = np.linspace(0, 1, frames)[:, None]
    path = sum(
        rng.normal(size=(1, 3)) * np.sin(2 * np.pi * (k + 1) * t * rng.uniform(0.5, 2) + rng.uniform(0, 6)) / (k + 1)
        for k in range(4)
    )
    return np.asarray(path / np.abs(path).max() * 0.6 * reach)


def test_warm_start_needs_fewer_iterations_than_cold() -> None:
    chain = np.column_stack([np.zeros(17), np.zeros(17), np.arange(17.0)])
    targets = _path(400, 16.0)
    warm = solve_frames(chain, targets, warm_start=True)
    cold = solve_frames(chain, targets, warm_start=False)
    assert warm.iterations.sum() < cold.iterations.sum()


def test_warm_start_starts_each_block_from_the_frame_before_it() -> None:
    chain = np.column_stack([np.zeros(7), np.zeros(7), np.arange(7.0)])
    targets = _path(3 * WARM_START_BLOCK, 6.0)
    warm = solve_frames(chain, targets, tolerance=1e-4, warm_start=True)
    # Frame 0 from the chain; a block's frames from the result of the frame just before the block.
    assert solve(chain, targets[0], tolerance=1e-4).joints.tolist() == warm.joints[0].tolist()
    for begin in (1, 1 + WARM_START_BLOCK):
        for f in (begin, begin + 7):
            again = solve(warm.joints[begin - 1], targets[f], tolerance=1e-4)
            np.testing.assert_allclose(warm.joints[f], again.joints, rtol=0, atol=1e-12)


def test_one_frame_and_shapes() -> None:
    chain = np.array([[0.0, 0, 0], [0, 0, 1], [0, 0, 2]])
    result = solve_frames(chain, [[1.0, 0, 1]])
    assert result.joints.shape == (1, 3, 3)
    assert result.iterations.shape == result.error.shape == result.reached.shape == (1,)
    assert result.reached[0]


def test_frames_left_at_work_are_laid_out_frames_last() -> None:
    """Indexing the frames axis with an array lays the result out frames first, and every row the passes
    touch would be strided (three times slower at a thousand frames); the working set is laid out again."""
    joints = np.arange(17 * 3 * 10, dtype=np.float64).reshape(17, 3, 10)
    taken = iterate._frames(joints, np.array([1, 4, 5, 9]))
    assert taken.flags.c_contiguous
    np.testing.assert_array_equal(taken, joints[:, :, [1, 4, 5, 9]])


def test_two_segments_each_from_its_own_pose_end_where_fabriks_iterations_end() -> None:
    """Frames of a two-segment chain each from its own pose (an animated leg's) are put in one step where FABRIK
    iterating from that pose ends: the same knee, to the tolerance of the iterations, and the end on the goal."""
    rng = np.random.default_rng(39)
    frames = 200
    lengths = np.array([0.45, 0.42])
    directions = rng.normal(size=(frames, 2, 3))
    directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
    poses = np.concatenate([np.zeros((frames, 1, 3)), np.cumsum(directions * lengths[None, :, None], axis=1)], axis=1)
    aims = rng.normal(size=(frames, 3))
    aims /= np.linalg.norm(aims, axis=1, keepdims=True)
    goals = aims * rng.uniform(0.04, 0.86, size=(frames, 1))
    exact = solve_frames(poses, goals, tolerance=1e-6)
    assert (exact.iterations == 1).all()
    np.testing.assert_allclose(exact.joints[:, -1], goals, atol=1e-14)
    for f in range(frames):
        iterated = solve(poses[f], goals[f], tolerance=1e-12, max_iterations=100_000)
        np.testing.assert_allclose(exact.joints[f], iterated.joints, atol=1e-9)
        np.testing.assert_allclose(np.linalg.norm(np.diff(exact.joints[f], axis=0), axis=1), lengths, rtol=1e-12)
