"""Compute which keys to keep given a pose on every frame and the error allowed: few keys, such that as the kept
keys play (``curves``, through each node's channels and forward kinematics, ``pose``) every measured point stays
within its bound of the pose on every frame.

Each keyed property of a node (its rotation, its location, its scale: an "actor") keeps keys on frames of its
own, and the choice is made on the whole pose, not curve by curve: an actor's error counts by how far it moves
the points of its node and of every node below it (``Pose.weights``), so a thigh's tenth of a degree, which
moves the foot, weighs more than a toe's.

1. Share: each actor may move the points below it by a share of their bound: the bound over the square root of
   the number of actors along the longest line of nodes through it (errors of a line of bones add up, but seldom
   all in one direction on one frame).
2. Place: every actor is keyed every few frames once, to see how far its error is from its share along the
   frames; a segment's error grows as the fourth power of its length, so that tells where to key it for its
   error to come near its share (``_FILL``), and it is keyed there. Where its error is out of its share all the
   same, the segment gets a key on its frame most out, until it is nowhere.
3. Thin: each pass offers to take away every key of every actor still thinning (the odd ones and the even ones
   tried apart, in one fit): a key goes where the actor's error stays within its share over the segment that
   joins its neighbours, and its neighbours stay. An actor stops when no key can go.
4. Refine: every node is posed as the keys play, and where a point is out of its bound on a frame, the actor
   whose error moves that node's points most there gets a key where it moves them most in that segment, until
   every point is within bounds.
5. If the worst point is well within its bound, the shares grow (up to twice what an actor may move the points
   below it alone) and steps 3 and 4 run once more.

Every actor is worked at once, in arrays: a pass is a few dozen numpy calls, whatever their number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..solver import FloatArray
from .actors import Pose, Rows
from .curves import inner_rows
from .pose import Channels, Skeleton
from .spans import Flat, KeySpans, Weighed


@dataclass(frozen=True)
class Thinned:
    """The keys kept of every keyed property, in the order ``thin_keys`` took the nodes and their channels.

    Attributes
    ----------
    keys : tuple of ndarray of int, shape (K,)
        The rows of the frames keyed, increasing; the first and the last row among them.
    values : tuple of ndarray, shape (K, k)
        The keyed values on those rows.
    controls : tuple of ndarray, shape (K - 1, 2, k)
        Each segment's inner control values (``curves.fit``): ``curves.handles`` makes the keys' handles of
        them.
    error : ndarray, shape (F, P)
        How far each measured point is from the pose on every frame as the kept keys play, in the skeleton's
        units (the prediction; Blender's evaluation is to be measured).
    reference : ndarray, shape (F, P, 3), optional
        Where the pose puts the points (what ``bound`` was computed from, where it is a function).
    """

    keys: tuple[Rows, ...]
    values: tuple[FloatArray, ...]
    controls: tuple[FloatArray, ...]
    error: FloatArray
    reference: FloatArray | None = None


def thin_keys(
    times: npt.ArrayLike,
    skeleton: Skeleton,
    nodes: Sequence[Sequence[Channels]],
    bound: float | npt.ArrayLike | Callable[[FloatArray], npt.ArrayLike],
) -> Thinned:
    """Compute the keys to keep of every keyed property given the nodes' channels on every frame.

    Parameters
    ----------
    times : array-like, shape (F,)
        The frames, increasing.
    skeleton : Skeleton
        How the nodes hang and the points measured on them.
    nodes : sequence of sequence of Channels
        Per node of ``skeleton``, its properties (at most one of each kind); those with ``keyed`` values are
        thinned.
    bound : float or array-like, shape (F, P), or callable
        How far each point may be from the pose on each frame, in the skeleton's units (>= 0); or a function
        giving it from where the pose puts the points (F, P, 3).

    Returns
    -------
    Thinned

    Raises
    ------
    ValueError
        For frames that do not increase, a bound that is negative or not a number, nodes that do not match the
        skeleton.
    """
    frames = np.asarray(times, dtype=np.float64)
    if frames.ndim != 1 or len(frames) == 0 or np.any(np.diff(frames) <= 0):
        raise ValueError("the frames must be one or more numbers, increasing")
    if len(nodes) != len(skeleton.parents):
        raise ValueError(f"the skeleton has {len(skeleton.parents)} nodes, channels were given for {len(nodes)}")
    if any(len(c.values) != len(frames) for properties in nodes for c in properties):
        raise ValueError(f"channels must have a row per frame ({len(frames)})")
    pose = Pose.of(frames, skeleton, nodes)
    allowed = bound(pose.reference) if callable(bound) else bound
    limit = np.broadcast_to(np.asarray(allowed, dtype=np.float64), pose.reference.shape[:2])
    if not np.all(limit >= 0.0):  # NaN fails too
        raise ValueError("the error allowed must be a number >= 0 on every frame and point")
    values = tuple(np.asarray(actor.channels.keyed) for actor in pose.actors)
    if len(frames) < 3 or not pose.actors:  # every key
        rows = np.arange(len(frames))
        controls = tuple(np.zeros((len(frames) - 1, 2, actor.width)) for actor in pose.actors)
        if len(frames) == 2:  # the cubic through both keys with the slope between them (``curves.fit``)
            controls = tuple(np.stack([2.0 * v[0] + v[1], v[0] + 2.0 * v[1]])[None] / 3.0 for v in values)
        zero = np.zeros(pose.reference.shape[:2])
        return Thinned(tuple(rows for _ in values), values, controls, zero, pose.reference)
    keys, error = _thin(pose, np.array(limit))
    frames_of = keys.frames
    kept = [np.flatnonzero(row) for row in keys.kept.reshape(len(pose.actors), frames_of)]
    return Thinned(
        tuple(kept),
        tuple(keyed[rows] for keyed, rows in zip(values, kept, strict=True)),
        tuple(
            np.moveaxis(keys.controls[:, : actor.width, i * frames_of + rows[:-1]], 2, 0)
            for i, (actor, rows) in enumerate(zip(pose.actors, kept, strict=True))
        ),
        error,
        pose.reference,
    )


#: Every how many frames the actors are keyed to see where their error lies; how near its share a segment's
#: error is placed to come (its fourth root is how much shorter the segment is than it might be); how far out of
#: its share the error of a segment joining two is foretold to be at most, for the join to be tried; thinning
#: rounds at most; the share of its bound the pose's worst point is brought to by another round, and the least
#: growth of the shares worth one; and how far past what it may move alone an actor's share may grow (errors of
#: bones in a line seldom add up in one direction: the refinement keys where they do).
_STRIDE = 8
_FILL = 0.6
_LIKELY = 4.0
_ROUNDS = 2
_ROOM = 0.7
_WORTH = 1.25
_BEYOND = 2.0


def _thin(pose: Pose, bound: FloatArray) -> tuple[KeySpans, FloatArray]:
    """The steps of the module: the keys kept, and the error (F, P) they leave."""
    owners = pose.skeleton.point_nodes
    # What an actor's error alone may move its node's points by: the least bound of any point below it.
    covers = pose.skeleton.beneath[[a.node for a in pose.actors]][:, owners]  # (A, P)
    alone = np.stack([bound[:, points].min(axis=1) for points in covers])  # (A, F)
    share = alone / np.sqrt(pose.in_line())[:, None]
    keys = KeySpans.of(pose, share)
    _place(keys)
    for _ in range(_ROUNDS):
        _merge(keys)
        worst, error = _refine(pose, keys, bound)
        if not 0.0 < worst * _WORTH <= _ROOM:
            break
        grown = np.minimum(share * min(2.0, _ROOM / worst), _BEYOND * alone)
        keys.ratio *= ((share / grown) ** 2).ravel()
        share = grown
        keys.share = (share * share).ravel()
    return keys, error


def _place(keys: KeySpans) -> None:
    """Step 2 of the module."""
    frames = keys.frames
    probe = np.zeros_like(keys.kept)
    probe.reshape(-1, frames)[:, ::_STRIDE] = True
    probe[frames - 1 :: frames] = True
    weighed = keys.weigh(*keys.segments(probe))
    # Keys per frame: a segment whose worst error is e of its share may be e ** -1/4 times as long at the fill.
    length = weighed.last - weighed.first
    density = np.maximum(weighed.ratio / (_FILL * _FILL), 1e-12) ** 0.125 / length
    per_row = np.repeat(density, length)  # every row but each actor's last
    count = np.floor(np.cumsum(per_row.reshape(-1, frames - 1), axis=1))
    kept = keys.kept.reshape(-1, frames)
    kept[:, 1:-1] = count[:, 1:] != count[:, :-1]
    kept[:, [0, -1]] = True
    weighed = keys.weigh(*keys.segments())
    while True:
        keys.keep(weighed)
        over = weighed.ratio > 1.0
        if not over.any():
            return
        weighed = _split(keys, weighed, over, weighed.worst)


def _split(keys: KeySpans, weighed: Weighed, over: NDArray[np.bool_], at: Flat) -> Weighed:
    """Key the segments ``over`` of ``weighed`` on their rows ``at`` (those with a row inside), and weigh the
    segments made."""
    split = over & (at >= 0)
    middle = at[split]
    keys.kept[middle] = True
    return keys.weigh(np.concatenate([weighed.first[split], middle]), np.concatenate([middle, weighed.last[split]]))


def _merge(keys: KeySpans) -> None:
    """Step 3 of the module: take away keys while the segment joining a key's neighbours stays within its
    share, a key and its neighbours never together. The first pass tries the keys whose two segments' errors
    say (by the fourth power of the length) the joined one may be within its share (``_LIKELY``); each pass
    after it tries again the keys beside those taken away."""
    frames = keys.frames
    keyed = np.flatnonzero(keys.kept)
    inner = (keyed % frames != 0) & (keyed % frames != frames - 1)
    before, key, after = keyed[:-2][inner[1:-1]], keyed[1:-1][inner[1:-1]], keyed[2:][inner[1:-1]]
    joined = (after - before).astype(np.float64) ** 8
    # The joined segment's error (squared) if it grew as the worse of the two's does, by the length's 4th power.
    likely = joined * np.maximum(keys.ratio[before] / (key - before) ** 8, keys.ratio[key] / (after - key) ** 8)
    tried = key[likely <= _LIKELY**2]
    while tried.size:
        keyed = np.flatnonzero(keys.kept)
        place = np.searchsorted(keyed, tried)
        weighed = keys.weigh(keyed[place - 1], keyed[place + 1])
        goes = weighed.ratio <= 1.0
        if not goes.any():
            return
        # Of neighbours that may both go, the one with more room goes (the one before, when alike).
        ahead = np.zeros(len(keyed), dtype=bool)
        ahead[place] = goes
        room = np.full(len(keyed), np.inf)
        room[place] = weighed.ratio
        before = np.concatenate([[False], ahead[:-1] & (room[:-1] <= room[1:])])
        after = np.concatenate([ahead[1:] & (room[1:] < room[:-1]), [False]])
        gone = ahead & ~before & ~after
        chosen = gone[place]
        keys.kept[tried[chosen]] = False
        keys.controls[:, :, weighed.first[chosen]] = weighed.controls[:, :, chosen]
        # The keys beside those taken away have new neighbours, and those that might have gone but for a
        # neighbour's going too may go now: they are tried again.
        beside = np.concatenate([keyed[place[chosen] - 1], keyed[place[chosen] + 1], tried[goes & ~chosen]])
        beside = np.unique(beside[keys.kept[beside]])
        tried = beside[(beside % frames != 0) & (beside % frames != frames - 1)]


def _refine(pose: Pose, keys: KeySpans, bound: FloatArray) -> tuple[float, FloatArray]:
    """Step 4 of the module: the worst point's share of its bound, and the error (F, P)."""
    owners = pose.skeleton.point_nodes
    actors, frames = len(pose.actors), keys.frames
    while True:
        played = keys.played()
        error = _error(pose, played)
        worst = float((error / np.where(bound > 0.0, bound, np.inf)).max(initial=0.0))
        out = error > bound
        if not out.any():
            return worst, error
        per_node = np.zeros((len(pose.nodes), frames), dtype=bool)
        np.logical_or.at(per_node, owners, out.T)
        nodes, rows = np.nonzero(per_node)
        moves = keys.moves_everywhere(played).reshape(actors, frames)
        scores = moves[:, rows].T * pose.along[nodes]
        who = np.argmax(scores, axis=1)
        helps = scores[np.arange(len(rows)), who] > 0.0
        flat = np.unique(who[helps] * frames + rows[helps])
        if not flat.size:
            return worst, error
        # Each such segment is keyed where the actor's error moves the points most in it.
        first, last = keys.segments()
        hit = np.unique(np.searchsorted(first, flat, side="right") - 1)
        first, last = first[hit], last[hit]
        inner, segment = inner_rows(first, last)
        at = np.full(len(first), -1)
        if inner.size:
            score = moves.ravel()[inner]
            starts = np.flatnonzero(np.diff(segment, prepend=-1))
            best = np.maximum.reduceat(score, starts)
            top = np.flatnonzero(score == np.repeat(best, np.diff(np.append(starts, len(inner)))))
            _, once = np.unique(segment[top], return_index=True)
            at[segment[top[once]]] = inner[top[once]]
        weighed = Weighed(first, last, at, np.ones(len(first)), keys.controls[:, :, first])
        keys.keep(_split(keys, weighed, at >= 0, at))


def _error(pose: Pose, played: FloatArray) -> FloatArray:
    """How far (F, P) each point is from the pose as the actors play ``played`` (W, A F)."""
    frames = len(pose.times)
    keyed = [played[: actor.width, i * frames : (i + 1) * frames].T for i, actor in enumerate(pose.actors)]
    return pose.error(pose.plays(keyed))
