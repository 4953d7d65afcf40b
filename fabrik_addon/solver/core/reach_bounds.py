"""Compute bounds that no pose of a chain within its IK limits crosses, given its rest geometry and limits: how
near to its root's head and how far from it the tip can come, and which way it can point where the root is locked
or limited. A goal beyond them is out of reach whatever a solver does, and ``ReachBounds.miss`` is a distance
every tip stays from it. They hold for every chain; ``reach`` gives the exact reach of some (limbs).

They come from the angles the limits allow between bones. A bone's local rotation ``q = swing * twist`` (see
``limits``) turns any vector by at most the sum of the two turns, and its offset (along its own Y axis, or
``rho`` off it) by at most its swing's turn plus ``2 asin(rho sin(t / 2))`` for a twist by ``t``. The largest
swing the limits allow is the farthest point of its allowed ``(x, z) = sin(a / 2) (cos p, sin p)`` from the
origin: a corner of the box of the bounds where an axis is free or neither is limited, the larger semi-axis of
the ellipse's quarter where both are. So the angle between the directions ``u_j`` and ``u_k`` (in the base frame)
of two bones that carry a length, one after the other, is at most their angle at rest plus what ``k``'s rotation
turns its offset plus the whole turn of each bone of no length between them, and at least the angle at rest minus
the same; between any two such bones, at most the sum of those along the way (``spread``).

- Nearest: for any unit ``w``, ``|tip| >= tip . w >= sum_k l_k cos(min(pi, angle(u_k, w)))``. With ``w`` on
  the arc from ``u_j`` toward ``u_j+1``, ``c`` from ``u_j`` (or ``u_j+1`` itself, where they are closer), each
  angle is at most the spread from ``u_k`` to ``u_j`` plus ``c``, or to ``u_j+1`` plus the largest angle between
  the two less ``c``: each ``(j, c)`` bounds the distance, and the best of a refined sweep over ``c`` is taken.
  A sweep only chooses among bounds, each of which holds.
- Farthest: two bones in a row at most ``sqrt(l_j^2 + l_k^2 + 2 l_j l_k cos a)`` apart for ``a`` the least angle
  between them; the least sum of those and the single lengths over the ways to split the chain into pairs.
- Direction: the first bone's direction lies within the largest turn of its rotation (and those of bones of no
  length before it) of its rest direction ``r``, every other within the spread from it more: within ``theta_k``
  of ``r``. So ``tip . v <= h(v) = sum_k l_k cos(max(0, angle(v, r) - theta_k))`` for any unit ``v``, and a goal
  ``g`` lies at least ``g . v - h(v)`` from every tip. As ``h`` depends on ``angle(v, r)`` only, the best ``v``
  lies in the plane of ``r`` and ``g``, on ``g``'s side: a sweep over its angle from ``r`` finds it (again, any
  ``v`` gives a bound that holds). With a free root every ``theta_k`` is a half turn and this adds nothing.

Where ``reach`` knows the reach exactly, its bounds are taken where they are closer. The angles hold what the
limits' shapes do not (an ellipse is taken as a disc of its larger semi-axis, one side of a hinge as both): the
bounds then lie beyond the reach, never inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from itertools import pairwise
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from .geometry import cross, inner_radius
from .limits import JointLimits
from .reach import ChainReach
from .rotations import quat_normalize
from .validate import FloatArray

#: The sweeps of ``c`` (nearest) and of ``v``'s angle from ``r`` (direction): each value of either gives a bound
#: that holds, so a coarse sweep only leaves them a little looser. ``c`` is refined ``_ROUNDS`` times about its
#: best, each round spanning two steps of the one before.
_SWEEP = 33
_ROUNDS = 4
_DIRECTIONS = 181
#: ``seek_extremes``: the poses it starts from (the rest pose, the limits' bent one, the others drawn at random
#: within the limits, seeded), and the rounds of one FABRIK iteration and one least-squares step each makes.
_STARTS = 24
_SEEK_ROUNDS = 60
_SEED = 0
#: It stops early once ``_STALL`` steps have gained no more than ``_GAIN`` of twice the chain's length (or the
#: tip is that near the root).
_STALL = 16
_GAIN = 1e-12
_Y = np.array([0.0, 1.0, 0.0])


@dataclass(frozen=True)
class ReachBounds:
    """Bounds that no tip of a chain posed within its limits crosses (see the module's notes).

    Attributes
    ----------
    nearest, farthest : float
        Scene units: no pose puts the tip nearer the root's head, or farther from it.
    axis : ndarray, shape (3,)
        The rest direction ``r`` of the first bone that carries a length, in the base frame.
    caps : ndarray, shape (n,)
        For each bone that carries a length, the largest angle between its direction and ``axis`` (radians, at
        most pi: all of them with a free root).
    lengths : ndarray, shape (n,)
        Those bones' lengths.
    """

    nearest: float
    farthest: float
    axis: FloatArray
    caps: FloatArray
    lengths: FloatArray

    def miss(self, goals: npt.ArrayLike) -> FloatArray:
        """Compute how far at least every tip stays from each goal (F, 3) in the base frame: the largest of its
        distances beyond the nearest and the farthest bound and of what the direction bound gives (F,);
        negative or zero where no bound rules the goal out."""
        goals = np.asarray(goals, dtype=np.float64)
        distance = np.linalg.norm(goals, axis=-1)
        miss = np.maximum(self.nearest - distance, distance - self.farthest)
        if self.caps.size == 0 or self.caps.min() >= np.pi:
            return np.asarray(miss, dtype=np.float64)
        angle = np.arctan2(np.linalg.norm(cross(goals, self.axis), axis=-1), goals @ self.axis)
        psi = np.linspace(0.0, np.pi, _DIRECTIONS)
        support = np.cos(np.maximum(0.0, psi[:, None] - self.caps)) @ self.lengths  # h(v), (D,)
        aside = (distance[:, None] * np.cos(psi - angle[:, None]) - support).max(axis=1)
        return np.asarray(np.maximum(miss, aside), dtype=np.float64)


def reach_bounds(
    rest_rotations: FloatArray, offsets: FloatArray, limits: JointLimits, reach: ChainReach
) -> ReachBounds:
    """Compute the ``ReachBounds`` of a chain given each bone's rest frame relative to its parent's (m, 3, 3), its
    offset to the next joint in its own rest frame (m, 3), its limits and its reach (``chain_reach``: its bounds
    are taken where exact)."""
    lengths = np.linalg.norm(offsets, axis=1)
    carried = np.flatnonzero(lengths > 0.0)
    if carried.size == 0:
        return ReachBounds(0.0, 0.0, np.array([0.0, 1.0, 0.0]), np.zeros(0), np.zeros(0))
    axes = offsets / np.where(lengths > 0.0, lengths, 1.0)[:, None]
    swing, twist = _largest_turns(limits)
    off_y = np.hypot(axes[:, 0], axes[:, 2])  # how far each offset lies off its bone's Y axis (unit)
    moves = np.minimum(np.pi, swing + 2.0 * np.arcsin(np.minimum(1.0, off_y * np.sin(0.5 * twist))))
    whole = np.minimum(np.pi, swing + twist)
    most, least = [], []
    for a, b in pairwise(carried):
        between = reduce(np.matmul, rest_rotations[a + 1 : b + 1], np.eye(3))
        at_rest = _angle(axes[a], between @ axes[b])
        spread = float(whole[a + 1 : b].sum() + moves[b])
        most.append(min(np.pi, at_rest + spread))
        least.append(max(0.0, at_rest - spread))
    first = carried[0]
    axis = reduce(np.matmul, rest_rotations[: first + 1], np.eye(3)) @ axes[first]
    spreads = np.concatenate([[0.0], np.cumsum(most)])
    caps = np.minimum(np.pi, float(whole[:first].sum() + moves[first]) + spreads)
    kept = lengths[carried]
    nearest = max(_nearest(kept, np.array(most)), inner_radius(lengths))
    farthest = _farthest(kept, np.array(least))
    if reach.exact:
        nearest, farthest = max(nearest, reach.nearest), min(farthest, reach.farthest)
    return ReachBounds(float(nearest), float(farthest), axis, caps, kept)


def _largest_turns(limits: JointLimits) -> tuple[FloatArray, FloatArray]:
    """Each bone's largest swing and largest twist its limits allow (radians, (m,) each)."""
    low, high = limits.swing_bounds(slice(None))
    held = limits.lock | (limits.use_limit & (limits.minimum == 0.0) & (limits.maximum == 0.0))
    high, low = np.where(held, 0.0, high), np.where(held, 0.0, -low)  # how far each side reaches
    ellipse = limits.use_limit[:, 0] & limits.use_limit[:, 2] & ~held[:, 0] & ~held[:, 2]
    radius = np.zeros(limits.bones)
    for x in (high[:, 0], low[:, 0]):
        for z in (high[:, 2], low[:, 2]):
            radius = np.maximum(radius, np.where(ellipse, np.maximum(x, z), np.hypot(x, z)))
    twist_limit = np.maximum(-limits.minimum[:, 1], limits.maximum[:, 1])
    twist = np.where(held[:, 1], 0.0, np.where(limits.use_limit[:, 1], twist_limit, np.pi))
    return 2.0 * np.arcsin(np.minimum(1.0, radius)), twist


def _nearest(lengths: FloatArray, most: FloatArray) -> float:
    """The largest bound on the tip's distance from the root of the sweeps over ``(j, c)`` (see the module's
    notes), given the lengths (n,) and the largest angles between bones in a row (n - 1,)."""
    bones = len(lengths)
    if bones == 1:
        return float(lengths[0])
    spreads = np.concatenate([[0.0], np.cumsum(most)])
    k = np.arange(bones)

    def bounds(c: FloatArray) -> FloatArray:
        """The bound for each ``j`` (rows) and ``c`` (columns), (n - 1, C)."""
        j = np.arange(bones - 1)[:, None, None]
        before = spreads[j] - spreads[k] + c[..., None]
        after = spreads[k] - spreads[j + 1] + most[j] - c[..., None]
        angles = np.minimum(np.pi, np.where(k <= j, before, after))
        return np.asarray(np.cos(angles) @ lengths, dtype=np.float64)

    step = most / (_SWEEP - 1)
    c = np.linspace(0.0, 1.0, _SWEEP) * most[:, None]
    best = c[np.arange(bones - 1), np.argmax(bounds(c), axis=1)]
    for _ in range(_ROUNDS):
        c = np.clip(best[:, None] + np.linspace(-1.0, 1.0, _SWEEP) * step[:, None], 0.0, most[:, None])
        best = c[np.arange(bones - 1), np.argmax(bounds(c), axis=1)]
        step = step * 2.0 / (_SWEEP - 1)
    return float(bounds(best[:, None]).max())


def _farthest(lengths: FloatArray, least: FloatArray) -> float:
    """The least sum of single lengths and pairs' largest spans over the ways to split the chain into singles and
    pairs, given the lengths (n,) and the least angles between bones in a row (n - 1,)."""
    sums = [0.0, float(lengths[0])]
    for k in range(1, len(lengths)):
        a, b = lengths[k - 1], lengths[k]
        pair = np.sqrt(a * a + b * b + 2.0 * a * b * np.cos(least[k - 1]))
        sums.append(min(sums[-1] + float(b), sums[-2] + float(pair)))
    return sums[-1]


def _angle(a: FloatArray, b: FloatArray) -> float:
    """The angle between two unit vectors (radians), exact near 0 and pi."""
    return float(np.arctan2(np.linalg.norm(cross(a, b)), a @ b))


@dataclass(frozen=True)
class Extremes:
    """Poses found nearest to the root and farthest from it, and the tip's distance in each.

    Attributes
    ----------
    nearest, farthest : float
    near, far : ndarray, shape (m, 4)
        Local rotations, within the limits but the root's (which ``seek_extremes`` leaves free).
    """

    nearest: float
    farthest: float
    near: FloatArray
    far: FloatArray


class Steps(Protocol):
    """A chain's steps as ``seek_extremes`` takes them (``bones.chain_steps.ChainSteps``): forward kinematics of
    local rotations (m, 4, F) and Y scales (m, F) into poses with ``joints`` (m+1, 3, F), and a FABRIK iteration
    and a least-squares step from such poses toward goals (3, F)."""

    def pose(self, local: FloatArray, scales: FloatArray) -> Any: ...

    def fabrik(self, posed: Any, goals: FloatArray) -> Any: ...

    def least_squares(self, posed: Any, goals: FloatArray) -> Any: ...


def free_root(limits: JointLimits) -> JointLimits:
    """The limits with the root's lifted: its rotation turns the tip about the root's head, never nearer or
    farther, so a search for the reach's extremes need not keep it."""
    lock, use_limit = limits.lock.copy(), limits.use_limit.copy()
    lock[0] = use_limit[0] = False
    return JointLimits(lock, use_limit, limits.minimum, limits.maximum, limits.stretch)


def seek_extremes(steps: Steps, limits: JointLimits) -> Extremes:
    """Search poses within ``limits`` that put the tip nearest to the root's head and farthest from it, given the
    steps of the chain with a free root (``free_root``): from ``_STARTS`` poses, up to ``_SEEK_ROUNDS`` rounds of
    one FABRIK iteration and one least-squares step toward the root's head, and toward a point twice the chain's
    length away along the tip's line (see ``_STALL``); the nearest and the farthest pose seen. A search, not a
    bound: the reach may extend beyond what it finds (``reach_bounds`` gives what it cannot exceed)."""
    bones = limits.bones
    starts = quat_normalize(np.random.default_rng(_SEED).normal(size=(_STARTS, bones, 4)))
    starts[0], starts[1] = np.array([1.0, 0.0, 0.0, 0.0]), limits.bent()
    local = np.ascontiguousarray(limits.clamp(starts).transpose(1, 2, 0))
    scales = np.ones((bones, _STARTS))
    segments = np.diff(steps.pose(local[..., :1], scales[:, :1]).joints[..., 0], axis=0)
    away = 2.0 * float(np.linalg.norm(segments, axis=1).sum())
    found = []
    for sign in (-1.0, 1.0):
        posed, best, best_local, since = steps.pose(local, scales), -np.inf, local[..., 0], 0
        for step in (steps.fabrik, steps.least_squares) * _SEEK_ROUNDS + (None,):
            tips = posed.joints[-1]
            distance = np.sqrt(np.einsum("if,if->f", tips, tips))
            k = int(np.argmax(sign * distance))
            since = 0 if sign * distance[k] > best + _GAIN * away else since + 1
            if sign * distance[k] > best:
                best, best_local = sign * float(distance[k]), posed.local[..., k].copy()
            if step is None or since >= _STALL or (sign < 0 and -best <= _GAIN * away):
                break  # no nearer than the root's head
            along = np.where(distance > 0.0, tips / np.where(distance > 0.0, distance, 1.0), _Y[:, None])
            posed = step(posed, along * away if sign > 0 else np.zeros_like(tips))
        found.append((sign * best, np.asarray(best_local, dtype=np.float64)))
    (nearest, near), (farthest, far) = found
    return Extremes(nearest, farthest, near, far)
