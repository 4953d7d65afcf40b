"""Compute which bones are the feet of a rig given where its bones go: on each leg, the highest bone whose tail
touches down (its tail the ball of the foot, its head the ankle), left and right.

A BVH bone is named after the joint at its head, so a clip's foot is "LeftAnkle", "LeftFoot" or "Foot_L" by
clip; what a foot does, not its name, finds it. Heights are world heights (+Z up) in scene units.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: A bone's tail touches down where its low height (the 10th percentile of its heights: where it rests, but for
#: noise) is within this share of the rig's standing height of the floor: 5 cm on a 1.7 m figure, between the
#: ball of a foot (0-3 cm) and its ankle (7-10 cm).
TOUCH = 0.03


@dataclass(frozen=True)
class FootBones:
    """The feet found, and what each bone does, for naming the bone a wrong foot probably meant.

    Attributes
    ----------
    feet : list of int
        The feet's bones (indices), left first: on each leg the highest bone whose tail touches down.
    touches : ndarray of bool, shape (B,)
        Whether each bone's tail touches down.
    above_floor : ndarray, shape (B,)
        How high each bone's tail rests above the floor (scene units).
    """

    feet: list[int]
    touches: npt.NDArray[np.bool_]
    above_floor: npt.NDArray[np.float64]


def foot_bones(tails: npt.ArrayLike, heights: npt.ArrayLike, parents: Sequence[int], names: Sequence[str]) -> FootBones:
    """Compute the feet given each bone's tail on sampled frames (F, B, 3), the rig's top on each of them (F,),
    each bone's parent (an index, -1 for a root) and name (for its side, ``side``).

    A bone touches down where its tail rests within ``TOUCH`` of the rig's standing height above the floor (the
    lowest any tail rests); a foot touches down and its parent does not. Feet on the same side as another foot
    of lower rest are left out (hands on the floor, a second toe), so a biped gets one each side.
    """
    points = np.asarray(tails, dtype=np.float64)
    rest = np.percentile(points[:, :, 2], 10.0, axis=0)  # (B,)
    floor = float(rest.min())
    height = float(np.median(np.asarray(heights, dtype=np.float64))) - floor
    above = rest - floor
    touches = above <= TOUCH * max(height, 1e-12)
    feet = [b for b in range(len(names)) if touches[b] and not (parents[b] >= 0 and touches[parents[b]])]
    by_side: dict[str, int] = {}
    for b in sorted(feet, key=lambda b: above[b]):
        by_side.setdefault(side(names[b]) or f"#{b}", b)
    ordered = sorted(by_side.items(), key=lambda item: {"left": 0, "right": 1}.get(item[0], 2))
    return FootBones([b for _, b in ordered], touches, above)


#: Limb words that a one-letter side may lead, as CMU's skeleton names them (``lfoot``, ``rfemur``).
_LIMB = r"(?:foot|femur|tibia|toes?|hip\w*|knee|ankle|leg|upleg|thigh|shin|calf|humerus|radius|wrist|hand|arm)"
_LEFT = re.compile(rf"(?:^|[^a-z])(?:left|l)(?:[^a-z]|$)|^l(?={_LIMB})|left", re.IGNORECASE)
_RIGHT = re.compile(rf"(?:^|[^a-z])(?:right|r)(?:[^a-z]|$)|^r(?={_LIMB})|right", re.IGNORECASE)


def side(name: str) -> str | None:
    """ "left" or "right" as a bone's name says (``LeftFoot``, ``foot.L``, ``CC_Base_L_Foot``, ``lfoot``), or
    None."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)  # LeftFoot -> Left Foot
    left, right = bool(_LEFT.search(spaced)), bool(_RIGHT.search(spaced))
    return "left" if left and not right else "right" if right and not left else None


#: A foot bone this long or longer, in lengths of the leg above it, is a shin (a foot is 0.1 to 0.3 of it).
_SHIN = 0.5
#: A foot whose tail rests this high above the floor or higher, in leg lengths, never comes near it.
_NEVER_DOWN = 0.25
#: Where the bone just above a foot is shorter than this share of the one above that, it is a foot itself (a shin
#: is about as long as a thigh, a foot a third of a shin) and the bone named is the toes.
_TOES = 0.5


def check_foot(
    name: str,
    ball: npt.ArrayLike,
    ankle: npt.ArrayLike,
    above: npt.ArrayLike,
    floor: float,
    *,
    child: str | None,
    parent: str | None,
) -> None:
    """Check that a bone named as a foot is one given its tail's (``ball``) and head's (``ankle``) paths (F, 3),
    the lengths of the leg's segments above it (root first, those of zero length left out) and the floor (scene
    units): not a shin (a bone as long as half the leg above it, its tail the ankle), not the toes (the bone
    above it short next to the one above that, as a foot is next to a shin), not a bone whose tail never comes
    near the floor.

    Raises
    ------
    ValueError
        Naming the bone it probably meant (``child``, the bone below it, or ``parent``, the one above).
    """
    tail, head = np.asarray(ball, dtype=np.float64), np.asarray(ankle, dtype=np.float64)
    segments = np.asarray(above, dtype=np.float64)
    reach = float(segments.sum())
    length = float(np.linalg.norm(tail[0] - head[0]))
    rests = float(np.percentile(tail[:, 2], 10.0)) - floor
    below = f"'{child}', the bone below it," if child else "the bone below it"
    if length >= _SHIN * reach:
        raise ValueError(
            f"bone '{name}' is as long as half the leg above it or longer: a shin, its tail the ankle, not the ball "
            f"of the foot; the foot is probably {below} (name the bone from the ankle to the ball of the foot)"
        )
    if len(segments) >= 2 and segments[-1] < _TOES * segments[-2]:
        above_it = f"'{parent}'" if parent else "the bone above it"
        raise ValueError(
            f"bone '{name}' hangs from a bone a third as long as the one above that, as toes hang from a foot: the "
            f"foot is probably {above_it} (the bone from the ankle to the ball of the foot, whose tail Plant Feet "
            "holds)"
        )
    if rests >= _NEVER_DOWN * reach:
        raise ValueError(
            f"bone '{name}' never comes near the floor (its tail rests {rests / reach:.2f} leg lengths above it): "
            f"not a foot; name the bone from the ankle to the ball of the foot (perhaps {below})"
        )
