"""The start-pose rule for nearly straight chains (``core.straight_chains``) has no switch: a knee moves by
little when its goal, or the pose it starts from, moves by little, through what used to be the rule's edges (a
start at 0.99 of the chain's length, a goal as near the root as the chain's end)."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.solver import solve_frames

from .chains import FloatArray

#: Goal steps: a millionth of the chain's length each.
STEP = 1e-6


def _leg(straightness: float, lengths: tuple[float, ...]) -> FloatArray:
    """A chain hanging down -Z from the origin whose end is ``straightness`` of its length from its root, bent
    toward +Y at its middle joints (a knee bending forward), shape (n+1, 3)."""
    total = sum(lengths)
    # Each segment turns by the same angle from the vertical, the first forward and the rest back.
    low, high = 0.0, np.pi / 2
    for _ in range(80):
        angle = 0.5 * (low + high)
        reach = _pose(angle, lengths)[-1]
        low, high = (angle, high) if np.linalg.norm(reach) / total > straightness else (low, angle)
    return _pose(0.5 * (low + high), lengths)


def _pose(angle: float, lengths: tuple[float, ...]) -> FloatArray:
    half = len(lengths) // 2
    signs = [1.0 if i < half else -1.0 for i in range(len(lengths))]
    steps = [
        length * np.array([0.0, s * np.sin(angle), -np.cos(angle)]) for length, s in zip(lengths, signs, strict=True)
    ]
    return np.vstack([np.zeros(3), np.cumsum(steps, axis=0)])


def _knee_moves(starts: FloatArray, goals: FloatArray) -> FloatArray:
    """How far each joint but the root moves from one frame to the next (frames, joints), each frame solved from
    its own start pose toward its goal."""
    total = float(np.linalg.norm(np.diff(starts[0], axis=0), axis=1).sum())
    solved = solve_frames(starts, goals, tolerance=1e-9 * total, max_iterations=2000).joints
    return np.asarray(np.linalg.norm(np.diff(solved[:, 1:-1], axis=0), axis=-1).max(axis=-1) / total)


@pytest.mark.parametrize("lengths", [(0.45, 0.42), (0.45, 0.42, 0.1)])
@pytest.mark.parametrize("side", [-0.12, 0.0, 0.12])
def test_a_goal_moving_by_tiny_steps_through_the_end_of_a_nearly_straight_chain_moves_its_knee_by_little(
    lengths: tuple[float, ...], side: float
) -> None:
    """A goal off the leg's line toward the side opposite its bend (or on it), coming nearer the root than the
    leg's end by steps of a millionth of its length: the knee follows by about as little."""
    start = _leg(0.995, lengths)
    end = start[-1]
    reach = float(np.linalg.norm(end))
    aim = end / reach + np.array([side, -0.5 * side, 0.0])
    aim /= np.linalg.norm(aim)
    total = sum(lengths)
    distances = reach + np.arange(-200, 201) * STEP * total
    goals = distances[:, None] * aim[None]
    moves = _knee_moves(np.repeat(start[None], len(goals), axis=0), goals)
    assert moves.max() < 1e-3, (moves.max(), int(np.argmax(moves)))


@pytest.mark.parametrize("lengths", [(0.45, 0.42), (0.45, 0.42, 0.1)])
def test_a_start_pose_straightening_by_tiny_steps_through_the_old_edge_moves_the_knee_by_little(
    lengths: tuple[float, ...],
) -> None:
    """The animation straightens the leg through 0.99 of its length by steps of a millionth, the goal held
    nearer, off the leg's line: the solved knee moves by about as little."""
    straightness = 0.99 + np.arange(-200, 201) * STEP
    starts = np.stack([_leg(s, lengths) for s in straightness])
    total = sum(lengths)
    aim = np.array([0.0, -0.15, -1.0]) / np.linalg.norm([0.0, -0.15, -1.0])
    goals = np.repeat((0.9 * total * aim)[None], len(starts), axis=0)
    moves = _knee_moves(starts, goals)
    assert moves.max() < 1e-3, (moves.max(), int(np.argmax(moves)))


def test_a_leg_captured_locked_straight_bends_the_way_it_bent_before_and_after_not_the_way_its_noise_points() -> None:
    """Frames 10-14 of a leg straight but for float noise (its knee off its line by 1e-5 of its length, in random
    directions), bent forward before and after, the goal held nearer: every frame's knee goes forward, as Blender's
    IK keeps the bend a leg had (the noise's direction flipped knees on a Character Creator export of CMU 07_12)."""
    rng = np.random.default_rng(3)
    lengths = (0.45, 0.42)
    poses = [_leg(0.98, lengths) for _ in range(25)]
    for f in range(10, 15):
        turn = rng.uniform(0.0, 2.0 * np.pi)  # the noise's side, about the leg's line (-Z)
        about_z = np.array([[np.cos(turn), -np.sin(turn), 0.0], [np.sin(turn), np.cos(turn), 0.0], [0.0, 0.0, 1.0]])
        poses[f] = _pose(2e-5, lengths) @ about_z.T
    starts = np.stack(poses)
    goals = np.repeat((0.9 * sum(lengths) * np.array([0.0, 0.0, -1.0]))[None], len(starts), axis=0)
    knees = solve_frames(starts, goals, tolerance=1e-9).joints[:, 1]
    assert (knees[:, 1] > 0.05).all(), knees[:, 1]  # forward (+Y), the way the leg bends on the other frames
