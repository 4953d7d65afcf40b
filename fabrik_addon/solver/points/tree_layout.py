"""How the tree solver lays a tree out for its passes: runs of segments and rigid bodies, in one array.

A tree is cut into *pieces*, each hanging from one joint (its start):

- a *run*: a path of single-joint bodies (segments) along which nothing branches and no effector sits but
  at its end, so FABRIK's chain passes (``fabrik.forward_reach`` / ``backward_reach``) move it as one chain;
- a *rigid body* carrying several joints (see ``tree``), moved as a whole by ``tree_passes``.

Each piece owns a block of rows in the working array, its start joint's row first (a copy: in the forward pass
it holds where this piece wants its start joint, in the backward pass where the start joint is), then the joints
it carries. A chain is one run, so its working array is its joints, in order. Pieces are ordered by start
joint, so every piece comes after the piece that carries its start joint.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..core import FloatArray
from .tree import Tree


@dataclass(frozen=True)
class Piece:
    """A run of segments or a rigid body, with its rows in the working array.

    Attributes
    ----------
    start : int
        The joint it hangs from.
    members : tuple of int
        The joints it carries: along the run, or the body's joints in index order.
    rows : slice
        Its block: the start joint's copy, then one row per member.
    rigid : bool
        A rigid body (else a run).
    lengths : ndarray, shape (k,)
        A run's segment lengths, from its start joint out.
    fit_weights : ndarray, shape (k,)
        A body's weight per member when it is turned: the total effector weight hanging from the member (0:
        the member rides along), or all 1 for a body with no effector beyond it (it is dragged).
    weight : float
        Total effector weight hanging from this piece; 0 for a passive piece, left out of the forward pass.
    """

    start: int
    members: tuple[int, ...]
    rows: slice
    rigid: bool
    lengths: FloatArray
    fit_weights: FloatArray
    weight: float


@dataclass(frozen=True)
class Pull:
    """Where a joint that ends a piece wants to be in the forward pass: a weighted centroid.

    ``sum(coef * P[row] for row, coef in pieces) + target_coef * targets[effector]``: the start rows of the
    pieces hanging from the joint (each holding where that piece wants it), weighted by the effector weight
    each carries, and the joint's own target if it is an effector; the coefficients sum to 1.
    """

    pieces: tuple[tuple[int, float], ...]
    effector: int
    target_coef: float


@dataclass(frozen=True)
class Layout:
    """A tree cut into pieces for one set of effectors and weights.

    Attributes
    ----------
    pieces : tuple of Piece
        Ordered by start joint.
    row_count : int
        Rows of the working array.
    rows : ndarray of int, shape (n,)
        The row holding each joint (the root: the first piece's start row).
    pulls : dict of int to Pull
        For each joint that ends a piece and has an effector at or beyond it.
    effector_rows : ndarray of int, shape (E,)
    weights : ndarray, shape (E,)
    """

    pieces: tuple[Piece, ...]
    row_count: int
    rows: NDArray[np.int64]
    pulls: dict[int, Pull]
    effector_rows: NDArray[np.int64]
    weights: FloatArray

    def to_rows(self, joints: FloatArray) -> FloatArray:
        """The working array (rows, 3, m) of joint positions (n, 3, m): every row holds its joint."""
        working = np.empty((self.row_count, *joints.shape[1:]))
        working[self.rows] = joints
        working[[piece.rows.start for piece in self.pieces]] = joints[[piece.start for piece in self.pieces]]
        return working

    def to_joints(self, working: FloatArray) -> FloatArray:
        """Joint positions (n, 3, m) from the working array (rows, 3, m)."""
        return np.asarray(working[self.rows])


def layout(tree: Tree, effectors: NDArray[np.int64], weights: FloatArray) -> Layout:
    """Cut ``tree`` into pieces for effectors at joints ``effectors`` (E,) with ``weights`` (E,)."""
    n = tree.size
    body_joints: dict[int, list[int]] = {}
    for j in range(1, n):
        body_joints.setdefault(int(tree.bodies[j]), []).append(j)
    child_bodies: list[list[int]] = [[] for _ in range(n)]
    for body, joints in body_joints.items():
        child_bodies[int(tree.parents[joints[0]])].append(body)
    # Effector weight hanging at or beyond each joint.
    hanging = np.zeros(n)
    np.add.at(hanging, effectors, weights)
    for j in range(n - 1, 0, -1):
        hanging[tree.parents[j]] += hanging[j]
    rigid = {body: len(joints) > 1 for body, joints in body_joints.items()}
    is_effector = np.zeros(n, dtype=bool)
    is_effector[effectors] = True
    key = [
        j == 0
        or bool(is_effector[j])
        or len(child_bodies[j]) != 1
        or rigid[child_bodies[j][0]]
        or rigid[int(tree.bodies[j])]
        for j in range(n)
    ]
    pieces: list[Piece] = []
    rows = np.zeros(n, dtype=np.int64)
    row = 0
    for start in (j for j in range(n) if key[j]):
        for body in child_bodies[start]:
            members = list(body_joints[body])
            if not rigid[body]:
                while not key[members[-1]]:
                    members.append(body_joints[child_bodies[members[-1]][0]][0])
            member_weights = hanging[members]
            pieces.append(
                Piece(
                    start=start,
                    members=tuple(members),
                    rows=slice(row, row + len(members) + 1),
                    rigid=rigid[body],
                    lengths=tree.lengths[members],
                    fit_weights=member_weights if member_weights.any() else np.ones(len(members)),
                    weight=float(member_weights.sum() if rigid[body] else member_weights[0]),
                )
            )
            rows[members] = np.arange(row + 1, row + len(members) + 1)
            row += len(members) + 1
    rows[0] = pieces[0].rows.start
    return Layout(
        pieces=tuple(pieces),
        row_count=row,
        rows=rows,
        pulls=_pulls(pieces, effectors, weights, hanging),
        effector_rows=rows[effectors],
        weights=weights,
    )


def _pulls(
    pieces: list[Piece], effectors: NDArray[np.int64], weights: FloatArray, hanging: FloatArray
) -> dict[int, Pull]:
    """The centroid each piece-ending joint with an effector at or beyond it is pulled to (see ``Pull``)."""
    ends = {piece.members[-1] for piece in pieces if not piece.rigid} | {
        member for piece in pieces if piece.rigid for member in piece.members
    }
    effector_of = {int(joint): e for e, joint in enumerate(effectors)}
    pulls = {}
    for joint in sorted(ends):
        total = float(hanging[joint])
        if total == 0.0:
            continue
        hanging_pieces = tuple(
            (piece.rows.start, piece.weight / total) for piece in pieces if piece.start == joint and piece.weight > 0
        )
        e = effector_of.get(joint, -1)
        pulls[joint] = Pull(pieces=hanging_pieces, effector=e, target_coef=float(weights[e]) / total if e >= 0 else 0.0)
    return pulls
