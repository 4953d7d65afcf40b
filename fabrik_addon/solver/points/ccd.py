"""Cyclic Coordinate Descent, the baseline FABRIK is compared against (seed 004, Code 2.1).

One iteration visits the joints from the one nearest the end effector back to the root; at each it rotates
the rest of the chain about that joint by the smallest rotation that points the end effector at the target.
Same layout as ``core.geometry``: (joints, 3, frames).
"""

from __future__ import annotations

from ..core import FloatArray, turn_about


def ccd_iteration(P: FloatArray, lengths: FloatArray, targets: FloatArray, bases: FloatArray) -> None:
    """One CCD iteration of every frame, in place (``lengths`` and ``bases`` are kept by construction)."""
    del lengths, bases  # rotations keep every length and never move the root
    for pivot in range(P.shape[0] - 2, -1, -1):
        ccd_turn(P, pivot, targets)


def ccd_turn(P: FloatArray, pivot: int, targets: FloatArray) -> None:
    """One step of a CCD iteration, in place: turn the joints after ``pivot`` about it so the end effector
    points at ``targets`` (3, m)."""
    turn_about(P, pivot, P[-1] - P[pivot], targets - P[pivot])
