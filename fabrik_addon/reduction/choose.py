"""Compute which keys to keep given a pose on every frame and the error allowed: few keys, such that as the kept
keys play (``curves``, through each node's channels and forward kinematics, ``pose``) every measured point stays
within its bound of the pose on every frame.

Each keyed property of a node (its rotation, its location, its scale: an "actor") keeps keys on frames of its
own, and the choice is made on the whole pose, not curve by curve: an actor's error counts by how far it moves
the points of its node and of every node below it (``Pose.effects``), so a thigh's tenth of a degree, which
moves the foot, weighs more than a toe's.

1. Share: each actor may move the points below it by a share of their bound: the bound over the square root of
   the number of actors along the longest line of nodes through it (errors of a line of bones add up, but seldom
   all in one direction on one frame).
2. Thin: every actor starts keyed every few frames (keyed more where that is out of its share) and each pass
   offers to take away every other key of every actor still thinning (the odd ones, then the even ones); an
   offer stands where the actor's error stays within its share over the segment the key joined (each
   segment's handles fitted to the frames it spans). An actor stops when neither parity takes a key away.
3. Refine: every node is posed as the keys play, and where a point is out of its bound on a frame, the actor
   whose error moves that node's points most there gets a key where it moves them most in that segment, until
   every point is within bounds.
4. If the worst point is well within its bound, the shares grow (up to twice what an actor may move the points
   below it alone) and steps 2 and 3 run once more.

All actors are computed together, in arrays: a pass is a few dozen numpy calls, whatever their number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..solver import FloatArray
from .actors import Curves, Pose, Rows, distances
from .curves import segments
from .pose import Channels, Skeleton


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
        Each segment's inner control values (``curves.played``): ``curves.handles`` makes the keys' handles of
        them.
    error : ndarray, shape (F, P)
        How far each measured point is from the pose on every frame as the kept keys play, in the skeleton's
        units (the prediction; Blender's evaluation is to be measured).
    """

    keys: tuple[Rows, ...]
    values: tuple[FloatArray, ...]
    controls: tuple[FloatArray, ...]
    error: FloatArray


def thin_keys(
    times: npt.ArrayLike,
    skeleton: Skeleton,
    nodes: Sequence[Sequence[Channels]],
    bound: float | npt.ArrayLike,
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
    bound : float or array-like, shape (F, P)
        How far each point may be from the pose on each frame, in the skeleton's units (>= 0).

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
    limit = np.broadcast_to(np.asarray(bound, dtype=np.float64), pose.reference.shape[:2])
    if not np.all(limit >= 0.0):  # NaN fails too
        raise ValueError("the error allowed must be a number >= 0 on every frame and point")
    curves = Curves.of(frames, pose.actors)
    if len(frames) > 2 and curves.columns:
        _thin(pose, curves, np.array(limit))
    return _thinned(pose, curves)


def _thinned(pose: Pose, curves: Curves) -> Thinned:
    """The keys as they stand, what they play, and the error they leave (the last refinement's, if any)."""
    if len(pose.times) < 2:  # one frame: its keys
        empty = tuple(np.zeros((0, 2, a.columns.stop - a.columns.start)) for a in pose.actors)
        rows = np.zeros(1, dtype=np.int64)
        values = tuple(curves.values[:, a.columns] for a in pose.actors)
        return Thinned(tuple(rows for _ in pose.actors), values, empty, np.zeros(pose.reference.shape[:2]))
    if curves.last is None:
        keyed, controls = curves.played()
        curves.last = (controls, distances(pose.points(pose.plays(keyed)) - pose.reference))
    controls, error = curves.last
    kept = [np.flatnonzero(curves.keys[:, i]) for i in range(len(pose.actors))]
    return Thinned(
        tuple(kept),
        tuple(curves.values[rows, actor.columns] for rows, actor in zip(kept, pose.actors, strict=True)),
        tuple(np.moveaxis(controls[:, rows[:-1], a.columns], 0, 1) for rows, a in zip(kept, pose.actors, strict=True)),
        error,
    )


def _thin(pose: Pose, curves: Curves, bound: FloatArray) -> None:
    """The steps of the module."""
    owners = pose.skeleton.point_nodes
    # What an actor's error alone may move its node's points by: the least bound of any point below it.
    covers = pose.skeleton.beneath[[a.node for a in pose.actors]][:, owners]  # (A, P)
    alone = np.stack([bound[:, points].min(axis=1) for points in covers], axis=1)
    share = alone / np.sqrt(pose.in_line())
    frames = len(pose.times)
    curves.keys[:] = (np.arange(frames) % _STRIDE == 0)[:, None]
    curves.keys[-1] = True
    every = np.arange(len(pose.actors))
    for _ in range(_ROUNDS):
        _within_shares(pose, curves, share, every)
        _merge(pose, curves, share)
        worst = _refine(pose, curves, bound)
        if not 0.0 < worst < _ROOM:
            return
        share = np.minimum(share * min(2.0, _ROOM / worst), _BEYOND * alone)


#: Every how many frames the actors start keyed; thinning rounds at most, the share of its bound the pose's worst
#: point must stay under for another round, and how far past what it may move alone an actor's share may grow
#: (errors of bones in a line seldom add up in one direction: the refinement keys where they do).
_STRIDE = 8
_ROUNDS = 2
_ROOM = 0.7
_BEYOND = 2.0


def _within_shares(pose: Pose, curves: Curves, share: FloatArray, which: Rows) -> None:
    """Key the actors ``which`` where their error is out of their share, until it is nowhere (or no key helps)."""
    while which.size:
        effects = pose.effects(curves.played_by(pose.actors, which), which)
        rows, out = np.nonzero(effects > share[:, which])
        if not rows.size or not _split(curves, which[out], rows, effects, which):
            return
        curves.last = None


def _merge(pose: Pose, curves: Curves, share: FloatArray) -> None:
    """Step 2 of the module: offer every other key of every actor still thinning; take away those whose actor's
    error stays within its ``share`` (F, A) over the segment the key joins. An actor whose offers all stood is
    offered every other key again; one with an offer withdrawn is offered the other keys next (its parity
    turns); it stops after two passes in a row take nothing away."""
    frames = len(pose.times)
    quiet = np.zeros(len(pose.actors), dtype=np.int64)  # passes in a row that took nothing away, per actor
    parity = np.zeros(len(pose.actors), dtype=np.int64)
    while (quiet < 2).any():
        which = np.flatnonzero(quiet < 2)
        keys = curves.keys[:, which]
        offered = keys & (np.cumsum(keys, axis=0) % 2 == parity[which])
        offered[[0, -1]] = False
        curves.keys[:, which] = keys & ~offered
        effects = pose.effects(curves.played_by(pose.actors, which), which)
        rows, out = np.nonzero(effects > share[:, which])
        start, _ = segments(curves.keys[:, which])
        failing = np.zeros((frames, len(which)), dtype=bool)
        failing[start[rows, out], out] = True
        back = offered & np.take_along_axis(failing, start, axis=0)
        curves.keys[:, which] |= back
        curves.last = None
        quiet[which] = np.where((offered & ~back).any(axis=0), 0, quiet[which] + 1)
        parity[which] ^= back.any(axis=0) | ~offered.any(axis=0)


def _refine(pose: Pose, curves: Curves, bound: FloatArray) -> float:
    """Step 3 of the module; returns the worst point's share of its bound."""
    along = pose.along()
    owners = pose.skeleton.point_nodes
    every = np.arange(len(pose.actors))
    while True:
        keyed, controls = curves.played()
        plays = pose.plays(keyed)
        error = distances(pose.points(plays) - pose.reference)
        curves.last = (controls, error)
        worst = float((error / np.where(bound > 0.0, bound, np.inf)).max(initial=0.0))
        out = error > bound
        if not out.any():
            return worst
        per_node = np.zeros((len(pose.nodes), len(pose.times)), dtype=bool)
        np.logical_or.at(per_node, owners, out.T)
        nodes, rows = np.nonzero(per_node)
        effects = pose.effects(plays)
        scores = effects[rows] * along[nodes]
        who = np.argmax(scores, axis=1)
        helps = scores[np.arange(len(rows)), who] > 0.0
        if not _split(curves, who[helps], rows[helps], effects, every):
            return worst
        curves.last = None


def _split(curves: Curves, actors: Rows, rows: Rows, effects: FloatArray, which: Rows) -> bool:
    """Key each actor of ``actors`` in the segment that holds the row beside it (``rows``), on the frame inside
    it where its error moves the points most (``effects``, (F, len(which)), of the actors ``which``); whether any
    key was added (a segment with no frame inside takes none)."""
    place = np.searchsorted(which, actors)  # each actor's column among ``which``
    keys = curves.keys[:, which]
    start, _ = segments(keys)
    marked = np.zeros(keys.shape, dtype=bool)
    marked[start[rows, place], place] = True
    inside = np.take_along_axis(marked, start, axis=0) & ~keys
    inside[-1] = False
    r, a = np.nonzero(inside)
    if not r.size:
        return False
    group = start[r, a] * len(which) + a
    order = np.lexsort((-effects[r, a], group))
    leading = order[np.concatenate([[True], group[order][1:] != group[order][:-1]])]
    curves.keys[r[leading], which[a[leading]]] = True
    return True
