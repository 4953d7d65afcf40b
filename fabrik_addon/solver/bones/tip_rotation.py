"""A chain whose tip bone also turns to a goal orientation, as Blender's IK constraint does with Rotation on.

Once the tip bone's orientation ``R`` is given, its tail lies at its head plus ``R`` applied to the bone's
offset; so the chain above the tip must bring the tip bone's head to ``target - R @ offset``
(``head_goals``). The caller solves the chain above the tip toward those points (FABRIK on points or on
bones: ``above`` gives its rest geometry and limits), then ``tip_rotations`` turns the tip bone to the goal
under its solved parent, within its limits: the nearest orientation they allow. With a weight below 1 the
goal is a blend (``blend``) of the orientation the tip would take without it and the target's.

Positions and orientations are in the chain's base frame (see ``chain``).
"""

from __future__ import annotations

import numpy as np

from ..core import (
    FloatArray,
    JointLimits,
    axis_angle_to_quat,
    matrix_to_quat,
    quat_conjugate,
    quat_multiply,
    quat_to_matrix,
)
from .chain import ChainRest


def head_goals(rest: ChainRest, orientations: FloatArray, targets: FloatArray) -> FloatArray:
    """Where the tip bone's head must be for its tail to reach ``targets`` (F, 3) with the tip bone turned to
    ``orientations`` (F, 3, 3).

    Returns
    -------
    ndarray, shape (F, 3)
    """
    return np.asarray(targets - orientations @ rest.offsets[-1], dtype=np.float64)


def above(rest: ChainRest, limits: JointLimits) -> tuple[ChainRest, JointLimits]:
    """The rest geometry and limits of the chain without its tip bone (at least two bones are needed)."""
    if len(rest.offsets) < 2:
        raise ValueError("a chain of one bone has no bones above its tip")
    return ChainRest(rest.rest_rotations[:-1], rest.offsets[:-1]), limits.take(slice(None, -1))


def tip_rotations(rest: ChainRest, limits: JointLimits, parents: FloatArray, orientations: FloatArray) -> FloatArray:
    """The tip bone's local rotations (F, 4) that turn it to ``orientations`` (F, 3, 3) under its posed parent
    bone's orientation ``parents`` (F, 3, 3) (the identity for a chain of one bone), within its limits."""
    rest_frames = parents @ rest.rest_rotations[-1]
    local = matrix_to_quat(np.swapaxes(rest_frames, 1, 2) @ orientations)
    return limits.clamp(local, bone=len(rest.offsets) - 1)


def blend(free: FloatArray, goal: FloatArray, weight: float) -> FloatArray:
    """Orientations (F, 3, 3) turned from ``free`` toward ``goal`` by the fraction ``weight`` of the turn
    between them (spherical interpolation): ``free`` at 0, ``goal`` at 1."""
    start = matrix_to_quat(free)
    turn = quat_multiply(quat_conjugate(start), matrix_to_quat(goal))
    turn = np.where(turn[:, :1] < 0, -turn, turn)  # the shorter way round
    size = np.linalg.norm(turn[:, 1:], axis=1)
    angle = 2.0 * np.arctan2(size, turn[:, 0])
    axis = np.where(size[:, None] > 1e-12, turn[:, 1:] / np.maximum(size, 1e-300)[:, None], [0.0, 1.0, 0.0])
    part = axis_angle_to_quat(np.column_stack([weight * angle, axis]))
    return np.asarray(quat_to_matrix(quat_multiply(start, part)), dtype=np.float64)
