"""The two stages of FABRIK on a tree (Aristidou & Lasenby 2011, several end effectors), on the working array
of ``tree_layout`` (rows, 3, frames).

Stage 1, the forward pass (``forward``, the paper's forward reaching: the tips onto their targets): from the
pieces farthest out to the root, each active piece is pulled to where its end joints want to be, and says where
it wants its start joint (in its own start row). A joint where pieces meet, a sub-base, wants to be at the
weighted centroid of those wishes and of its own target (``Pull``): each hanging piece counts with the total
weight of the effectors beyond it, so every effector pulls as hard as its weight, whichever branch it is on.
The root's wishes are ignored: it stays fixed.

Stage 2, the backward pass (``backward``, the paper's backward reaching: the root put back): from the root out,
each piece's start joint is put back where the piece it belongs to left it, and the piece is pushed out from
there toward where stage 1 left its joints.

Runs use FABRIK's chain passes unchanged. A rigid body carrying several joints is only ever moved as a
whole, so its offsets are kept to rounding; distances alone would let three or more joints scissor about its
head. Each of its joints counts with the effector weight beyond it (a joint with none rides along):

- stage 1 fits the body, least squares, to where its joints want to be, with its head lightly held where it
  was (``HEAD_WEIGHT``): the turn about the weighted centroid (Horn's quaternion method) and the shift of
  that centroid onto where it should go; the head lands where the fit puts it, the body's wish for it;
- stage 2 puts the head back where the backward pass has just placed that joint, and turns the body about it
  to aim its joints, least squares, at where stage 1 left them: for a single joint exactly FABRIK's rule.

Among equally good turns (weighted joints in one line with the centre of the turn) the smallest wins
(``core.LEAST_TURN``), so joints that ride along move as little as possible; a body with no effector beyond it is
dragged behind its head, its joints kept as near where they were as a turn about the head allows.
"""

from __future__ import annotations

import numpy as np

from ..core import FloatArray, best_turn, norms, quat_rotate
from .fabrik import backward_reach, forward_reach
from .tree_layout import Layout, Pull

#: In stage 1 a rigid body is fitted (least squares, turned about the weighted centroid) to where its joints
#: want to be, with its head held where it was by this share of their weight: a body whose pulled joints leave
#: it a choice (one joint, or joints in a line) then moves its head least, as FABRIK moves a segment. Measured
#: on a hand with random poses and on random trees of limbs: 0.1 reached the most (1e-3 and 1e-2 left some
#: frames stalled, 1 slowed every fit down); turning about the head instead stalled on bodies with short limbs.
HEAD_WEIGHT = 0.1


def forward(P: FloatArray, layout: Layout, targets: FloatArray) -> None:
    """Stage 1 on every frame, in place.

    Parameters
    ----------
    P : ndarray, shape (rows, 3, m)
        The working array.
    layout : Layout
    targets : ndarray, shape (E, 3, m)
        Each effector's target per frame.
    """
    for piece in reversed(layout.pieces):
        if piece.weight == 0.0:
            continue
        block = P[piece.rows]
        if not piece.rigid:
            forward_reach(block, piece.lengths, _wanted(P, layout.pulls[piece.members[-1]], targets))
            continue
        goals = block.copy()  # the head stays where it is, lightly held
        for k, j in enumerate(piece.members, start=1):
            if j in layout.pulls:
                goals[k] = _wanted(P, layout.pulls[j], targets)
        weights = np.concatenate([[HEAD_WEIGHT * piece.fit_weights.sum()], piece.fit_weights])
        share = weights[:, None, None] / weights.sum()
        centre, goal_centre = (share * block).sum(axis=0), (share * goals).sum(axis=0)
        block[:] = goal_centre + _turned(block - centre, goals - goal_centre, weights)


def backward(P: FloatArray, layout: Layout, bases: FloatArray) -> None:
    """Stage 2 on every frame, in place: the root at ``bases`` (3, m), every piece pushed out from its start."""
    for piece in layout.pieces:
        base = bases if piece.start == 0 else P[layout.rows[piece.start]]
        block = P[piece.rows]
        if not piece.rigid:
            backward_reach(block, piece.lengths, base)
            continue
        offsets = block[1:] - block[0]
        block[0] = base
        block[1:] = base + _turned(offsets, block[1:] - base, piece.fit_weights)


def errors(P: FloatArray, layout: Layout, targets: FloatArray) -> FloatArray:
    """Distance from each effector to its target, shape (E, m)."""
    return norms(P[layout.effector_rows] - targets)


def _wanted(P: FloatArray, pull: Pull, targets: FloatArray) -> FloatArray:
    """Where a joint is pulled to (3, m): the weighted centroid of ``Pull``."""
    point = targets[pull.effector] * pull.target_coef if pull.effector >= 0 else np.zeros(P.shape[1:])
    for row, coef in pull.pieces:
        point = point + coef * P[row]
    return point


def _turned(offsets: FloatArray, aims: FloatArray, weights: FloatArray) -> FloatArray:
    """``offsets`` (k, 3, m) turned about the origin by the rotation that best aims them along ``aims`` (k, 3,
    m): the one maximising ``sum_k weights[k] * aims[k] . (R offsets[k])``, ties broken toward no turn."""
    q = best_turn(offsets, aims, weights)
    rotated = quat_rotate(q.T[None], offsets.transpose(0, 2, 1))
    return np.asarray(rotated.transpose(0, 2, 1))
