"""A tree of bones: forward kinematics, the solver's joints, and local rotations recovered from solved joints."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fabrik_addon.solver import TreeRest, solve_tree, solver_tree, tree_forward_kinematics, tree_local_rotations
from fabrik_addon.solver.core import quat_normalize, quat_to_matrix


def random_tree(seed: int, bones: int) -> TreeRest:
    """Bones hanging from earlier ones, at offsets that are their parents' tails (connected) or elsewhere."""
    random = np.random.default_rng(seed)
    parents = np.array([-1, *[int(random.integers(0, k)) for k in range(1, bones)]])
    lengths = random.uniform(0.3, 1.5, bones)
    heads = np.zeros((bones, 3))
    for k in range(1, bones):
        connected = random.random() < 0.5
        heads[k] = (0.0, lengths[parents[k]], 0.0) if connected else random.normal(size=3)
    rest_rotations = quat_to_matrix(quat_normalize(random.normal(size=(bones, 4))))
    rest_rotations[0] = np.eye(3)
    return TreeRest(parents, rest_rotations, heads, lengths)


def leaves(rest: TreeRest) -> list[int]:
    return [k for k, children in enumerate(rest.children) if not children]


@given(seed=st.integers(0, 10_000), bones=st.integers(1, 12))
def test_local_rotations_give_back_the_pose_the_joints_came_from(seed: int, bones: int) -> None:
    rest = random_tree(seed, bones)
    random = np.random.default_rng(seed + 1)
    pose = quat_normalize(random.normal(size=(3, bones, 4)))
    start = quat_normalize(random.normal(size=(1, bones, 4)))
    joints = solver_tree(rest, start[0], leaves(rest))
    heads, tails, _ = tree_forward_kinematics(rest, pose)
    solved = np.empty((3, joints.tree.size, 3))
    solved[:, joints.head] = heads
    tipped = joints.tail >= 0
    solved[:, joints.tail[tipped]] = tails[:, tipped]
    recovered = tree_local_rotations(rest, joints, solved, start)
    heads_back, tails_back, _ = tree_forward_kinematics(rest, recovered)
    np.testing.assert_allclose(heads_back, heads, atol=1e-9)
    np.testing.assert_allclose(tails_back[:, tipped], tails[:, tipped], atol=1e-9)


def test_a_solved_hand_keeps_its_palm_rigid_and_its_finger_lengths() -> None:
    """An arm, a palm carrying five disconnected finger roots, three bones per finger: solved toward targets
    from another pose of the hand, then turned into bone rotations and back."""
    parents, lengths = [-1, 0], [1.0, 0.4]
    heads: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
    for finger in range(5):
        for segment in range(3):
            parents.append(1 if segment == 0 else len(parents) - 1)
            heads.append(((finger - 2) * 0.08, 0.35, 0.0) if segment == 0 else (0.0, 0.12, 0.0))
            lengths.append(0.12)
    rest = TreeRest(
        np.array(parents),
        np.broadcast_to(np.eye(3), (len(parents), 3, 3)).copy(),
        np.array(heads, float),
        np.array(lengths),
    )
    tips = [k for k, children in enumerate(rest.children) if not children]
    random = np.random.default_rng(3)
    pose = quat_normalize(np.array([1.0, 0, 0, 0]) + 0.3 * random.normal(size=(20, len(parents), 4)))
    _, goal_tails, _ = tree_forward_kinematics(rest, pose)
    start = np.tile([1.0, 0, 0, 0], (1, len(parents), 1))
    joints = solver_tree(rest, start[0], tips)
    solution = solve_tree(joints.tree, joints.tail[tips], goal_tails[:, tips], tolerance=1e-4, max_iterations=500)
    rotations = tree_local_rotations(rest, joints, solution.joints, start)
    heads_back, tails_back, _ = tree_forward_kinematics(rest, rotations)
    np.testing.assert_allclose(heads_back, solution.joints[:, joints.head], atol=1e-9)  # the palm stayed rigid
    np.testing.assert_allclose(tails_back[:, tips], solution.joints[:, joints.tail[tips]], atol=1e-9)
    assert solution.all_reached.mean() >= 0.9
