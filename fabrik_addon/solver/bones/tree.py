"""A tree of bones as rigid bodies, as ``chain`` does for a chain: from local rotations to heads and tails, to
the ``Tree`` of joints the tree solver moves, and from solved joints back to local rotations.

Every position and rotation is in the tree's base frame: the root bone's rest frame, placed at its head. A
bone is a rigid body from its head to what it carries: the heads of its children (at fixed offsets in its
rest frame, which is how a disconnected child hangs) and its tail. In the solver's ``Tree`` each bone is one
body, carrying its children's heads and, if it is an end effector, its tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import FloatArray, best_turn, quat_between, quat_multiply, quat_to_matrix, sign_continuous, twist
from ..points import Tree
from .chain import inherit_stretch

#: Children of a bone whose heads lie within this distance of each other (scene units at rest) hang from one
#: joint: a fork, where the paper's sub-base is (two branches connected to one tail).
SAME_PLACE = 1e-6
#: How much the smaller turn counts where bones' carried points leave a turn free (a rigid body whose points
#: lie on one line): only to pick one, the nearest the bone's own rotation.
_LEAST_TURN = 1e-12


@dataclass(frozen=True)
class TreeRest:
    """The rest geometry of a tree of ``b`` bones, parents before children.

    Attributes
    ----------
    parents : ndarray of int, shape (b,)
        Each bone's parent bone; -1 for the root bone (bone 0), the only one.
    rest_rotations : ndarray, shape (b, 3, 3)
        Each bone's rest frame relative to its parent's rest frame; the root's is the identity.
    heads : ndarray, shape (b, 3)
        Each bone's head relative to its parent's head, in the parent's rest frame; 0 for the root.
    lengths : ndarray, shape (b,)
        Each bone's length: its tail lies at (0, length, 0) in its own frame.
    """

    parents: NDArray[np.int64]
    rest_rotations: FloatArray
    heads: FloatArray
    lengths: FloatArray

    def __post_init__(self) -> None:
        b = len(self.parents)
        if b < 1 or self.parents[0] != -1 or (self.parents[1:] < 0).any():
            raise ValueError("a tree of bones needs one root bone, first, and a parent for every other bone")
        if (self.parents[1:] >= np.arange(1, b)).any():
            raise ValueError("every bone's parent must come before it")
        if self.rest_rotations.shape != (b, 3, 3) or self.heads.shape != (b, 3) or self.lengths.shape != (b,):
            raise ValueError(f"a tree of {b} bones needs rest_rotations (b, 3, 3), heads (b, 3), lengths (b,)")

    @property
    def children(self) -> list[list[int]]:
        return [np.flatnonzero(self.parents == k).tolist() for k in range(len(self.parents))]


def tree_forward_kinematics(
    rest: TreeRest, rotations: FloatArray, scales: FloatArray | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Heads (F, b, 3), tails (F, b, 3) and orientations (F, b, 3, 3) of a tree posed by local rotations
    (F, b, 4), each bone scaled along its own Y axis by ``scales`` (F, b) if given (a stretched bone carries
    its tail and its children's heads farther, as ``ChainRest.stretched_offsets``)."""
    frames, bones = rotations.shape[:2]
    stretch = np.ones((frames, bones)) if scales is None else np.broadcast_to(scales, (frames, bones))
    heads = np.zeros((frames, bones, 3))
    orientations = np.empty((frames, bones, 3, 3))
    turned = quat_to_matrix(rotations)
    for k in range(bones):
        parent = rest.parents[k]
        if parent < 0:
            orientations[:, k] = rest.rest_rotations[k] @ turned[:, k]
            continue
        offset = rest.heads[k] * np.stack([np.ones(frames), stretch[:, parent], np.ones(frames)], axis=1)
        heads[:, k] = heads[:, parent] + np.einsum("fij,fj->fi", orientations[:, parent], offset)
        orientations[:, k] = orientations[:, parent] @ rest.rest_rotations[k] @ turned[:, k]
    tails = heads + orientations[..., :, 1] * (rest.lengths * stretch)[..., None]
    return heads, tails, orientations


def tree_inherited_stretch(rest: TreeRest, rotations: FloatArray, scales: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The rotations (F, b, 4) and Y scales (F, b) to key on a tree's stretched bones whose children inherit
    their scale fully: ``chain.inherited_stretch`` for a tree, from solved local rotations (F, b, 4) and Y
    scales (F, b)."""
    orientations = tree_forward_kinematics(rest, rotations, scales)[2]
    return inherit_stretch(rest.parents, rest.rest_rotations, orientations, rotations, scales)


@dataclass(frozen=True)
class TreeJoints:
    """The joints a tree of bones makes for the solver on points: where each is (in the pose it was made in),
    which it hangs from and which bone carries it; for each bone, the joint at its head, and the joint at its
    tail (-1 where the tail is no joint: bones that are not end effectors).

    Attributes
    ----------
    points : ndarray, shape (n, 3)
    parents, bodies : ndarray of int, shape (n,)
        As ``points.Tree`` takes them.
    head, tail : ndarray of int, shape (b,)
    """

    points: FloatArray
    parents: NDArray[np.int64]
    bodies: NDArray[np.int64]
    head: NDArray[np.int64]
    tail: NDArray[np.int64]

    @cached_property
    def tree(self) -> Tree:
        """The ``Tree`` the solver on points moves (checked then: it refuses two joints in one place, as a
        child's head on its parent's head makes)."""
        return Tree(self.parents, self.points, self.bodies)


def solver_tree(rest: TreeRest, rotations: npt.ArrayLike, tips: npt.ArrayLike) -> TreeJoints:
    """The ``Tree`` of joints for the solver, in the pose of ``rotations`` (b, 4), with the tails of the bones
    ``tips`` (the end effectors) as joints."""
    quats = np.asarray(rotations, dtype=np.float64).reshape(1, -1, 4)
    heads, tails, _ = tree_forward_kinematics(rest, quats)
    tip_set = {int(t) for t in np.asarray(tips).ravel()}
    bones = len(rest.parents)
    head = np.zeros(bones, dtype=np.int64)
    tail = np.full(bones, -1, dtype=np.int64)
    points, parents, bodies = [heads[0, 0]], [-1], [-1]
    children = rest.children
    for k in range(bones):
        carried: dict[tuple[float, ...], int] = {}  # children whose heads coincide hang from one joint
        for child in children[k]:
            where = place_key(rest.heads[child])
            if where in carried:
                head[child] = carried[where]
                continue
            head[child] = carried[where] = len(points)
            points.append(heads[0, child])
            parents.append(int(head[k]))
            bodies.append(k)
        if k in tip_set:
            tail[k] = len(points)
            points.append(tails[0, k])
            parents.append(int(head[k]))
            bodies.append(k)
        elif not children[k]:
            raise ValueError(f"bone {k} has no children and is no end effector: nothing would turn it")
    return TreeJoints(np.array(points), np.array(parents, dtype=np.int64), np.array(bodies, dtype=np.int64), head, tail)


def tree_local_rotations(rest: TreeRest, joints: TreeJoints, solved: FloatArray, start: FloatArray) -> FloatArray:
    """Each bone's local rotation (F, b, 4) that puts what it carries where the solver put it: the smallest
    turn onto a single carried joint, keeping the twist ``start`` (F or 1, b, 4) had; the best rigid fit
    onto several, nearest ``start``. A bone whose carried points all sit on its head (children on its own
    head) keeps its rotation. Signs continuous from frame to frame.

    Parameters
    ----------
    rest : TreeRest
    joints : TreeJoints
    solved : ndarray, shape (F, n, 3)
        The solver's joints.
    start : ndarray, shape (F, b, 4) or (1, b, 4)
    """
    frames, bones = solved.shape[0], len(rest.parents)
    inputs = np.broadcast_to(start, (frames, bones, 4))
    result = np.empty((frames, bones, 4))
    orientations = np.empty((frames, bones, 3, 3))
    children = rest.children
    for k in range(bones):
        parent = rest.parents[k]
        frame = rest.rest_rotations[k] if parent < 0 else orientations[:, parent] @ rest.rest_rotations[k]
        frame = np.broadcast_to(frame, (frames, 3, 3))
        carried = list({int(joints.head[c]): (rest.heads[c], joints.head[c]) for c in children[k]}.values())
        if joints.tail[k] >= 0:
            carried.append((np.array([0.0, rest.lengths[k], 0.0]), joints.tail[k]))
        carried = [(offset, j) for offset, j in carried if np.any(offset != 0.0)]  # a point on the head: no aim
        if not carried:  # only children on its own head: it turns nothing it carries, and keeps its rotation
            result[:, k] = sign_continuous(inputs[:, k], reference=inputs[0, k])
            orientations[:, k] = frame @ quat_to_matrix(result[:, k])
            continue
        offsets = np.array([offset for offset, _ in carried])  # (p, 3) in the bone's rest frame
        aims = np.stack([solved[:, j] - solved[:, joints.head[k]] for _, j in carried], axis=1)  # (F, p, 3)
        local_aims = np.einsum("fji,fpj->fpi", frame, aims)  # into the bone's rest frame under its parent
        if len(carried) == 1:
            axis = offsets[0] / np.linalg.norm(offsets[0])
            swing = quat_between(np.broadcast_to(axis, (frames, 3)), _unit(local_aims[:, 0]))
            rotation = quat_multiply(swing, twist(inputs[:, k], axis))
        else:
            own = quat_to_matrix(inputs[:, k])  # fit the turn from the bone's own rotation: ties keep it
            turned = np.einsum("fij,pj->pif", own, offsets)
            delta = best_turn(turned, local_aims.transpose(1, 2, 0), np.ones(len(carried)), _LEAST_TURN).T
            rotation = quat_multiply(delta, inputs[:, k])
        result[:, k] = sign_continuous(rotation, reference=inputs[0, k])
        orientations[:, k] = frame @ quat_to_matrix(result[:, k])
    return result


def place_key(offset: FloatArray) -> tuple[float, ...]:
    """A key that is the same for points within about ``SAME_PLACE`` of each other: ``offset`` (3,) rounded
    to a grid of that size."""
    return tuple(np.round(np.asarray(offset) / SAME_PLACE).tolist())


def _unit(vectors: FloatArray) -> FloatArray:
    return np.asarray(vectors / np.linalg.norm(vectors, axis=-1, keepdims=True), dtype=np.float64)
