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
#: A chain this nearly straight (its end this share of its length from its root, or farther) whose target is
#: nearer is bent first toward the side it bends to; one exactly straight, toward the side the nearest frame's
#: start pose bends to. FABRIK from a (nearly) straight chain bends it toward wherever the target lies off its
#: line: captured legs locked straight at a landing (CMU 131_03), the hips lowered, flipped their knees'
#: bend planes on 3 frames where Blender's IK, deepening the bend they had, flipped none.
_NEARLY_STRAIGHT = 0.99


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
    if not (reach < _NEARLY_STRAIGHT * length * margin and distance < _NEAR_FULL_REACH * length * margin):
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
    (see ``_NEARLY_STRAIGHT``) with their targets (3, m) nearer their roots than their ends, toward the side
    they bend to (``_bend_sides``), into the arc whose chord is the distance to the target; return which."""
    chosen = np.zeros(P.shape[2], dtype=bool)
    if lengths.size < 2 or not unsolved.any():
        return chosen
    root = P[0]
    reach = norms(P[-1] - root)
    chosen = unsolved & (reach >= _NEARLY_STRAIGHT * float(lengths.sum())) & (norms(targets - root) < reach)
    if not chosen.any():
        return chosen
    sides = _bend_sides(P)
    chosen &= norms(sides) > 0.0
    picked = np.flatnonzero(chosen)
    if picked.size:
        ratio = norms(targets[:, picked] - root[:, picked]) / float(lengths.sum())
        P[:, :, picked] = bend(P[:, :, picked], arc_angle(ratio), unit_or(sides[:, picked], sides[:, picked]))
    return chosen


def _bend_sides(P: FloatArray) -> FloatArray:
    """Per frame, the side the chain ``P`` (n+1, 3, m; frames in order) bends to, (3, m): the offset from its
    line (root to end) of its joint farthest off it; for a chain on its line, the nearest frame's side made
    square to its own line; zero where no frame has one."""
    root = P[0]
    axis = unit_or(P[-1] - root, FALLBACK_DIRECTION[:, None])
    inner = P[1:-1] - root  # (n-1, 3, m)
    off = inner - dots(inner, axis[None])[:, None] * axis[None]
    frames = np.arange(P.shape[2])
    sides = np.asarray(off[np.argmax(norms(off), axis=0), :, frames].T)  # (3, m)
    own = ~_collinear(P)
    if own.all() or not own.any():
        return np.where(own[None], sides, 0.0)
    having = np.flatnonzero(own)
    after = np.clip(np.searchsorted(having, frames), 0, len(having) - 1)
    before = np.clip(after - 1, 0, len(having) - 1)
    nearer_before = np.abs(having[before] - frames) <= np.abs(having[after] - frames)
    borrowed = sides[:, np.where(nearer_before, having[before], having[after])]
    borrowed = borrowed - dots(borrowed, axis) * axis  # square to each frame's own line
    return np.where(own[None], sides, borrowed)


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
