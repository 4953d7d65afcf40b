"""FABRIK's forward and backward reaching passes (Aristidou & Lasenby 2011, Algorithm 1, lines 1.16-1.29).

Each pass works on one run of joints of many frames at once, in the layout of ``_geometry`` (joints, 3,
frames), and is written so that a tree of chains can reuse it: a branch is reached forward from its own end
effector up to a shared sub-base, and backward from the sub-base out to its end effector.
"""

from __future__ import annotations

import numpy as np

from ._geometry import FALLBACK_DIRECTION
from .validate import FloatArray

#: Added to every direction before it is normalised, scaled by the segment length: where two joints
#: coincide the direction is undefined and this picks one, elsewhere it moves a joint by 1e-12 of a segment.
_NUDGE = 1e-12 * FALLBACK_DIRECTION[:, None]


def _place(P: FloatArray, moved: int, fixed: int, length: float, nudge: FloatArray) -> None:
    """NearestPointSphere: put joint ``moved`` on the sphere of radius ``length`` around joint ``fixed``,
    at the point nearest to where it is now. The hot loop of the solver: few numpy calls, all elementwise
    (so a frame's result does not depend on how many frames are solved beside it)."""
    v = P[moved] - P[fixed]
    v += nudge
    squares = v * v
    v *= length / np.sqrt(squares[0] + squares[1] + squares[2])
    np.add(P[fixed], v, out=P[moved])


def forward_reach(P: FloatArray, lengths: FloatArray, end: FloatArray) -> None:
    """Stage 1, forward reaching: pin the last joint to ``end`` and pull the others after it, in place.

    Parameters
    ----------
    P : ndarray, shape (k+1, 3, m)
        Joint positions, modified in place.
    lengths : ndarray, shape (k,)
        Segment lengths.
    end : ndarray, shape (3, m)
        Where the last joint goes: the target.
    """
    P[-1] = end
    nudges = lengths[:, None, None] * _NUDGE
    for i, length in reversed(list(enumerate(lengths.tolist()))):
        _place(P, i, i + 1, length, nudges[i])


def backward_reach(P: FloatArray, lengths: FloatArray, base: FloatArray) -> None:
    """Stage 2, backward reaching: pin the first joint back to ``base`` and push the others after it.

    Parameters
    ----------
    P : ndarray, shape (k+1, 3, m)
        Joint positions, modified in place.
    lengths : ndarray, shape (k,)
        Segment lengths.
    base : ndarray, shape (3, m)
        The root's fixed position.
    """
    P[0] = base
    nudges = lengths[:, None, None] * _NUDGE
    for i, length in enumerate(lengths.tolist()):
        _place(P, i + 1, i, length, nudges[i])


def fabrik_iteration(P: FloatArray, lengths: FloatArray, targets: FloatArray, bases: FloatArray) -> None:
    """One full FABRIK iteration (forward then backward reaching) of every frame, in place."""
    forward_reach(P, lengths, targets)
    backward_reach(P, lengths, bases)
