"""Accelerated FABRIK: slow frames near full reach converge in far fewer iterations, everything else as before."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import solve, solve_frames
from fabrik_addon.solver.points import accelerate, iterate

from .chains import FloatArray, assert_chain_kept, points_at, random_chain, shell
from .test_frames import _unexplained_jumps


@st.composite
def near_full_reach(draw: st.DrawFn) -> tuple[FloatArray, FloatArray]:
    """A random chain of 3 to 65 joints and targets at 90-99.5% of its reach (outside its inner ball)."""
    segments = draw(st.integers(2, 64))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    chain = random_chain(rng, segments)
    inner, reach = shell(chain)
    radii = np.maximum(reach * rng.uniform(0.9, 0.995, size=6), inner + 0.01 * (reach - inner))
    return chain, points_at(rng, chain[0], radii)


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never accelerate: FABRIK as it was."""
    monkeypatch.setattr(iterate, "AFTER", 10**9)


@settings(max_examples=60, deadline=None)
@given(case=near_full_reach())
def test_near_full_reach_keeps_lengths_and_root_and_is_reached(case: tuple[FloatArray, FloatArray]) -> None:
    chain, targets = case
    _, reach = shell(chain)
    result = solve_frames(chain, targets, tolerance=1e-4 * reach, warm_start=False)
    assert_chain_kept(result.joints, chain)
    assert result.reached.all()
    np.testing.assert_allclose(result.error, np.linalg.norm(result.joints[:, -1] - targets, axis=1), rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(case=near_full_reach())
def test_accelerated_frames_do_not_depend_on_the_frames_beside_them(case: tuple[FloatArray, FloatArray]) -> None:
    chain, targets = case
    _, reach = shell(chain)
    tolerance = 1e-6 * reach
    together = solve_frames(chain, targets, tolerance=tolerance, warm_start=False)
    pairs = solve_frames(chain, targets[::2], tolerance=tolerance, warm_start=False)
    np.testing.assert_array_equal(pairs.joints, together.joints[::2])
    for f, target in enumerate(targets):
        single = solve(chain, target, tolerance=tolerance)
        np.testing.assert_array_equal(single.joints, together.joints[f])
        assert single.iterations == together.iterations[f]


@pytest.mark.slow
def test_near_full_reach_takes_far_fewer_iterations(monkeypatch: pytest.MonkeyPatch) -> None:
    """960 seeded targets at 90-99.5% of the reach of chains of 2 to 64 segments, tolerance 1e-4 of the
    reach: measured at most 83 iterations accelerated, up to 1,000 and more plain."""
    cases = [(chain, targets, 1e-4 * reach) for chain, targets, reach in _near_reach_cases(12)]
    fast = [solve_frames(c, t, tolerance=tol, warm_start=False, max_iterations=300) for c, t, tol in cases]
    iterations = np.concatenate([r.iterations for r in fast])
    assert all(r.reached.all() for r in fast)
    assert iterations.max() <= 120
    _plain(monkeypatch)
    plain = np.concatenate(
        [solve_frames(c, t, tolerance=tol, warm_start=False, max_iterations=300).iterations for c, t, tol in cases]
    )
    assert plain.max() == 300
    assert plain.sum() > 2 * iterations.sum()


def test_frames_solved_within_after_iterations_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Frames that stop within ``AFTER`` iterations are never accelerated: the same joints to the bit."""
    rng = np.random.default_rng(11)
    runs = []
    for segments in (2, 5, 16, 40):
        chain = random_chain(rng, segments)
        inner, reach = shell(chain)
        targets = points_at(rng, chain[0], inner + (reach - inner) * rng.uniform(0.01, 0.995, size=100))
        runs.append((chain, targets, 1e-5 * reach))
    fast = [solve_frames(c, t, tolerance=tol, warm_start=False) for c, t, tol in runs]
    _plain(monkeypatch)
    plain = [solve_frames(c, t, tolerance=tol, warm_start=False) for c, t, tol in runs]
    quick = slow = 0
    for ours, theirs in zip(fast, plain, strict=True):
        easy = theirs.iterations <= accelerate.AFTER
        np.testing.assert_array_equal(ours.joints[easy], theirs.joints[easy])
        np.testing.assert_array_equal(ours.iterations[easy], theirs.iterations[easy])
        quick += int(easy.sum())
        slow += int((ours.iterations < theirs.iterations).sum())
    assert quick >= 200  # most frames are easy ones
    assert slow >= 20  # and the slow ones were accelerated


def test_warm_start_near_full_reach_is_reached_without_jumps() -> None:
    """A 32-bone chain whose target wanders at 93-99% of its reach, as a creature's tail does."""
    chain = np.column_stack([np.zeros(33), np.zeros(33), np.arange(33.0)])
    t = np.linspace(0, 2 * np.pi, 250)[:, None]
    directions = np.column_stack([np.sin(t) * 0.4, np.cos(2 * t) * 0.3, np.ones_like(t)])
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    targets = directions * 32.0 * (0.96 + 0.03 * np.sin(3 * t))
    result = solve_frames(chain, targets, tolerance=1e-3, warm_start=True)
    assert_chain_kept(result.joints, chain)
    assert result.reached.all()
    assert result.iterations.max() <= 60
    assert _unexplained_jumps(result.joints, targets, 1e-3) == []


def test_joint_sums_add_in_one_order_whatever_the_frames() -> None:
    rows = np.random.default_rng(2).normal(size=(99, 7)) * 10.0 ** np.arange(-3, 4)
    sums = accelerate.joint_sums(rows)
    for f in range(7):
        assert accelerate.joint_sums(rows[:, f : f + 1].copy())[0] == sums[f]
    np.testing.assert_allclose(sums, rows.sum(axis=0), rtol=1e-12)


@pytest.mark.slow
def test_accelerated_frames_stop_on_patience_not_on_one_iteration_without_progress() -> None:
    """An accelerated frame's error goes up and down; stopping at its first iteration without progress (as
    plain FABRIK does) left one of these 1,600 frames short of a tolerance of 1e-6 of the reach."""
    for chain, targets, reach in _near_reach_cases(20):
        assert solve_frames(chain, targets, tolerance=1e-6 * reach, warm_start=False).reached.all()


def _near_reach_cases(chains_per_size: int) -> list[tuple[FloatArray, FloatArray, float]]:
    """Seeded chains of 2 to 64 segments with 10 targets each at 90-99.5% of the reach: (chain, targets,
    reach)."""
    rng = np.random.default_rng(7)
    cases = []
    for segments in (2, 3, 4, 6, 9, 16, 32, 64):
        for _ in range(chains_per_size):
            chain = random_chain(rng, segments)
            inner, reach = shell(chain)
            radii = np.maximum(reach * rng.uniform(0.9, 0.995, size=10), inner + 0.01 * (reach - inner))
            cases.append((chain, points_at(rng, chain[0], radii), reach))
    return cases


@settings(max_examples=20, deadline=None)
@given(case=near_full_reach())
def test_history_records_the_same_accelerated_solve(case: tuple[FloatArray, FloatArray]) -> None:
    chain, targets = case
    _, reach = shell(chain)
    for target in targets:
        plain = solve(chain, target, tolerance=1e-6 * reach)
        recorded = solve(chain, target, tolerance=1e-6 * reach, history=True)
        np.testing.assert_array_equal(recorded.joints, plain.joints)
        assert recorded.iterations == plain.iterations
        assert recorded.history is not None
        assert len(recorded.history) == 2 * plain.iterations + 1
