"""The two stages of FABRIK on a tree (Aristidou & Lasenby 2011, several end effectors), on the working array
of ``_tree_layout`` (rows, 3, frames).

Stage 1, inward (``inward``): from the units farthest out to the root, each active unit is pulled to where its
end joints want to be, and says where it wants its start joint (in its own start row). A joint where units
meet, a sub-base, wants to be at the weighted centroid of those wishes and of its own target (``Pull``):
each hanging unit counts with the total weight of the effectors beyond it, so every effector pulls as hard
as its weight, whichever branch it is on. The root's wishes are ignored: it stays fixed.

Stage 2, outward (``outward``): from the root out, each unit's start joint is put back where the unit it
belongs to left it, and the unit is pushed out from there toward where stage 1 left its joints.

Runs use FABRIK's chain passes unchanged. A rigid body carrying several joints is only ever moved as a
whole, so its offsets are kept to rounding; distances alone would let three or more joints scissor about its
head. Each of its joints counts with the effector weight beyond it (a joint with none rides along):

- stage 1 fits the body, least squares, to where its joints want to be, with its head lightly held where it
  was (``HEAD_WEIGHT``): the turn about the weighted centroid (Horn's quaternion method) and the shift of
  that centroid onto where it should go; the head lands where the fit puts it, the body's wish for it;
- stage 2 puts the head back where the outward pass has just placed that joint, and turns the body about it
  to aim its joints, least squares, at where stage 1 left them: for a single joint exactly FABRIK's rule.

Among equally good turns (weighted joints in one line with the centre of the turn) the smallest wins
(``_LEAST_TURN``), so joints that ride along move as little as possible; a body with no effector beyond it is
dragged behind its head, its joints kept as near where they were as a turn about the head allows.
"""

from __future__ import annotations

import numpy as np

from ._geometry import norms
from ._tree_layout import Layout, Pull
from .fabrik import backward_reach, forward_reach
from .rotations import quat_rotate
from .validate import FloatArray

#: Weight of "turn as little as possible" against the least-squares aim, as a fraction of the aim's scale:
#: enough to pick one turn where the aim leaves a family of equally good ones, too little to matter otherwise
#: (it only slows a body's turn by this fraction, toward where the next iteration takes it anyway).
_LEAST_TURN = 1e-6
#: In stage 1 a rigid body is fitted (least squares, turned about the weighted centroid) to where its joints
#: want to be, with its head held where it was by this share of their weight: a body whose pulled joints leave
#: it a choice (one joint, or joints in a line) then moves its head least, as FABRIK moves a segment. Measured
#: on a hand with random poses and on random trees of limbs: 0.1 reached the most (1e-3 and 1e-2 left some
#: frames stalled, 1 slowed every fit down); turning about the head instead stalled on bodies with short limbs.
HEAD_WEIGHT = 0.1


def inward(P: FloatArray, layout: Layout, targets: FloatArray) -> None:
    """Stage 1 on every frame, in place.

    Parameters
    ----------
    P : ndarray, shape (rows, 3, m)
        The working array.
    layout : Layout
    targets : ndarray, shape (E, 3, m)
        Each effector's target per frame.
    """
    for unit in reversed(layout.units):
        if unit.weight == 0.0:
            continue
        block = P[unit.rows]
        if not unit.rigid:
            forward_reach(block, unit.lengths, _wanted(P, layout.pulls[unit.members[-1]], targets))
            continue
        goals = block.copy()  # the head stays where it is, lightly held
        for k, j in enumerate(unit.members, start=1):
            if j in layout.pulls:
                goals[k] = _wanted(P, layout.pulls[j], targets)
        weights = np.concatenate([[HEAD_WEIGHT * unit.fit_weights.sum()], unit.fit_weights])
        share = weights[:, None, None] / weights.sum()
        centre, goal_centre = (share * block).sum(axis=0), (share * goals).sum(axis=0)
        block[:] = goal_centre + _turned(block - centre, goals - goal_centre, weights)


def outward(P: FloatArray, layout: Layout, bases: FloatArray) -> None:
    """Stage 2 on every frame, in place: the root at ``bases`` (3, m), every unit pushed out from its start."""
    for unit in layout.units:
        base = bases if unit.start == 0 else P[layout.rows[unit.start]]
        block = P[unit.rows]
        if not unit.rigid:
            backward_reach(block, unit.lengths, base)
            continue
        offsets = block[1:] - block[0]
        block[0] = base
        block[1:] = base + _turned(offsets, block[1:] - base, unit.fit_weights)


def errors(P: FloatArray, layout: Layout, targets: FloatArray) -> FloatArray:
    """Distance from each effector to its target, shape (E, m)."""
    return norms(P[layout.effector_rows] - targets)


def _wanted(P: FloatArray, pull: Pull, targets: FloatArray) -> FloatArray:
    """Where a joint is pulled to (3, m): the weighted centroid of ``Pull``."""
    point = targets[pull.effector] * pull.target_coef if pull.effector >= 0 else np.zeros(P.shape[1:])
    for row, coef in pull.units:
        point = point + coef * P[row]
    return point


def _turned(offsets: FloatArray, aims: FloatArray, weights: FloatArray) -> FloatArray:
    """``offsets`` (k, 3, m) turned about the origin by the rotation that best aims them along ``aims`` (k, 3,
    m): the one maximising ``sum_k weights[k] * aims[k] . (R offsets[k])``, ties broken toward no turn."""
    q = best_turn(offsets, aims, weights)
    rotated = quat_rotate(q.T[None], offsets.transpose(0, 2, 1))
    return np.asarray(rotated.transpose(0, 2, 1))


def best_turn(
    offsets: FloatArray, aims: FloatArray, weights: FloatArray, least_turn: float = _LEAST_TURN
) -> FloatArray:
    """The unit quaternion (w, x, y, z) per frame, shape (4, m), maximising ``sum_k weights[k] * aims[k] .
    (R offsets[k])`` plus ``least_turn`` of its scale times ``trace(R)`` (Horn 1987: the eigenvector of the
    largest eigenvalue of a symmetric 4x4 matrix).

    Parameters
    ----------
    offsets, aims : ndarray, shape (k, 3, m)
    weights : ndarray, shape (k,)
    least_turn : float
        How much a smaller turn counts, as a fraction of the aim's scale (see ``_LEAST_TURN``).
    """
    w = weights[:, None]
    S = [[(w * offsets[:, a] * aims[:, b]).sum(axis=0) for b in range(3)] for a in range(3)]  # (m,) each
    scale = (w * norms(offsets) * norms(aims)).sum(axis=0)
    (xx, xy, xz), (yx, yy, yz), (zx, zy, zz) = S
    N = np.empty((offsets.shape[2], 4, 4))
    N[:, 0, 0] = xx + yy + zz + 4.0 * least_turn * scale
    N[:, 1, 1] = xx - yy - zz
    N[:, 2, 2] = yy - xx - zz
    N[:, 3, 3] = zz - xx - yy
    N[:, 0, 1] = N[:, 1, 0] = yz - zy
    N[:, 0, 2] = N[:, 2, 0] = zx - xz
    N[:, 0, 3] = N[:, 3, 0] = xy - yx
    N[:, 1, 2] = N[:, 2, 1] = xy + yx
    N[:, 1, 3] = N[:, 3, 1] = zx + xz
    N[:, 2, 3] = N[:, 3, 2] = yz + zy
    _, vectors = np.linalg.eigh(N)
    return np.asarray(vectors[:, :, -1].T)
