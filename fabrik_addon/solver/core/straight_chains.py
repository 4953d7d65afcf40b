"""Start poses made fit for FABRIK: straight and nearly straight chains bent before solving.

From a straight chain FABRIK cannot tell which way to bend (a target on its line) or creeps (a target just off
it near full reach); from a nearly straight one it bends toward wherever the target lies off its line, not the
way the chain already bends. ``unbend_starts`` bends such start poses first, in place, then FABRIK solves.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .geometry import (
    FALLBACK_DIRECTION,
    arc_angle,
    bend,
    cross,
    dots,
    is_straight_line,
    norms,
    perpendicular,
    unit_or,
)
from .validate import FloatArray

#: A straight chain whose target lies off its line this near its full reach (a fraction of its length) is bent
#: toward the target first: FABRIK from a straight chain creeps there (a straight leg toward a foot held at 99.8 %
#: of its reach took 317 iterations, 27 bent); farther in it bends the chain in a few, as the paper's example.
_NEAR_FULL_REACH = 0.95
#: How far a straight chain whose target lies on its own line is bent before solving (radians, whole chain).
_UNSTRAIGHTEN_RAD = 0.5
#: Straightness (the end's distance from the root over the chain's length) over which a chain whose target is
#: nearer than its end is bent deeper toward the side it bends to, by a share of the turn that rises from none at
#: the first to all of it at the second with a smooth step; the turn itself grows from nothing as the target comes
#: nearer than the end. So the start (and where FABRIK takes the knee) moves continuously with the goal and the
#: animation. FABRIK from a (nearly) straight chain bends it toward wherever the target lies off its line: captured
#: legs locked straight at a landing (CMU 131_03), the hips lowered, flipped their knees' bend planes on 3 frames
#: where Blender's IK, deepening the bend they had, flipped none; a rule that switched on at 0.99 (bending into a
#: whole new arc) made knees jump 2.3-2.6 cm on the frames where it toggled.
_NEARLY_STRAIGHT = (0.95, 0.99)
#: A chain's own bend side is sure where its joint farthest off its line is off it by this share of its length
#: (a knee bent about 2 degrees); less is noise on a limb captured locked straight.
_SIDE_SURE = 0.01


def unbend_starts(starts: FloatArray, goals: FloatArray, lengths: FloatArray, unsolved: NDArray[np.bool_]) -> None:
    """Bend, in place, the start poses ``starts`` (n+1, 3, m; frames in order) of the ``unsolved`` frames (m,)
    that FABRIK would not bend well toward their ``goals`` (3, m), the chain's segments ``lengths`` (n,): nearly
    straight ones toward the side they bend to, straight ones whose goal lies on their line a little, straight
    ones whose goal lies just off it near full reach into the arc FABRIK would creep to."""
    unsolved = unsolved & ~_deepened(starts, goals, lengths, unsolved)  # bent toward the side they bend to
    # A hair over the chain's length: its segments, measured, may be longer by a rounding.
    straight = unsolved & is_straight_line(starts, goals, reach=float(lengths.sum()) * (1.0 + 1e-12))
    if straight.any():
        starts[:, :, straight] = bend(starts[:, :, straight], _UNSTRAIGHTEN_RAD)
    near_full = norms(goals - starts[0]) >= _NEAR_FULL_REACH * float(lengths.sum())
    creeping = unsolved & ~straight & near_full
    aligned = np.flatnonzero(creeping & _collinear(starts)) if creeping.any() and lengths.size > 1 else np.empty(0, int)
    if aligned.size:
        starts[:, :, aligned] = _bent_toward(starts[:, :, aligned], goals[:, aligned], lengths)


def may_bend(start: FloatArray, goal: FloatArray, lengths: FloatArray) -> bool:
    """Whether ``unbend_starts`` might bend one frame's start pose (n+1, 3, 1) toward its goal (3, 1), the
    chain's segments ``lengths`` (n,), worked out on plain floats: False only where none of its cases can apply,
    with margins (it decides exactly). Each case needs one of: the chain nearly straight (``_NEARLY_STRAIGHT``),
    the goal near full reach (``_NEAR_FULL_REACH``), or the goal on the line from the root to the end (a
    straight chain's). A bent chain toward a goal well inside its reach, as a dragged one usually is, has none."""
    (rx, ry, rz), (ex, ey, ez) = start[0, :, 0].tolist(), start[-1, :, 0].tolist()
    gx, gy, gz = goal[:, 0].tolist()
    length = float(lengths.sum())
    ax, ay, az = ex - rx, ey - ry, ez - rz
    reach = math.sqrt(ax * ax + ay * ay + az * az)
    tx, ty, tz = gx - rx, gy - ry, gz - rz
    distance = math.sqrt(tx * tx + ty * ty + tz * tz)
    margin = 1.0 - 1e-9
    if not (reach < _NEARLY_STRAIGHT[0] * length * margin and distance < _NEAR_FULL_REACH * length * margin):
        return True
    if not reach > 1e-200:  # no line from the root to the end to measure from
        return True
    cx, cy, cz = ty * az - tz * ay, tz * ax - tx * az, tx * ay - ty * ax  # |to goal x line| = off-line * reach
    off_line = math.sqrt(cx * cx + cy * cy + cz * cz) / reach  # infinite where the squares overflow: may bend
    return not (math.isfinite(off_line) and off_line > 2.0 * (1e-9 + 1e-20) * max(length, distance) + 1e-300)


def _collinear(P: FloatArray) -> NDArray[np.bool_]:
    """Per frame, whether every joint of the chains ``P`` (n+1, 3, m) lies on the line from the root to the
    last joint (to a millionth of its length, float32 poses): a straight limb, as a leg at heel strike."""
    root, axis = P[0], unit_or(P[-1] - P[0], FALLBACK_DIRECTION[:, None])
    off_line = norms(cross(P[1:-1] - root, axis[None], axis=1))  # (n-1, m)
    return np.asarray(off_line.max(axis=0) <= 1e-6 * norms(P[-1] - root))


def _deepened(
    P: FloatArray, targets: FloatArray, lengths: FloatArray, unsolved: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """Bend in place the ``unsolved`` chains of ``P`` (n+1, 3, m; frames in order) that are nearly straight
    (``_NEARLY_STRAIGHT``) with their targets (3, m) nearer their roots than their ends, deeper toward the side
    they bend to (``_bend_sides``): segment ``i`` of ``n`` turned toward it by ``(i + 1) / n`` of the turn that
    takes an arc of the chain's length from a chord as long as the chain's reach to one as long as the distance
    to the target (``bend``'s arc), times the share the straightness gives; return which frames moved."""
    chosen = np.zeros(P.shape[2], dtype=bool)
    if lengths.size < 2 or not unsolved.any():
        return chosen
    root, total = P[0], float(lengths.sum())
    reach = norms(P[-1] - root)
    distance = norms(targets - root)
    low, high = _NEARLY_STRAIGHT
    share = _smooth_step((reach / total - low) / (high - low))
    chosen = unsolved & (share > 0.0) & (distance < reach)
    if not chosen.any():
        return chosen
    sides = _bend_sides(P)
    chosen &= norms(sides) > 0.0
    picked = np.flatnonzero(chosen)
    if picked.size:
        ratio = np.minimum(reach[picked] / total, 1.0)
        turn = share[picked] * (arc_angle(distance[picked] / total) - arc_angle(ratio))
        P[:, :, picked] = _turned_toward(P[:, :, picked], np.maximum(turn, 0.0), sides[:, picked])
    return chosen


def _turned_toward(P: FloatArray, turn: FloatArray, sides: FloatArray) -> FloatArray:
    """Chains ``P`` (n+1, 3, k) with segment ``i`` of ``n`` turned by ``turn * (i + 1) / n`` (radians, (k,)) about
    the axis square to their line (root to end) and to ``sides`` (3, k), the way that takes the line toward the
    side: each chain bent further the way it bends, as ``bend`` bends a straight one."""
    root = P[0]
    line = unit_or(P[-1] - root, FALLBACK_DIRECTION[:, None])
    side = sides - dots(sides, line) * line
    axis = unit_or(cross(line, side, axis=0), perpendicular(line))
    segments = np.diff(P, axis=0)  # (n, 3, k)
    angles = turn[None] * (np.arange(1, len(segments) + 1) / len(segments))[:, None]  # (n, k)
    cos, sin = np.cos(angles)[:, None], np.sin(angles)[:, None]
    along = dots(segments, axis[None])[:, None] * axis[None]
    turned = segments * cos + cross(axis[None], segments, axis=1) * sin + along * (1 - cos)
    return np.concatenate([P[:1], root[None] + np.cumsum(turned, axis=0)])


def _smooth_step(x: FloatArray) -> FloatArray:
    """3 x^2 - 2 x^3 of ``x`` clipped to [0, 1]: from 0 to 1 with a slope of 0 at both ends."""
    t = np.clip(x, 0.0, 1.0)
    return np.asarray(t * t * (3.0 - 2.0 * t))


def _bend_sides(P: FloatArray) -> FloatArray:
    """Per frame, the side the chain ``P`` (n+1, 3, m; frames in order) bends to, a unit vector (3, m): the
    direction from its line (root to end) of its joint farthest off it, where that joint is off it by
    ``_SIDE_SURE`` of the chain's length or more; where it is less (a leg captured locked straight, off its line
    by float noise in any direction), blended toward the sides of the nearest frames before and after that have
    a sure one (blended by how near each is: a run of straight frames turns from one to the other), made square
    to its own line; zero where no frame has a side."""
    root = P[0]
    axis = unit_or(P[-1] - root, FALLBACK_DIRECTION[:, None])
    inner = P[1:-1] - root  # (n-1, 3, m)
    off = inner - dots(inner, axis[None])[:, None] * axis[None]
    frames = np.arange(P.shape[2])
    sides = np.asarray(off[np.argmax(norms(off), axis=0), :, frames].T)  # (3, m)
    size = norms(sides)
    own = sides / np.where(size > 0.0, size, 1.0)
    sure = _smooth_step(size / (_SIDE_SURE * norms(np.diff(P, axis=0)).sum(axis=0)))
    having = np.flatnonzero(sure >= 1.0)
    if having.size in (0, len(frames)):
        return np.asarray(own)
    count = np.searchsorted(having, frames)  # frames with a sure side before each frame
    before, after = np.clip(count - 1, 0, len(having) - 1), np.clip(count, 0, len(having) - 1)
    # Before the first frame with a sure side, its side; after the last, the last's; between two, a blend.
    gap_before, gap_after = np.abs(frames - having[before]), np.abs(having[after] - frames)
    apart = np.maximum(gap_before + gap_after, 1)
    toward_after = np.where(before == after, 0.0, gap_before / apart)
    borrowed = (1.0 - toward_after) * own[:, having[before]] + toward_after * own[:, having[after]]
    borrowed = borrowed - dots(borrowed, axis) * axis  # square to each frame's own line
    mixed = sure * own + (1.0 - sure) * unit_or(borrowed, own)
    return np.asarray(unit_or(mixed, own))


def _bent_toward(P: FloatArray, targets: FloatArray, lengths: FloatArray) -> FloatArray:
    """Straight chains (n+1, 3, k) whose targets (3, k) lie off their line near their full reach, bent into an
    arc whose chord is the distance to the target, in the plane of the line and the target, away from the
    target's side: where FABRIK from the straight chain ends, reached in a few iterations rather than creeping
    there for hundreds."""
    root = P[0]
    axis = unit_or(P[-1] - root, FALLBACK_DIRECTION[:, None])
    to_target = targets - root
    off = to_target - dots(to_target, axis)[None] * axis
    ratio = norms(to_target) / float(lengths.sum())
    return bend(P, arc_angle(ratio), unit_or(-off, perpendicular(axis)))
