"""solve_tree on the rigs the issue names, on chains (the one-effector tree), and on bad input."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fabrik_addon.solver import Tree, solve_frames, solve_tree
from fabrik_addon.solver.core import best_turn, quat_between, quat_rotate
from fabrik_addon.solver.points.accelerate import AFTER

from .chains import random_chain, shell
from .trees import hand, leaves, random_poses, shape_error, three_level_tree, y_tree

CHAIN_PARENTS = [-1, 0, 1]
CHAIN = [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0]]


@pytest.mark.parametrize(
    ("parents", "joints", "bodies", "message"),
    [
        ([0, 0, 1], CHAIN, None, r"parents\[0\] must be -1"),
        ([-1, 0, 2], CHAIN, None, r"parents\[2\] must be a joint before 2"),
        ([-1, 0], CHAIN, None, r"shape \(2, 3\)"),
        ([-1.0, 0.0, 1.0], CHAIN, None, "parents must be integers"),
        ([-1, 0, 0], [[0, 0, 0], [0, 0, 1], [0, 0, 0]], None, "joint 2 is where its parent 0 is"),
        ([-1, 0, 1], [[0, 0, 0], [0, np.nan, 1], [0, 0, 2]], None, "NaN or infinity at joint 1"),
        ([-1, 0, 1], CHAIN, [-1, 5, 5], "joints of one body must share a parent"),
    ],
)
def test_bad_trees_are_named(parents: Any, joints: Any, bodies: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Tree(parents, joints, bodies)


@pytest.mark.parametrize(
    ("effectors", "targets", "options", "message"),
    [
        ([0], [[[1, 0, 0]]], {}, "the root cannot move"),
        ([3], [[[1, 0, 0]]], {}, "joints 1 to 2"),
        ([2, 2], [[[1, 0, 0], [1, 0, 0]]], {}, "joint 2 is given twice"),
        ([2], [[1, 0, 0]], {}, r"shape \(F, 1, 3\)"),
        ([2], [[[1, np.inf, 0]]], {}, "NaN or infinity at frame index 0"),
        ([2], [[[1, 0, 0]]], {"weights": [0.0]}, "weights must be positive"),
        ([2], [[[1, 0, 0]]], {"weights": [1.0, 1.0]}, r"shape \(1,\)"),
        ([2], [[[1, 0, 0]]], {"tolerance": 0.0}, "tolerance"),
        ([2], [[[1, 0, 0]]], {"max_iterations": 0}, "max_iterations"),
    ],
)
def test_bad_problems_are_named(effectors: Any, targets: Any, options: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solve_tree(Tree(CHAIN_PARENTS, CHAIN), effectors, targets, **options)


def test_a_tree_copies_its_input_and_is_read_only() -> None:
    joints = np.array(CHAIN)
    tree = Tree(CHAIN_PARENTS, joints)
    joints[1] = 5.0
    assert tree.joints[1].tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="read-only"):
        tree.joints[0, 0] = 1.0
    assert tree.lengths.tolist() == [0.0, 1.0, 1.0]


def test_chains_solve_exactly_as_solve_frames_where_it_reaches() -> None:
    """A chain is the one-effector tree: the same passes, so the same joints to the bit and the same iteration
    counts on every frame solve_frames reaches without accelerating (targets inside the shell the chain can
    reach, where it iterates rather than laying the chain straight or folded in one step). The tree solver
    does not accelerate slow frames: where solve_frames does, it reaches wherever the tree solver does."""
    rng = np.random.default_rng(16)
    compared = total = 0
    for segments in (2, 5, 16, 40):
        chain = random_chain(rng, segments)
        inner, reach = shell(chain)
        directions = rng.normal(size=(50, 3))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        targets = chain[0] + directions * (inner + (reach - inner) * rng.uniform(0.01, 0.99, size=(50, 1)))
        tree = Tree(np.arange(-1, segments), chain)
        tolerance = 1e-6 * reach
        ours = solve_tree(tree, [segments], targets[:, None], tolerance=tolerance, warm_start=False)
        theirs = solve_frames(chain, targets, tolerance=tolerance, warm_start=False)
        same = theirs.reached & (theirs.iterations <= AFTER)
        np.testing.assert_array_equal(ours.joints[same], theirs.joints[same])
        np.testing.assert_array_equal(ours.iterations[same], theirs.iterations[same])
        np.testing.assert_array_equal(ours.all_reached[same], theirs.reached[same])
        assert np.all(theirs.reached[ours.all_reached])
        compared += int(same.sum())
        total += len(targets)
    assert compared >= 0.8 * total  # the comparison covers most frames, not a lucky few


def test_chains_out_of_reach_end_nearly_straight_toward_the_target() -> None:
    """solve_frames lays a chain straight at once; the tree solver iterates there: within 1e-6 of the reach."""
    rng = np.random.default_rng(3)
    chain = random_chain(rng, 8)
    _, reach = shell(chain)
    directions = rng.normal(size=(40, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    targets = chain[0] + directions * reach * rng.uniform(1.05, 2.0, size=(40, 1))
    ours = solve_tree(Tree(np.arange(-1, 8), chain), [8], targets[:, None], warm_start=False)
    theirs = solve_frames(chain, targets, warm_start=False)
    assert not ours.reached.any()
    assert (ours.errors[:, 0] >= theirs.error * (1 - 1e-12)).all()
    np.testing.assert_allclose(ours.errors[:, 0], theirs.error, rtol=0, atol=1e-6 * reach)


@pytest.mark.parametrize("rig", [y_tree, hand, three_level_tree])
def test_rigs_reach_targets_from_their_own_poses_keeping_their_shape(rig: Any) -> None:
    tree, tips = rig()
    rng = np.random.default_rng(2011)
    poses = random_poses(tree, rng, 200)
    targets = poses[:, tips]
    before = targets.copy()
    result = solve_tree(tree, tips, targets, warm_start=False)
    np.testing.assert_array_equal(targets, before)
    assert result.all_reached.mean() >= 0.99
    assert shape_error(tree, result.joints) < 1e-9
    np.testing.assert_array_equal(result.joints[:, 0], np.broadcast_to(tree.joints[0], (200, 3)))
    np.testing.assert_allclose(result.errors, np.linalg.norm(result.joints[:, tips] - targets, axis=2), rtol=1e-12)
    np.testing.assert_array_equal(result.reached, result.errors <= 1e-3)
    weighted = np.sqrt((result.errors**2).mean(axis=1))
    np.testing.assert_allclose(result.rms_error, weighted, rtol=1e-12)


def test_cold_start_solves_every_frame_as_if_alone() -> None:
    tree, tips = hand()
    targets = random_poses(tree, np.random.default_rng(5), 12)[:, tips]
    together = solve_tree(tree, tips, targets, warm_start=False)
    for f in range(12):
        alone = solve_tree(tree, tips, targets[f : f + 1], warm_start=False)
        np.testing.assert_array_equal(together.joints[f], alone.joints[0])
        assert together.iterations[f] == alone.iterations[0]


def test_warm_start_follows_a_smooth_motion_keeping_the_shape() -> None:
    """600 frames of a slow blend between random poses: every frame reached, no joint jumping farther than
    JUMP_RATIO times its farthest target's move unless solved from the frame before, the shape kept."""
    tree, tips = hand()
    keys = random_poses(tree, np.random.default_rng(8), 4)[:, tips]
    t = np.linspace(0, 3, 600)
    i = np.minimum(t.astype(int), 2)
    blend = (t - i)[:, None, None]
    targets = keys[i] * (1 - blend) + keys[i + 1] * blend
    result = solve_tree(tree, tips, targets, warm_start=True)
    assert result.all_reached.mean() >= 0.99
    assert shape_error(tree, result.joints) < 1e-9
    cold = solve_tree(tree, tips, targets, warm_start=False)
    assert result.iterations.mean() < cold.iterations.mean()


def test_passive_branches_ride_along_keeping_their_shape() -> None:
    """Only two fingertips have targets: the other fingers follow their palm, untouched in shape."""
    tree, tips = hand()
    targets = random_poses(tree, np.random.default_rng(4), 50)[:, tips[:2]]
    result = solve_tree(tree, tips[:2], targets, warm_start=False)
    assert result.errors.shape == (50, 2)
    assert result.all_reached.all()
    assert shape_error(tree, result.joints) < 1e-9


def test_a_rigid_body_with_no_effector_beyond_it_is_dragged_keeping_its_shape() -> None:
    """The 3-level tree with targets on its nine twigs only: its crown (one body carrying three horn roots) and
    the horns ride along on the trunk, rigid."""
    tree, tips = three_level_tree()
    twigs = tips[:9]
    targets = random_poses(tree, np.random.default_rng(9), 60)[:, twigs]
    result = solve_tree(tree, twigs, targets, warm_start=False)
    assert result.all_reached.mean() >= 0.99
    assert shape_error(tree, result.joints) < 1e-9
    crown = np.flatnonzero(tree.bodies == tree.bodies[tips[9] - 2])
    assert len(crown) == 3
    assert np.isfinite(result.joints).all()


def test_an_effector_inside_the_tree_pulls_with_its_branch() -> None:
    """The Y's fork joint has a target of its own besides the two tips: all three reached."""
    tree, tips = y_tree()
    poses = random_poses(tree, np.random.default_rng(6), 100)
    joints = [4, *tips]
    result = solve_tree(tree, joints, poses[:, joints], warm_start=False)
    assert result.all_reached.mean() >= 0.99
    assert shape_error(tree, result.joints) < 1e-9


def test_best_turn_recovers_a_rotation() -> None:
    rng = np.random.default_rng(1)
    offsets = rng.normal(size=(4, 3, 10))
    q = rng.normal(size=(10, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    aims = quat_rotate(q[None], offsets.transpose(0, 2, 1)).transpose(0, 2, 1)
    found = best_turn(offsets, aims, np.array([1.0, 2.0, 0.5, 1.0])).T
    np.testing.assert_allclose(np.abs((found * q).sum(axis=1)), 1.0, atol=1e-9)


def test_best_turn_of_one_direction_is_the_smallest_turn() -> None:
    """One offset leaves a family of turns; the tie goes to the smallest, which moves riders least."""
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 20))
    b = rng.normal(size=(3, 20))
    found = best_turn(a[None], b[None], np.ones(1)).T
    smallest = quat_between((a / np.linalg.norm(a, axis=0)).T, (b / np.linalg.norm(b, axis=0)).T)
    np.testing.assert_allclose(np.abs((found * smallest).sum(axis=1)), 1.0, atol=1e-9)


def test_leaves_of_the_rigs() -> None:
    for rig, count in ((y_tree, 2), (hand, 5), (three_level_tree, 12)):
        tree, tips = rig()
        assert sorted(tips) == leaves(tree).tolist()
        assert len(tips) == count
    assert three_level_tree()[0].size - 1 >= 60
