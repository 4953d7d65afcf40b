"""The exact step for a chain of two segments (a leg's thigh and shin, an arm's upper arm and forearm): where
FABRIK's iterations end, computed at once.

FABRIK on two segments moves every joint along lines through the root, the target and the middle joint, so the
middle joint (the knee) stays in the plane they span and on its side of the line from the root to the target;
the iterations end with the end on the target and the knee on the circle that the two lengths allow, in that
plane, on that side. This puts it there in one step, to rounding.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..core import FloatArray, dots, norms

#: A knee nearer the line from the root to the target than this share of the first segment has no side to keep:
#: such a frame is iterated as any other (FABRIK then finds one).
_ON_THE_LINE = 1e-9


def two_bone_step(P: FloatArray, lengths: FloatArray, targets: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Compute the poses FABRIK's iterations end in, given two-segment start poses ``P`` (3, 3, m), the segments'
    ``lengths`` (2,) and targets (3, m) each within the chain's reach (no farther than the two lengths together,
    no nearer than their difference).

    Returns
    -------
    joints : ndarray, shape (3, 3, m)
        The start poses with the knee on its circle, on its side, and the end on the target, where ``done``.
    done : ndarray of bool, shape (m,)
        Frames whose knee had a side to keep (see ``_ON_THE_LINE``) and whose target is off the root.
    """
    root, knee = P[0], P[1]
    to_target = targets - root
    distance = norms(to_target)
    along = to_target / np.where(distance > 0.0, distance, 1.0)
    bent = knee - root
    side = bent - dots(bent, along) * along
    offset = norms(side)
    first, second = float(lengths[0]), float(lengths[1])
    done = (offset > _ON_THE_LINE * first) & (distance > 0.0)
    cos_a = np.clip((first * first + distance * distance - second * second) / (2.0 * first * distance), -1.0, 1.0)
    sin_a = np.sqrt(1.0 - cos_a * cos_a)
    unit_side = side / np.where(done, offset, 1.0)
    joints = P.copy()
    joints[1] = np.where(done, root + first * (cos_a * along + sin_a * unit_side), knee)
    joints[2] = np.where(done, targets, P[2])
    return joints, done
