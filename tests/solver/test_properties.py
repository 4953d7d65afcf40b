"""Invariants on random chains: 2 to 128 joints, segment lengths over six orders of magnitude."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from fabrik_addon.solver import solve, solve_frames

from .chains import FloatArray, assert_chain_kept, chain_and_targets, points_at, random_chain, shell


@settings(max_examples=60)
@given(case=chain_and_targets())
def test_fabrik_keeps_root_and_lengths(case: tuple[FloatArray, FloatArray]) -> None:
    _check_invariants(case, "fabrik")


@pytest.mark.slow
@settings(max_examples=15)
@given(case=chain_and_targets())
def test_ccd_keeps_root_and_lengths(case: tuple[FloatArray, FloatArray]) -> None:
    # Fewer examples: CCD costs O(n^2) per iteration, so 128-joint chains are slow to run to the limit.
    _check_invariants(case, "ccd")


def _check_invariants(case: tuple[FloatArray, FloatArray], method: str) -> None:
    chain, targets = case
    before = chain.copy(), targets.copy()
    _, reach = shell(chain)
    result = solve_frames(chain, targets, tolerance=1e-6 * reach, method=method, warm_start=False)
    assert_chain_kept(result.joints, chain)
    np.testing.assert_array_equal(chain, before[0])  # inputs never mutated
    np.testing.assert_array_equal(targets, before[1])
    tips = result.joints[:, -1]
    np.testing.assert_allclose(result.error, np.linalg.norm(tips - targets, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(result.reached, result.error <= 1e-6 * reach)


@settings(max_examples=60)
@given(case=chain_and_targets())
def test_unreachable_targets_give_a_straight_chain_pointing_at_them(
    case: tuple[FloatArray, FloatArray],
) -> None:
    chain, targets = case
    _, reach = shell(chain)
    far = targets[np.linalg.norm(targets - chain[0], axis=1) > reach * (1 + 1e-9)]
    for target in far:
        result = solve(chain, target, tolerance=1e-6 * reach)
        toward = (target - chain[0]) / np.linalg.norm(target - chain[0])
        segments = np.diff(result.joints, axis=0)
        directions = segments / np.linalg.norm(segments, axis=1, keepdims=True)
        np.testing.assert_allclose(directions, np.broadcast_to(toward, directions.shape), atol=1e-9)
        assert result.iterations == 1
        assert not result.reached
        assert np.isclose(result.error, np.linalg.norm(target - chain[0]) - reach, rtol=1e-9)


@pytest.mark.slow
def test_reachable_targets_are_reached_in_essentially_every_case() -> None:
    """10,000 seeded cases: chains of 2 to 128 joints, targets anywhere in the shell the chain can reach (but
    for the 1% nearest each of its boundaries, where any iterative solver slows down), tolerance 1e-4 of the
    chain's reach, default iteration limit."""
    rng = np.random.default_rng(20111)
    reached = total = 0
    for segments in (1, 2, 3, 4, 6, 9, 16, 32, 64, 127):
        for _ in range(100):
            chain = random_chain(rng, segments)
            inner, reach = shell(chain)
            radii = inner + (reach - inner) * rng.uniform(0.01, 0.99, size=10)
            targets = points_at(rng, chain[0], radii)
            result = solve_frames(chain, targets, tolerance=1e-4 * reach, warm_start=False)
            reached += int(result.reached.sum())
            total += len(targets)
    assert reached / total >= 0.99, f"reached {reached} of {total}"


def test_fabrik_needs_fewer_iterations_than_ccd() -> None:
    """The paper's Table 1 finding (15.5 against 26.3 iterations on a 10-joint chain), on seeded targets."""
    rng = np.random.default_rng(15)
    chain = random_chain(rng, 9)
    inner, reach = shell(chain)
    targets = points_at(rng, chain[0], inner + (reach - inner) * rng.uniform(0.01, 0.99, size=200))
    fabrik = solve_frames(chain, targets, tolerance=1e-4 * reach, warm_start=False, method="fabrik")
    ccd = solve_frames(chain, targets, tolerance=1e-4 * reach, warm_start=False, method="ccd")
    assert fabrik.iterations.mean() * 2 < ccd.iterations.mean()
    assert fabrik.reached.mean() > ccd.reached.mean()
