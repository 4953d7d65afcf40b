"""A tree of joints for FABRIK with several end effectors: which joint hangs from which, and which joints move
together as one rigid body.

Joint 0 is the root; every other joint has a parent with a smaller index (parents before children). The
segment from a joint's parent to it belongs to a rigid body, a *body* (in Blender, a bone):

- a body that carries one joint is a plain segment, as in the paper: the joint can swing freely about the
  parent at its fixed distance (a bone whose only child is connected to its tail);
- a body that carries several joints keeps all their offsets from the parent (and from each other) rigid.
  That is a bone with disconnected children, such as a palm with five finger roots: each finger root is at a
  fixed offset in the palm's frame, and the palm turns about its head (the parent joint) as one piece.

Distances alone would not keep such a body rigid (three or more points joined to one pivot by fixed lengths
can still scissor), so the solver moves a multi-joint body only by rotations and translations of the whole
(see ``tree_passes``): offsets are kept to rounding, like segment lengths.

A Blender armature maps onto this as: one joint per bone head (the root bone's head is joint 0) and per tail
that matters (a bone tip that is an end effector), each bone one body carrying its children's heads and,
where it is a joint, its own tail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import FloatArray

#: A segment shorter than this fraction of the longest one counts as zero-length (as for chains).
_ZERO_LENGTH_FRACTION = 1e-12


@dataclass(frozen=True, init=False)
class Tree:
    """A tree of joints in a start pose: its structure, and the lengths and offsets the solver keeps.

    Parameters
    ----------
    parents : array-like of int, shape (n,)
        ``parents[j]`` is the joint joint ``j`` hangs from; ``parents[0]`` is -1 (the root) and
        ``parents[j] < j`` for every other joint.
    joints : array-like, shape (n, 3)
        The start pose, root first, in scene units. The root stays here; the distance from each joint to
        its parent and the offsets within each body are kept. Copied, never modified.
    bodies : array-like of int, shape (n,), optional
        ``bodies[j]`` labels the rigid body that carries joint ``j`` from its parent; joints with the same
        label move as one rigid body with their common parent (they must share it). ``bodies[0]`` is
        ignored. By default every joint is carried by its own body: a tree of free segments.

    Attributes
    ----------
    parents : ndarray of int, shape (n,)
    joints : ndarray, shape (n, 3)
    bodies : ndarray of int, shape (n,)
        Relabelled 0, 1, ... in order of each body's first joint; -1 for the root.
    lengths : ndarray, shape (n,)
        Distance from each joint to its parent; 0 for the root.

    Raises
    ------
    ValueError
        Naming the problem: wrong shapes, a parent after its child, NaN or infinity, a zero-length segment,
        a body whose joints have different parents.
    """

    parents: NDArray[np.int64]
    joints: FloatArray
    bodies: NDArray[np.int64]
    lengths: FloatArray = field(repr=False)

    def __init__(self, parents: npt.ArrayLike, joints: npt.ArrayLike, bodies: npt.ArrayLike | None = None) -> None:
        parent_array = _as_parents(parents)
        joint_array = _as_tree_joints(joints, len(parent_array))
        lengths = np.zeros(len(parent_array))
        lengths[1:] = np.linalg.norm(joint_array[1:] - joint_array[parent_array[1:]], axis=1)
        zero = np.flatnonzero(lengths[1:] <= _ZERO_LENGTH_FRACTION * lengths.max()) + 1
        if zero.size:
            j = int(zero[0])
            raise ValueError(f"joints: joint {j} is where its parent {parent_array[j]} is (a zero-length segment)")
        body_array = _as_bodies(bodies, parent_array)
        for name, value in (("parents", parent_array), ("joints", joint_array), ("bodies", body_array)):
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        lengths.flags.writeable = False
        object.__setattr__(self, "lengths", lengths)

    @property
    def size(self) -> int:
        """The number of joints, n."""
        return len(self.parents)


def _as_parents(parents: npt.ArrayLike) -> NDArray[np.int64]:
    array = np.asarray(parents)
    if array.ndim != 1 or array.size < 2:
        raise ValueError(f"parents must have shape (n,) with n >= 2 joints, got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"parents must be integers, got dtype {array.dtype}")
    clean = array.astype(np.int64)
    if clean[0] != -1:
        raise ValueError(f"parents[0] must be -1 (joint 0 is the root), got {clean[0]}")
    bad = np.flatnonzero((clean[1:] < 0) | (clean[1:] >= np.arange(1, clean.size))) + 1
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"parents[{j}] must be a joint before {j} (0 to {j - 1}), got {clean[j]}")
    return clean


def _as_tree_joints(joints: npt.ArrayLike, count: int) -> FloatArray:
    try:
        array = np.array(joints, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"joints must be numeric: {exc}") from exc
    if array.shape != (count, 3):
        raise ValueError(f"joints must have shape ({count}, 3), one row per parent entry, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        raise ValueError(f"joints contains NaN or infinity at joint {int(bad[0])}: {array[bad[0]].tolist()}")
    return array


def _as_bodies(bodies: npt.ArrayLike | None, parents: NDArray[np.int64]) -> NDArray[np.int64]:
    """Body labels relabelled 0, 1, ... in order of first joint (root -1); each body's joints share a parent."""
    if bodies is None:
        return np.arange(-1, parents.size - 1, dtype=np.int64)
    array = np.asarray(bodies)
    if array.shape != parents.shape or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"bodies must be integers of shape {parents.shape}, got {array.dtype} {array.shape}")
    _, first, labels = np.unique(array[1:], return_index=True, return_inverse=True)
    order = np.argsort(first)  # unique labels sorted by first joint
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    clean: NDArray[np.int64] = np.concatenate([[-1], rank[labels.ravel()]]).astype(np.int64)
    head = np.full(order.size, -1, dtype=np.int64)
    for j in range(1, parents.size):
        body = clean[j]
        if head[body] == -1:
            head[body] = parents[j]
        elif head[body] != parents[j]:
            raise ValueError(
                f"bodies: joints of one body must share a parent, but joint {j} hangs from {parents[j]} and "
                f"an earlier joint of its body (label {array[j]}) from {head[body]}"
            )
    return clean
