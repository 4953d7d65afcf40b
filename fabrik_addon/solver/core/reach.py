"""Compute how near to its root and how far from it a chain's tip can come under its bones' IK limits, and a
pose at each extreme, given the chain's rest geometry and limits: a target nearer or farther is out of reach
whatever a solver does.

The root bone's own rotation turns the tip about the root's head, never nearer or farther. A bone beyond it that
is free (no limit, no lock) turns everything hanging from it any way at all, so the chain splits at such bones
into segments: a first bone (the root, or a free bone) and the limited bones after it up to the next free one.
Each segment spans some interval of lengths from its first head to the next segment's (or the tip), pointing any
way relative to the segment before; the tip can then lie at any distance from ``max(0, max_i (shortest_i -
the sum of the others' longest))`` (the segment ``i`` toward the target, the others folded back along it) to
the sum of the longest (all in line), and at no other.

A segment's interval is exact where it has no limited bone (its first bone's offset, one length) or one limited
bone whose offset lies along its own Y axis, either way (a knee, an elbow; a disconnected child behind its
parent's head): that bone's twist then moves nothing, and its swing, a turn by ``a`` about ``(cos p, 0, sin p)``
(see ``limits``), puts the next head at ``o + s l R S y`` from the segment's first head (``o`` the first bone's
offset, ``R`` the limited bone's rest frame, ``l`` its length, ``s`` the sign of its offset's Y), at a distance
whose square is ``|o|^2 + l^2 + 2 |o| l (c_y cos a + (c_z cos p - c_x sin p) sin a)``, ``c = s R^T o / |o|``: a
sinusoid in ``a`` on each direction ``p``, whose extremes on ``[0, the limits' largest a]`` are known; over the
directions they are found on a sweep refined around each local extreme. A chain with another segment (two
limited bones in a row, as a spine of cones; a limited bone whose offset leaves its Y axis, whose twist then
moves what hangs from it) gets the bounds of its lengths alone, which hold whatever the limits:
``[inner_radius, the sum of the lengths]``, every bone its own segment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .geometry import inner_radius
from .limits import JointLimits
from .rotations import matrix_to_quat, quat_between, quat_conjugate, quat_multiply, quat_rotate, twist
from .validate import FloatArray

#: Swing directions swept around a limited bone's Y axis, then around each local extreme among them, for
#: ``_ROUNDS`` rounds each spanning two steps of the round before (2 pi / 720 / 32^3: 3e-7 radians), their
#: middles among them (an extreme at a corner of the limits, where the allowed turns end at once, stays put).
_DIRECTIONS = 720
_REFINED = 65
_ROUNDS = 3
#: Local extremes of the sweep refined (the largest ones): limits give a segment's length a few at most.
_CANDIDATES = 8
#: The most steps of regula falsi that bend a pose to its goal's distance (``ChainReach.bent``): where the tip's
#: distance changes smoothly along the way it takes a few (2 to 4 on the mocap limbs); more, and a limit cutting in
#: makes the distance jump, where the bracket closes slowly on the jump.
_STEPS = 16
#: The narrowest bracket regula falsi goes on with: narrower, the tip's distance jumps there (a limit cutting in).
_NARROWEST = 1e-9
#: How far off its own Y axis (relative to its length) a limited bone's offset may lie and still count as along
#: it: rounding in the rest frames Blender stores in float32.
_OFF_AXIS = 1e-6
_Y = np.array([0.0, 1.0, 0.0])


@dataclass(frozen=True)
class Shape:
    """A chain's pose at one extreme of its reach, up to how its segments point.

    Attributes
    ----------
    swings : ndarray, shape (m, 4)
        The swing of each segment's limited bone (the identity for the other bones).
    shaped : ndarray of bool, shape (m,)
        The bones whose swing ``swings`` sets (a limited bone whose length is zero keeps its start's).
    spans : ndarray, shape (m, 3)
        For a segment's first bone, from its head to the next segment's first head (or the tip), in the bone's
        rest frame, its own rotation aside; zero for the other bones (and a segment that spans nothing).
    toward : ndarray of bool, shape (m,)
        Whether the segment a bone leads points at the target, or back along the line to it.
    """

    swings: FloatArray
    shaped: NDArray[np.bool_]
    spans: FloatArray
    toward: NDArray[np.bool_]


@dataclass(frozen=True)
class ChainReach:
    """How near to and far from its root a chain's tip can come, and a pose at each extreme.

    Attributes
    ----------
    nearest, farthest : float
        Scene units: no pose puts the tip nearer the root's head or farther from it, and with a free root
        (``exact``) a pose puts it anywhere between.
    exact : bool
        Whether these are the limits' own bounds, or only those of the bones' lengths (see the module's notes).
    folded, straight : Shape
        A pose with the tip ``nearest`` the root's head, and one with it ``farthest``.
    rest_quats : ndarray, shape (m, 4)
        Each bone's rest frame relative to its parent's.
    limits : JointLimits
    unlimited : tuple of float
        The nearest and farthest the bones' lengths alone allow (``inner_radius``, their sum).
    """

    nearest: float
    farthest: float
    exact: bool
    folded: Shape
    straight: Shape
    rest_quats: FloatArray
    limits: JointLimits
    unlimited: tuple[float, float]

    def pose(self, shape: Shape, start: FloatArray, toward: FloatArray, back: FloatArray) -> FloatArray:
        """Compute local rotations (F, m, 4) that put the chain in ``shape``, each segment along ``toward`` or
        ``back`` (F, 3, unit; in the chain's base frame), given the start poses ``start`` (F, m, 4; within the
        limits): a segment's first bone takes the smallest turn that points the segment that way after
        the twist its start rotation had about the segment, its limited bone the extreme swing after its start's
        twist (within its limits). A first bone spanning nothing keeps its start rotation; the others are clamped
        to their limits (the root's may then miss the line)."""
        frames, bones = start.shape[:2]
        quats = np.array(start, dtype=np.float64)
        spans = np.linalg.norm(shape.spans, axis=1)
        parent: FloatArray | None = None  # the base frame
        for k in range(bones):
            rest = self.rest_quats[k]
            frame = np.broadcast_to(rest, (frames, 4)) if parent is None else quat_multiply(parent, rest)
            if spans[k] > 0:
                span = shape.spans[k] / spans[k]
                wanted = quat_rotate(quat_conjugate(frame), toward if shape.toward[k] else back)
                turn = quat_between(np.broadcast_to(span, wanted.shape), wanted)
                quats[:, k] = quat_multiply(turn, twist(quats[:, k], span))
            elif shape.shaped[k]:
                quats[:, k] = quat_multiply(shape.swings[k], twist(quats[:, k], _Y))
            if k + 1 < bones:
                parent = quat_multiply(frame, quats[:, k])
        return self.limits.clamp(quats)

    def bent(
        self,
        distances: FloatArray,
        start: FloatArray,
        toward: FloatArray,
        back: FloatArray,
        tips: Callable[[FloatArray], FloatArray],
        tolerance: float,
        beyond: NDArray[np.bool_] | None = None,
        start_tips: FloatArray | None = None,
    ) -> tuple[FloatArray, NDArray[np.int64]]:
        """Compute poses (F, m, 4) whose tip lies ``distances`` (F,) from the root's head, within ``tolerance``, given
        the start poses ``start`` (F, m, 4): each frame's start bent on the way (``_between``) to the extreme shape
        beyond that distance (``pose`` with ``toward`` and ``back``), where the tip's distance crosses it, found by
        regula falsi (the Anderson-Bjorck variant) on the bend's angle (``_angle``). ``tips`` gives the tip's distance
        from the root under rotations (n, m, 4), (n,). A frame whose goal lies ``beyond`` the reach (F,) gets the
        extreme; another whose way does not cross its distance (the fold in line, where that is no extreme) keeps its
        start. A way whose distance jumps past the goal's (a limit cutting in) ends at the jump. Where the caller knows
        the tip's distances under ``start`` (within the limits then), ``start_tips`` (F,) spares measuring them.

        Returns
        -------
        poses : ndarray, shape (F, m, 4)
        steps : ndarray of int, shape (F,)
            The poses measured on each frame's way (each costs a forward kinematics).
        """
        if start_tips is None:
            start = self.limits.clamp(start)
            start_tips = tips(start)
        angle, aim = self._angle, self._angle(distances)
        low, steps = start_tips - distances, np.ones(len(start), dtype=np.int64)
        folding = low > 0.0
        ends = np.empty(start.shape)
        for rows, shape in ((folding, self.folded), (~folding, self.straight)):
            if rows.any():
                ends[rows] = self.pose(shape, start[rows], toward[rows], back[rows])
        ends *= np.where(np.einsum("fmi,fmi->fm", ends, start) < 0.0, -1.0, 1.0)[..., None]
        end_tips = tips(ends)
        high = end_tips - distances
        steps += 1
        at = np.where(np.abs(high) < np.abs(low), 1.0, 0.0)
        there = np.minimum(np.abs(low), np.abs(high)) <= tolerance  # at the start or the end already
        ways = np.flatnonzero((low * high < 0.0) & ~there)
        a, b = np.zeros(ways.size), np.ones(ways.size)
        fa, fb = angle(start_tips[ways]) - aim[ways], angle(end_tips[ways]) - aim[ways]
        for _ in range(_STEPS):
            if ways.size == 0:
                break
            t = b - fb * (b - a) / (fb - fa)
            reached = tips(self._between(start[ways], ends[ways], t))
            ft = angle(reached) - aim[ways]
            steps[ways] += 1
            crossed = ft * fb < 0.0
            shrink = 1.0 - ft / np.where(fb != 0.0, fb, 1.0)  # the end kept, its value shrunk (Anderson-Bjorck)
            a, fa = np.where(crossed, b, a), np.where(crossed, fb, np.where(shrink > 0.0, shrink, 0.5) * fa)
            b, fb = t, ft
            at[ways] = t
            going = (np.abs(reached - distances[ways]) > tolerance) & (np.abs(b - a) > _NARROWEST)
            ways, a, b, fa, fb = ways[going], a[going], b[going], fa[going], fb[going]
        found = (low * high <= 0.0) | there
        if beyond is not None:
            found |= beyond  # its end, the extreme, comes nearer its distance than its start
        return np.where(found[:, None, None], self._between(start, ends, at), start), steps

    def _angle(self, distances: FloatArray) -> FloatArray:
        """The angle (F,) between two bones as long as the lengths' extremes need (``unlimited``: their lengths'
        difference and sum) that puts the tip ``distances`` (F,) from the root, by the law of cosines: the
        angle between a two-bone chain's bones (a knee's, an elbow's); for a longer chain a measure of the
        distance that falls as it grows. The distance is flat in the bend near the straight line and the fold:
        regula falsi on it closes in slowly there, on this angle it does not."""
        nearest, farthest = self.unlimited
        middle, half = 0.5 * (nearest**2 + farthest**2), 0.5 * (farthest**2 - nearest**2)
        if half <= 0.0:
            return distances
        return np.arccos(np.clip((distances**2 - middle) / half, -1.0, 1.0))

    def _between(self, start: FloatArray, end: FloatArray, t: FloatArray) -> FloatArray:
        """Poses (F, m, 4) the share ``t`` (F,) of the way from ``start`` to ``end`` (on one side of each other):
        each rotation interpolated along the chord, normalised and clamped to the limits."""
        chord = start + t[:, None, None] * (end - start)
        return self.limits.clamp(chord / np.linalg.norm(chord, axis=-1, keepdims=True))


def chain_reach(rest_rotations: FloatArray, offsets: FloatArray, limits: JointLimits) -> ChainReach:
    """Compute the reach of a chain (``ChainReach``) given each bone's rest frame relative to its parent's
    (m, 3, 3), its offset to the next joint in its own rest frame (m, 3) and its limits."""
    bones = len(offsets)
    lengths = np.linalg.norm(offsets, axis=1)
    free = ~(limits.lock.any(axis=1) | limits.use_limit.any(axis=1))
    free[0] = True
    leads = np.flatnonzero(free)
    runs = np.diff([*leads, bones]) - 1  # the limited bones after each first bone
    along_y = np.linalg.norm(offsets - np.outer(offsets[:, 1], _Y), axis=1) <= _OFF_AXIS * lengths
    if (runs > 1).any() or not along_y[leads[runs == 1] + 1].all():
        return _lengths_only(rest_rotations, offsets, lengths, limits)
    swings = np.zeros((2, bones, 4))  # the shortest segments', the longest's
    swings[..., 0] = 1.0
    shaped = np.zeros(bones, dtype=bool)
    spans = np.zeros((2, bones, 3))
    spans[:, leads] = offsets[leads]
    for lead in leads[runs == 1]:
        limited = lead + 1
        if lengths[limited] == 0.0:  # its swing moves nothing of the segment: it keeps the start's
            continue
        shaped[limited] = True
        sign = np.sign(offsets[limited, 1])  # its offset along +Y, or -Y (its next joint behind its head)
        if lengths[lead] > 0.0:  # else the segment is as long whichever way it swings: not at all
            direction = sign * rest_rotations[limited].T @ offsets[lead] / lengths[lead]
            swings[:, limited] = _extreme_swings(direction, limits, limited)
        spans[:, lead] += sign * lengths[limited] * (rest_rotations[limited] @ quat_rotate(swings[:, limited], _Y).T).T
    shortest, longest = np.linalg.norm(spans[:, leads], axis=2)
    gaps = shortest - (longest.sum() - longest)
    inner = leads[int(np.argmax(gaps))]  # the segment toward the target when folded, the others back
    folded_spans, folded_swings = spans[1].copy(), swings[1].copy()
    folded_spans[inner] = spans[0, inner]
    if inner + 1 < bones and shaped[inner + 1]:
        folded_swings[inner + 1] = swings[0, inner + 1]
    return ChainReach(
        nearest=max(0.0, float(gaps.max())),
        farthest=float(longest.sum()),
        exact=True,
        folded=Shape(folded_swings, shaped, folded_spans, np.arange(bones) == inner),
        straight=Shape(swings[1], shaped, spans[1], np.ones(bones, dtype=bool)),
        rest_quats=matrix_to_quat(rest_rotations),
        limits=limits,
        unlimited=(inner_radius(lengths), float(lengths.sum())),
    )


def _lengths_only(
    rest_rotations: FloatArray, offsets: FloatArray, lengths: FloatArray, limits: JointLimits
) -> ChainReach:
    """The bounds of the lengths alone, every bone its own segment (the longest toward the target when
    folded)."""
    bones = len(offsets)
    identity = np.zeros((bones, 4))
    identity[:, 0] = 1.0
    shaped = np.zeros(bones, dtype=bool)
    return ChainReach(
        nearest=inner_radius(lengths),
        farthest=float(lengths.sum()),
        exact=False,
        folded=Shape(identity, shaped, offsets.copy(), np.arange(bones) == int(np.argmax(lengths))),
        straight=Shape(identity, shaped, offsets.copy(), np.ones(bones, dtype=bool)),
        rest_quats=matrix_to_quat(rest_rotations),
        limits=limits,
        unlimited=(inner_radius(lengths), float(lengths.sum())),
    )


def _extreme_swings(direction: FloatArray, limits: JointLimits, bone: int) -> FloatArray:
    """The swings (2, 4) of ``bone`` within its limits that bring its Y axis, seen in its rest frame, farthest
    from unit ``direction`` (3,) and nearest to it: the smallest and the largest ``direction . S y``."""
    signs = np.array([[-1.0], [1.0]])
    lock_x, lock_z = _held(limits, bone)[[0, 2]]
    if lock_x and lock_z:
        return np.tile([1.0, 0.0, 0.0, 0.0], (2, 1))
    if lock_x or lock_z:  # a hinge: two directions, no sweep
        p = np.tile(np.array([0.5, 1.5]) * np.pi if lock_x else np.array([0.0, np.pi]), (2, 1))
        values, angles = _best_turns(signs * direction, limits, bone, p)
        best = np.argmax(values, axis=1)
        return _swings(angles[[0, 1], best], p[[0, 1], best])
    step = 2.0 * np.pi / _DIRECTIONS
    p = np.tile(np.arange(_DIRECTIONS) * step, (2, 1))
    values, _ = _best_turns(signs * direction, limits, bone, p)
    peaks = (values > np.roll(values, 1, axis=1)) & (values >= np.roll(values, -1, axis=1))
    peaks[[0, 1], np.argmax(values, axis=1)] = True
    around = np.take_along_axis(p, np.argsort(np.where(peaks, values, -np.inf), axis=1)[:, -_CANDIDATES:], axis=1)
    for _ in range(_ROUNDS):
        offsets = np.linspace(-step, step, _REFINED)
        values, _ = _best_turns(signs * direction, limits, bone, (around[..., None] + offsets).reshape(2, -1))
        around = around + offsets[np.argmax(values.reshape(*around.shape, _REFINED), axis=2)]
        step *= 2.0 / (_REFINED - 1)
    values, angles = _best_turns(signs * direction, limits, bone, around)
    best = np.argmax(values, axis=1)
    return _swings(angles[[0, 1], best], around[[0, 1], best])


def _best_turns(directions: FloatArray, limits: JointLimits, bone: int, p: FloatArray) -> tuple[FloatArray, FloatArray]:
    """About each swing direction ``p`` (radians, (2, n)), the turn ``a`` the limits allow that gives the largest
    ``c . S y`` for its row's ``c`` of ``directions`` (2, 3) (``c_y cos a + s sin a``, a sinusoid peaking at
    ``atan2(s, c_y)``): the values and the turns, (2, n) each."""
    cx, cy, cz = (directions[:, k : k + 1] for k in range(3))
    s = cz * np.cos(p) - cx * np.sin(p)
    largest = _largest_turns(limits, bone, p)
    peak = np.arctan2(s, cy)
    ends = np.where(cy >= cy * np.cos(largest) + s * np.sin(largest), 0.0, largest)
    inside = (peak >= 0.0) & (peak <= largest)
    angles = np.where(inside, peak, ends)
    return cy * np.cos(angles) + s * np.sin(angles), angles


def _largest_turns(limits: JointLimits, bone: int, p: FloatArray) -> FloatArray:
    """The largest turn about each direction ``(cos p, 0, sin p)`` that ``bone``'s limits allow (radians, the
    shape of ``p``): where the ray of its swing's ``(x, z) = sin(a / 2) (cos p, sin p)`` leaves the allowed
    ones (see ``JointLimits.clamp``): the bounds on each, the ellipse where both are limited, the unit
    circle."""
    use, lock = limits.use_limit[bone], _held(limits, bone)
    low, high = limits.swing_bounds(bone)
    radius = np.ones(p.shape)
    semis = []
    for axis, part in ((0, np.cos(p)), (2, np.sin(p))):
        if lock[axis]:
            semis.append(np.ones(p.shape))
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = np.where(part > 0, high[axis] / part, np.where(part < 0, low[axis] / part, np.inf))
        radius = np.minimum(radius, bound)
        semi = np.where(part >= 0, high[axis], -low[axis])
        semis.append(np.where(semi > 0, np.abs(part) / np.where(semi > 0, semi, 1.0), 0.0))
    if use[0] and use[2] and not lock[0] and not lock[2]:
        size = np.hypot(*semis)
        radius = np.minimum(radius, np.where(size > 0, 1.0 / np.where(size > 0, size, 1.0), np.inf))
    return np.asarray(2.0 * np.arcsin(np.clip(radius, 0.0, 1.0)), dtype=np.float64)


def _held(limits: JointLimits, bone: int) -> NDArray[np.bool_]:
    """The axes (3,) about which ``bone`` cannot turn at all: locked, or limited to ``[0, 0]``. Both are taken as
    locked: a swing direction square to a ``[0, 0]`` axis has a component of 6e-17 along it (``cos(pi / 2)``),
    for which its bounds allow no turn at all."""
    zero = limits.use_limit[bone] & (limits.minimum[bone] == 0.0) & (limits.maximum[bone] == 0.0)
    return np.asarray(limits.lock[bone] | zero)


def _swings(angles: FloatArray, p: FloatArray) -> FloatArray:
    """The turns by ``angles`` about ``(cos p, 0, sin p)`` (n,), (n, 4)."""
    half = 0.5 * angles
    return np.stack([np.cos(half), np.sin(half) * np.cos(p), np.zeros_like(p), np.sin(half) * np.sin(p)], axis=-1)
