"""FABRIK's forward and backward reaching passes (Aristidou & Lasenby 2011, Algorithm 1, lines 1.16-1.29).

Each pass works on one run of joints of many frames at once, in the layout of ``_geometry`` (joints, 3,
frames), and is written so that a tree of chains can reuse it: a branch is reached forward from its own end
effector up to a shared sub-base, and backward from the sub-base out to its end effector.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..core import FALLBACK_DIRECTION, FloatArray

#: Added to every direction before it is normalised, scaled by the segment length: where two joints
#: coincide the direction is undefined and this picks one, elsewhere it moves a joint by 1e-12 of a segment.
_NUDGE = 1e-12 * FALLBACK_DIRECTION[:, None]
#: Iterations on this many frames or fewer run frame by frame in plain floats (``fabrik_iteration``).
FLOAT_FRAMES = 4


def _place_all(P: FloatArray, moves: list[tuple[int, int, int]], lengths: FloatArray) -> None:
    """NearestPointSphere for each (moved, fixed, segment) of ``moves`` in turn: put joint ``moved`` on the
    sphere of radius ``lengths[segment]`` around joint ``fixed``, at the point nearest to where it is now.

    The hot loop of the solver. Numpy's per-call cost is most of its time, so the loop allocates nothing and
    looks nothing up that it can make once per pass; every call is elementwise, so a frame's result does not
    depend on how many frames are solved beside it."""
    frames = P.shape[2]
    joints = list(P)  # one (3, m) view per joint
    v, squares, size = np.empty((3, frames)), np.empty((3, frames)), np.empty(frames)
    x, y, z = squares
    radii, nudges = lengths.tolist(), list(lengths[:, None, None] * _NUDGE)
    for moved, fixed, segment in moves:
        here, there, length, nudge = joints[fixed], joints[moved], radii[segment], nudges[segment]
        np.subtract(there, here, v)
        v += nudge
        np.multiply(v, v, squares)
        np.add(x, y, size)
        size += z
        np.sqrt(size, size)
        np.divide(length, size, size)
        v *= size
        np.add(here, v, there)


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
    _place_all(P, [(i, i + 1, i) for i in reversed(range(lengths.size))], lengths)


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
    _place_all(P, [(i + 1, i, i) for i in range(lengths.size)], lengths)


def fabrik_iteration(P: FloatArray, lengths: FloatArray, targets: FloatArray, bases: FloatArray) -> None:
    """One full FABRIK iteration (forward then backward reaching) of every frame, in place.

    Up to ``FLOAT_FRAMES`` frames go through ``_frame_iteration`` one by one instead (numpy's per-call cost
    would be all of the time), with the same result to the bit."""
    if P.shape[2] <= FLOAT_FRAMES:
        one = plain_iteration(lengths)
        solved = [one(*frame) for frame in zip(P.T.tolist(), targets.T.tolist(), bases.T.tolist(), strict=True)]
        P[...] = np.transpose(solved)
        return
    forward_reach(P, lengths, targets)
    backward_reach(P, lengths, bases)


#: One FABRIK iteration of one frame on plain floats: (joints as lists [x, y, z] of the n+1 joints' coordinates,
#: target (3,), base (3,)) -> the joints, moved in place.
PlainIteration = Callable[[list[list[float]], list[float], list[float]], list[list[float]]]


def plain_iteration(lengths: FloatArray) -> PlainIteration:
    """``fabrik_iteration`` of one frame on plain floats, for a chain of segments ``lengths`` (n,): the same
    result to the bit."""
    radii, nudges = lengths.tolist(), (lengths[:, None] * _NUDGE[:, 0]).tolist()
    return lambda joints, target, base: _frame_iteration(joints, target, base, radii, nudges)


def _frame_iteration(
    joints: list[list[float]], target: list[float], base: list[float], lengths: list[float], nudge: list[list[float]]
) -> list[list[float]]:
    """``fabrik_iteration`` of one frame in plain floats: joints (3, n+1) as lists of x, y and z, the target
    and base (3,), lengths (n,), each segment's nudge (n, 3). Every operation is ``_place_all``'s, in its order,
    so rounding is the same: each joint put on the sphere around the one placed just before it (kept in
    ``fx``, ``fy``, ``fz``), at the point nearest to where it is."""
    x, y, z = joints
    fx, fy, fz = x[-1], y[-1], z[-1] = target
    for i in reversed(range(len(lengths))):
        nx, ny, nz = nudge[i]
        vx, vy, vz = x[i] - fx + nx, y[i] - fy + ny, z[i] - fz + nz
        scale = lengths[i] / math.sqrt(vx * vx + vy * vy + vz * vz)
        fx, fy, fz = x[i], y[i], z[i] = fx + vx * scale, fy + vy * scale, fz + vz * scale
    fx, fy, fz = x[0], y[0], z[0] = base
    for i in range(len(lengths)):
        nx, ny, nz = nudge[i]
        vx, vy, vz = x[i + 1] - fx + nx, y[i + 1] - fy + ny, z[i + 1] - fz + nz
        scale = lengths[i] / math.sqrt(vx * vx + vy * vy + vz * vz)
        fx, fy, fz = x[i + 1], y[i + 1], z[i + 1] = fx + vx * scale, fy + vy * scale, fz + vz * scale
    return [x, y, z]
