"""Compute which bones are the feet of a rig given where its bones go: each leg ends in a bone whose tail rests
on the floor (the toes, or the foot where it has none), and its foot is the bone below its two long bones (thigh
and shin), its tail the ball of the foot; left then right. And check that a bone named as a foot is one.

A BVH bone is named after the joint at its head, so a clip's foot is "LeftAnkle", "LeftFoot" or "Foot_L" by
clip; what the rig does and how it is built, not its names, find it (names only say which side). Heights are
world heights (+Z up) in scene units.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: A leg's last bone rests on the floor: its tail's low height (the 10th percentile of its heights: where it
#: rests, but for noise) within this share of the rig's standing height of the lowest one's (5 cm on 1.7 m).
TOUCH = 0.03
#: On a leg, from where it leaves the other legs, a segment at least this share of its longest is a long bone
#: (thigh, shin); a foot is a third of a shin.
_LONG = 0.5


@dataclass(frozen=True)
class FootBones:
    """The feet found.

    Attributes
    ----------
    feet : list of int
        The feet's bones (indices into the bones), left first.
    """

    feet: list[int]


def foot_bones(
    tails: npt.ArrayLike,
    heights: npt.ArrayLike,
    heads_at_rest: npt.ArrayLike,
    parents: Sequence[int],
    names: Sequence[str],
) -> FootBones:
    """Compute the feet given each bone's tail on sampled frames (F, B, 3), the rig's top on each (F,), each
    bone's head at rest (B, 3; any space: only distances between heads count), its parent (an index, -1 for a
    root) and its name (for its side, ``side``; else the side of the rest head's X, Blender's left being +X).

    The legs end in bones without children whose tails rest on the floor (within ``TOUCH`` of the rig's
    standing height of the lowest); up each such leg from where it leaves the others, the segments from head to
    head that are at least half its longest are its long bones, and the foot is the bone whose head ends the
    last of them. Per side, the foot whose leg rests lowest.
    """
    points = np.asarray(tails, dtype=np.float64)
    rest = np.percentile(points[:, :, 2], 10.0, axis=0)  # (B,)
    heads = np.asarray(heads_at_rest, dtype=np.float64)
    has_children = np.zeros(len(names), dtype=bool)
    has_children[[p for p in parents if p >= 0]] = True
    leaves = np.flatnonzero(~has_children)
    floor = float(rest[leaves].min())
    height = float(np.median(np.asarray(heights, dtype=np.float64))) - floor
    down = [int(b) for b in leaves if rest[b] - floor <= TOUCH * max(height, 1e-12)]
    paths = {b: _path(b, parents) for b in down}
    shared = set.intersection(*(set(path) for path in paths.values())) if len(paths) > 1 else set()
    lowest: dict[str, tuple[float, int]] = {}
    for leaf, path in paths.items():
        leg = [b for b in path if b not in shared] if shared else path[1:]
        foot = _below_long_bones(leg, heads, parents)
        if foot is None:
            continue
        where = side(names[foot]) or ("left" if heads[foot, 0] > 0 else "right")
        if where not in lowest or rest[leaf] < lowest[where][0]:
            lowest[where] = (float(rest[leaf]), foot)
    return FootBones([lowest[where][1] for where in ("left", "right") if where in lowest])


def _path(bone: int, parents: Sequence[int]) -> list[int]:
    """The bones from the root down to ``bone``."""
    path = [bone]
    while parents[path[-1]] >= 0:
        path.append(parents[path[-1]])
    return path[::-1]


def _below_long_bones(leg: list[int], heads: npt.NDArray[np.float64], parents: Sequence[int]) -> int | None:
    """The bone of ``leg`` (bones from its top down) whose head ends its last long segment (head to head)."""
    segments = [(float(np.linalg.norm(heads[b] - heads[parents[b]])), b) for b in leg if parents[b] >= 0]
    if not segments:
        return None
    longest = max(length for length, _ in segments)
    return [b for length, b in segments if length >= _LONG * longest][-1]


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
