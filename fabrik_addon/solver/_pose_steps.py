"""The steps the limited solver repeats on every frame: one FABRIK iteration on bones (a backward and a
forward pass that carry each bone's orientation and keep its limits) and one damped-least-squares step.

Each step takes the bones' local rotations (F, m, 4), their Y scales (F, m) and the goals (F, 3), and returns
new local rotations within the limits; ``_pose_solve`` decides which step runs when, from which start, and
which result to keep. See ``_pose_solve`` for the method and its source.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._root_turns import cross_matrices, unit
from .limits import JointLimits
from .pose import ChainRest, forward_kinematics
from .rotations import axis_angle_to_quat, matrix_to_quat, quat_between, quat_multiply, quat_to_matrix
from .validate import FloatArray

#: Damping of the least-squares steps, as a fraction of the chain's length (the step's distance scale).
_DAMPING = 0.1
#: The largest turn of one bone in one least-squares step, radians.
_MAX_STEP_RAD = 0.3


@dataclass(frozen=True)
class PoseSteps:
    """The step routines for one chain: its rest geometry and limits."""

    rest: ChainRest
    limits: JointLimits

    def fabrik(self, quats: FloatArray, scales: FloatArray, goals: FloatArray) -> FloatArray:
        """One backward and one forward pass on every frame given; returns the new local rotations."""
        rest, limits = self.rest, self.limits
        bones = len(rest.offsets)
        offsets = rest.stretched_offsets(scales)  # (F, m, 3)
        directions = rest.offsets / rest.lengths[:, None]  # (m, 3), in each bone's frame
        joints, orientations = forward_kinematics(rest, quats, scales)

        # Backward: from the target toward the root, each bone aimed from its next joint at its old head.
        placed = np.empty_like(joints)
        placed[:, -1] = goals
        turned = orientations.copy()
        for k in range(bones - 1, -1, -1):
            toward_tail = unit(placed[:, k + 1] - joints[:, k], fallback=orientations[:, k] @ directions[k])
            turned[:, k] = _aim(orientations[:, k], directions[k], toward_tail)
            if k + 1 < bones:
                turned[:, k] = self._parent_within_child_limits(turned[:, k], turned[:, k + 1], k + 1)
            placed[:, k] = placed[:, k + 1] - np.einsum("fij,fj->fi", turned[:, k], offsets[:, k])

        # Forward: from the fixed root head, each bone aimed at the joint placed above, then clamped.
        result = np.empty_like(quats)
        head = np.zeros((len(goals), 3))
        parent = np.broadcast_to(np.eye(3), (len(goals), 3, 3))
        for k in range(bones):
            frame = parent @ rest.rest_rotations[k]
            local = np.swapaxes(frame, 1, 2) @ turned[:, k]  # the backward pass's rotation, as a local one
            wanted = unit(placed[:, k + 1] - head, fallback=turned[:, k] @ directions[k])
            aimed = _aim(local, directions[k], np.einsum("fji,fj->fi", frame, wanted))
            result[:, k] = limits.clamp(matrix_to_quat(aimed), bone=k)
            parent = frame @ quat_to_matrix(result[:, k])
            head = head + np.einsum("fij,fj->fi", parent, offsets[:, k])
        return result

    def least_squares(self, quats: FloatArray, scales: FloatArray, goals: FloatArray) -> FloatArray:
        """One damped-least-squares step on every bone's rotation, each clamped to its limits after.

        FABRIK aims each bone with the smallest turn, which never rolls a bone about its own axis; a frame that
        needs a roll (a hinge whose plane must turn to the target) stalls there. The tip's Jacobian does see
        those rolls, so a few of these steps finish what FABRIK left."""
        rest = self.rest
        frames, bones = quats.shape[:2]
        joints, orientations = forward_kinematics(rest, quats, scales)
        error = goals - joints[:, -1]
        # d tip / d (turn of bone k about world axis a) = a x (tip - head_k) = -[tip - head_k]x a
        arms = joints[:, -1:] - joints[:, :-1]  # (F, m, 3)
        jacobian = -cross_matrices(arms).transpose(0, 2, 1, 3).reshape(frames, 3, 3 * bones)
        damping = (_DAMPING * float((rest.lengths * scales.mean(axis=0)).sum())) ** 2
        normal = jacobian @ np.swapaxes(jacobian, 1, 2) + damping * np.eye(3)
        turns = (np.swapaxes(jacobian, 1, 2) @ np.linalg.solve(normal, error[..., None]))[..., 0]
        turns = turns.reshape(frames, bones, 3)
        angles = np.linalg.norm(turns, axis=-1, keepdims=True)
        turns *= np.minimum(1.0, _MAX_STEP_RAD / np.maximum(angles, 1e-300))
        result = np.empty_like(quats)
        parent = np.broadcast_to(np.eye(3), (frames, 3, 3))
        for k in range(bones):
            frame = parent @ rest.rest_rotations[k]
            local_turn = np.einsum("fji,fj->fi", frame, turns[:, k])  # frame.T @ turn: in the bone's rest frame
            angle = np.linalg.norm(local_turn, axis=-1, keepdims=True)
            turned = quat_multiply(axis_angle_to_quat(np.concatenate([angle, local_turn], axis=-1)), quats[:, k])
            result[:, k] = self.limits.clamp(turned, bone=k)
            parent = orientations[:, k]
        return result

    def _parent_within_child_limits(self, parent: FloatArray, child: FloatArray, k: int) -> FloatArray:
        """The parent orientation (F, 3, 3) under which ``child`` (bone ``k``'s orientation) is a rotation
        within bone ``k``'s limits: ``parent`` itself where it already is, else turned to match the nearest
        allowed one."""
        if not (self.limits.lock[k].any() or self.limits.use_limit[k].any()):
            return parent
        rest_rotation = self.rest.rest_rotations[k]
        local = matrix_to_quat(np.swapaxes(parent @ rest_rotation, 1, 2) @ child)
        allowed = self.limits.clamp(local, bone=k)
        return np.asarray(child @ np.swapaxes(rest_rotation @ quat_to_matrix(allowed), 1, 2))


def _aim(orientation: FloatArray, direction: FloatArray, toward: FloatArray) -> FloatArray:
    """``orientation`` (F, 3, 3) turned by the smallest rotation that takes its ``direction`` (3,), a vector in
    its own frame, onto the unit vectors ``toward`` (F, 3)."""
    now = orientation @ direction
    return np.asarray(quat_to_matrix(quat_between(now, toward)) @ orientation)


def tip_error(rest: ChainRest, quats: FloatArray, scales: FloatArray, goals: FloatArray) -> FloatArray:
    joints, _ = forward_kinematics(rest, quats, scales)
    return np.asarray(np.linalg.norm(joints[:, -1] - goals, axis=-1))
