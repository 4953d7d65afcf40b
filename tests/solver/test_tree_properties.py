"""Invariants of solve_tree on random trees of limbs (some hanging from rigid palms), and what happens when
targets conflict."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import Tree, solve_tree

from .trees import FloatArray, hand, leaves, limb_tree, random_poses, shape_error, y_tree


@st.composite
def tree_and_targets(draw: st.DrawFn) -> tuple[Tree, FloatArray]:
    """A random tree of 1 to 6 limbs, and targets for its leaves on 4 frames: where a random pose puts them,
    moved by up to half the tree's size on some frames (so some cannot all be reached at once)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tree = limb_tree(rng, draw(st.integers(1, 6)))
    tips = leaves(tree)
    targets = random_poses(tree, rng, 4)[:, tips]
    size = float(tree.lengths.sum())
    targets[2:] += rng.normal(size=(2, len(tips), 3)) * 0.5 * size
    return tree, targets


@pytest.mark.slow
@settings(max_examples=60)
@given(case=tree_and_targets())
def test_root_lengths_and_offsets_are_kept(case: tuple[Tree, FloatArray]) -> None:
    tree, targets = case
    tips = leaves(tree)
    before = targets.copy(), tree.joints.copy()
    tolerance = 1e-6 * float(tree.lengths.sum())
    for warm in (False, True):
        result = solve_tree(tree, tips, targets, tolerance=tolerance, warm_start=warm)
        assert np.isfinite(result.joints).all()
        assert shape_error(tree, result.joints) < 1e-9
        np.testing.assert_array_equal(result.joints[:, 0], np.broadcast_to(tree.joints[0], (len(targets), 3)))
        errors = np.linalg.norm(result.joints[:, tips] - targets, axis=2)
        np.testing.assert_allclose(result.errors, errors, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(result.reached, result.errors <= tolerance)
        assert (result.iterations <= 200).all()
    np.testing.assert_array_equal(targets, before[0])  # inputs never mutated
    np.testing.assert_array_equal(tree.joints, before[1])


@pytest.mark.slow
def test_targets_from_the_trees_own_poses_are_reached_in_essentially_every_case() -> None:
    """1,500 seeded cases: 150 random trees of 1 to 7 limbs of 2 to 6 segments each (a third of limb starts
    carrying a rigid palm of 2 to 4 limbs), segments over six orders of magnitude, every leaf an effector,
    targets where 10 uniformly random poses of the tree put its leaves; tolerance 1e-4 of the tree's total
    length, default iteration limit, cold start. Every effector within tolerance at once on 99% of cases."""
    rng = np.random.default_rng(2011)
    reached = total = 0
    for _ in range(150):
        tree = limb_tree(rng, int(rng.integers(1, 8)))
        tips = leaves(tree)
        targets = random_poses(tree, rng, 10)[:, tips]
        result = solve_tree(tree, tips, targets, tolerance=1e-4 * float(tree.lengths.sum()), warm_start=False)
        reached += int(result.all_reached.sum())
        total += len(targets)
    assert reached / total >= 0.99, f"reached {reached} of {total}"


_APART = np.array(
    [[[-20.0, 0.0, 6.0], [20.0, 0.0, 6.0]], [[-6.0, 3.0, 4.0], [6.0, -3.0, 4.0]], [[0, 10, 0], [0, -10, 0]]]
)


def test_conflicting_targets_give_a_deterministic_compromise_split_evenly_by_equal_weights() -> None:
    """The Y's tips pulled apart (farther than its branches allow): the mirror-symmetric Y misses both
    equally, run after run, with no NaN."""
    tree, tips = y_tree()
    first = solve_tree(tree, tips, _APART, warm_start=False)
    again = solve_tree(tree, tips, _APART, warm_start=False)
    np.testing.assert_array_equal(first.joints, again.joints)
    assert np.isfinite(first.joints).all()
    assert not first.reached.any()
    np.testing.assert_allclose(first.errors[:, 0], first.errors[:, 1], rtol=1e-3)
    np.testing.assert_allclose(first.errors, np.linalg.norm(first.joints[:, tips] - _APART, axis=2), rtol=1e-12)


def test_a_heavier_effector_misses_by_less() -> None:
    """Raising one tip's weight moves the compromise its way, step by step: its miss shrinks, the other's
    grows. Where the two branches pull the fork apart along one line (the last pair of targets, straight
    out either side), the misses come out in inverse proportion to the weights, as the centroid puts it."""
    tree, tips = y_tree()
    misses = np.array([solve_tree(tree, tips, _APART, weights=[w, 1.0], warm_start=False).errors for w in (1, 2, 4, 8)])
    assert (np.diff(misses[:, :, 0], axis=0) < 0).all()
    assert (np.diff(misses[:, :, 1], axis=0) > 0).all()
    np.testing.assert_allclose(misses[:, 2, 1] / misses[:, 2, 0], [1, 2, 4, 8], rtol=1e-3)


def test_weights_shift_the_hands_compromise_toward_the_heavier_finger() -> None:
    tree, tips = hand()
    targets = np.zeros((1, 5, 3))
    targets[0, :, 0] = np.linspace(-30, 30, 5)
    targets[0, :, 2] = 5.0
    weights = np.ones(5)
    thumb = []
    for w in (1.0, 2.0, 4.0, 8.0):
        weights[0] = w
        result = solve_tree(tree, tips, targets, weights=weights, warm_start=False)
        assert np.isfinite(result.joints).all()
        assert not result.all_reached.any()
        thumb.append(float(result.errors[0, 0]))
    assert (np.diff(thumb) < 0).all()
