"""A chain of bones as rigid bodies: from local rotations to joint positions and back.

Every position and rotation here is in the chain's base frame: the root bone's rest frame, placed at the
root's head (its origin). Bone ``k`` is a rigid body from its head to the next joint, the head of bone
``k + 1``, or for the last bone its tail; that offset is fixed in the bone's own rest frame, which is how a
disconnected bone hangs from its parent. A bone's pose is its local rotation: relative to its rest frame
under its posed parent, as Blender's pose bones rotate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import FloatArray
from .rotations import quat_between, quat_multiply, quat_to_matrix, sign_continuous, twist


@dataclass(frozen=True)
class ChainRest:
    """The rest geometry of a chain of ``m`` bones.

    Attributes
    ----------
    rest_rotations : ndarray, shape (m, 3, 3)
        Each bone's rest frame relative to its parent's rest frame; the root's is the identity (the base
        frame is the root's rest frame).
    offsets : ndarray, shape (m, 3)
        From each bone's head to the next joint (the next bone's head, or the last bone's tail), in the
        bone's own rest frame. Their lengths are the segment lengths the solver keeps.
    """

    rest_rotations: FloatArray
    offsets: FloatArray

    def __post_init__(self) -> None:
        m = len(self.offsets)
        if self.rest_rotations.shape != (m, 3, 3) or self.offsets.shape != (m, 3) or m < 1:
            raise ValueError(
                f"a chain of m >= 1 bones needs rest_rotations (m, 3, 3) and offsets (m, 3), got "
                f"{self.rest_rotations.shape} and {self.offsets.shape}"
            )

    @property
    def lengths(self) -> FloatArray:
        """Segment lengths, shape (m,)."""
        return np.asarray(np.linalg.norm(self.offsets, axis=1), dtype=np.float64)


def forward_kinematics(
    rest: ChainRest, rotations: FloatArray, scales: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """Joint positions and bone orientations of a chain posed by local rotations.

    Parameters
    ----------
    rest : ChainRest
    rotations : ndarray, shape (F, m, 4)
        Local rotation quaternions (w, x, y, z) of each bone on each frame.
    scales : ndarray, shape (F, m), optional
        Each bone's offset to the next joint scaled by this (a stretched bone); 1 by default.

    Returns
    -------
    joints : ndarray, shape (F, m+1, 3)
        Heads of the bones, then the last bone's tail.
    orientations : ndarray, shape (F, m, 3, 3)
        Each posed bone's frame in the base frame.
    """
    frames, bones = rotations.shape[:2]
    joints = np.zeros((frames, bones + 1, 3))
    orientations = np.empty((frames, bones, 3, 3))
    parent = np.broadcast_to(np.eye(3), (frames, 3, 3))
    for k in range(bones):
        orientations[:, k] = parent @ rest.rest_rotations[k] @ quat_to_matrix(rotations[:, k])
        offset = orientations[:, k] @ rest.offsets[k]
        joints[:, k + 1] = joints[:, k] + (offset if scales is None else offset * scales[:, k, None])
        parent = orientations[:, k]
    return joints, orientations


def local_rotations(rest: ChainRest, joints: FloatArray, input_rotations: FloatArray) -> FloatArray:
    """The local rotations that put each bone along its solved segment, keeping the twist it had.

    Each bone gets the smallest rotation (swing) that turns its rest offset onto its new segment, after the
    twist about that offset that its input rotation had (swing-twist decomposition about the offset), so
    no bone rolls: the twist of the input pose is kept exactly.

    Parameters
    ----------
    rest : ChainRest
    joints : ndarray, shape (F, m+1, 3)
        Solved joint positions, in the base frame, with the segment lengths of ``rest``.
    input_rotations : ndarray, shape (F, m, 4) or (m, 4)
        The local rotations the bones had before solving (their twist is kept, and the first frame's
        quaternion signs follow them).

    Returns
    -------
    ndarray, shape (F, m, 4)
        Local rotation quaternions, sign-continuous from frame to frame.
    """
    frames, bones = joints.shape[0], joints.shape[1] - 1
    inputs = np.broadcast_to(input_rotations, (frames, bones, 4))
    axes = rest.offsets / rest.lengths[:, None]
    result = np.empty((frames, bones, 4))
    parent = np.broadcast_to(np.eye(3), (frames, 3, 3))
    for k in range(bones):
        rest_frame = parent @ rest.rest_rotations[k]  # the bone's rest frame under its posed parent
        segment = joints[:, k + 1] - joints[:, k]
        direction = np.einsum("fji,fj->fi", rest_frame, segment)  # rest_frame.T @ segment
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        swing = quat_between(np.broadcast_to(axes[k], direction.shape), direction)
        rotation = quat_multiply(swing, twist(inputs[:, k], axes[k]))
        result[:, k] = sign_continuous(rotation, reference=inputs[0, k])
        parent = rest_frame @ quat_to_matrix(result[:, k])
    return result
