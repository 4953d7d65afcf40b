"""The keyed properties of posed nodes ("actors") as key reduction weighs them: all their keyed channels at once,
as columns of one array (``Curves``: the keys each keeps, what they play), and the nodes posed on every frame with
how far each actor's error moves the points of its node and of the nodes below it (``Pose``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..solver import FloatArray
from .curves import fit, slopes
from .pose import Channels, Skeleton, linear, points_of, posed, turns

#: Rows of the frames (an index array).
Rows = NDArray[np.int64]


@dataclass
class Actor:
    """A keyed property of a node: its node, its channels and its columns among all keyed channels."""

    node: int
    slot: int  # its place among the node's channels
    channels: Channels
    columns: slice


@dataclass
class Curves:
    """Every keyed channel at once: what its F-curves hold on every frame, as columns (F, C), each actor's keys
    as a column of a mask (F, A), and what the kept keys play (``played``)."""

    times: FloatArray
    values: FloatArray  # (F, C)
    tangents: FloatArray  # (F, C)
    owner: NDArray[np.int64]  # (C,): each column's actor
    keys: NDArray[np.bool_]  # (F, A)
    last: tuple[FloatArray, FloatArray] | None = None  # the controls and error of the keys as they stand

    @classmethod
    def of(cls, times: FloatArray, actors: Sequence[Actor]) -> Curves:
        keyed = [a.channels.keyed for a in actors]
        values = np.concatenate([k for k in keyed if k is not None], axis=1) if actors else np.zeros((len(times), 0))
        tangents = slopes(times, values) if len(times) > 1 else np.zeros_like(values)
        owner = np.repeat(np.arange(len(actors)), [a.columns.stop - a.columns.start for a in actors])
        return cls(times, values, tangents, owner.astype(np.int64), np.ones((len(times), len(actors)), dtype=bool))

    @property
    def columns(self) -> int:
        return int(self.values.shape[1])

    def played(self) -> tuple[FloatArray, FloatArray]:
        """What the kept keys play on every frame (F, C), and each segment's control values (``curves.fit``)."""
        return fit(self.times, self.keys, self.owner, self.values, self.tangents)

    def played_by(self, actors: Sequence[Actor], which: Rows) -> list[FloatArray]:
        """What the kept keys of the actors ``which`` play on every frame, each actor's (F, n)."""
        columns = np.concatenate([np.arange(actors[i].columns.start, actors[i].columns.stop) for i in which])
        owner = np.repeat(np.arange(len(which)), [actors[i].columns.stop - actors[i].columns.start for i in which])
        keyed, _ = fit(self.times, self.keys[:, which], owner, self.values[:, columns], self.tangents[:, columns])
        every = np.arange(len(self.times))
        bounds = np.cumsum([0, *(actors[i].columns.stop - actors[i].columns.start for i in which)])
        return [actors[i].channels.plays(keyed[:, bounds[n] : bounds[n + 1]], every) for n, i in enumerate(which)]


@dataclass
class Pose:
    """The nodes, posed: their channels as the pose has them, the measured points' reference, and how far each
    node's points reach (for ``effects``)."""

    times: FloatArray
    skeleton: Skeleton
    nodes: list[list[Channels]]
    actors: list[Actor]
    reference: FloatArray  # (F, P, 3)
    reach: FloatArray  # (F, B)
    hangs: dict[int, FloatArray]  # the linear part (F, 3, 3) of the frame a keyed location's node hangs in
    dense: dict[int, FloatArray]  # each rotation actor's unit quaternions (F, 4), each scale's values, in the pose

    @classmethod
    def of(cls, times: FloatArray, skeleton: Skeleton, nodes: Sequence[Sequence[Channels]]) -> Pose:
        listed = [list(properties) for properties in nodes]
        actors, start = [], 0
        for k, properties in enumerate(listed):
            for j, channels in enumerate(properties):
                if channels.keyed is not None:
                    width = channels.keyed.shape[1]
                    actors.append(Actor(k, j, channels, slice(start, start + width)))
                    start += width
        pose = cls(times, skeleton, listed, actors, np.zeros((0, 0, 3)), np.zeros((0, 0)), {}, {})
        world = posed(skeleton, pose.bases([a.channels.values for a in actors]))
        pose.reference = points_of(skeleton, world)
        pose.reach = reach_of(skeleton, world, pose.reference)
        for i, actor in enumerate(actors):
            if actor.channels.kind == "location":
                parent, offset = skeleton.parents[actor.node], skeleton.offsets[actor.node]
                hang = offset if parent < 0 else world[:, parent] @ offset
                pose.hangs[i] = hang[..., :3, :3] * np.ones((len(times), 1, 1))
            elif actor.channels.kind == "rotation":
                pose.dense[i] = turns(actor.channels.mode, actor.channels.values)
            else:
                pose.dense[i] = actor.channels.values
        return pose

    def plays(self, keyed: FloatArray) -> list[FloatArray]:
        """What each actor's property plays on every frame (F, n) when the F-curves hold ``keyed`` (F, C)."""
        every = np.arange(len(self.times))
        return [a.channels.plays(keyed[:, a.columns], every) for a in self.actors]

    def parts(self, plays: Sequence[FloatArray]) -> dict[tuple[int, int], FloatArray]:
        """The 3 x 3 part (F, 3, 3) of every rotation and scale of every node, its actors playing ``plays``, by
        (node, slot): those of one kind and mode computed together."""
        playing = {(a.node, a.slot): values for a, values in zip(self.actors, plays, strict=True)}
        groups: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for k, properties in enumerate(self.nodes):
            for j, channels in enumerate(properties):
                if channels.kind != "location":
                    groups.setdefault((channels.kind, channels.mode), []).append((k, j))
        parts = {}
        for places in groups.values():
            stacked = np.stack([playing.get((k, j), self.nodes[k][j].values) for k, j in places], axis=1)
            matrices = linear(self.nodes[places[0][0]][places[0][1]], stacked)
            parts.update({place: matrices[:, n] for n, place in enumerate(places)})
        return parts

    def bases(self, plays: Sequence[FloatArray]) -> list[FloatArray]:
        """Every node's basis on every frame (F, 4, 4), its actors playing ``plays``."""
        parts = self.parts(plays)
        playing = {(a.node, a.slot): values for a, values in zip(self.actors, plays, strict=True)}
        frames = len(self.times)
        bases = []
        for k, properties in enumerate(self.nodes):
            matrices = np.zeros((frames, 4, 4))
            matrices[:, 3, 3] = 1.0
            kinds = {channels.kind: j for j, channels in enumerate(properties)}
            if "location" in kinds:
                matrices[:, :3, 3] = playing.get((k, kinds["location"]), properties[kinds["location"]].values)
            turned = [parts[(k, kinds[kind])] for kind in ("rotation", "scale") if kind in kinds]
            matrices[:, :3, :3] = turned[0] @ turned[1] if len(turned) == 2 else turned[0] if turned else np.eye(3)
            bases.append(matrices)
        return bases

    def effects(self, plays: Sequence[FloatArray], which: Rows | None = None) -> FloatArray:
        """How far at most each actor's error moves any point of its node or below, on every frame (F, A), the
        actors playing ``plays`` (or only the actors ``which``, playing ``plays``): a location's error through
        the frame it hangs in; a rotation's (twice the sine of half the angle between the rotations) or a
        scale's times the points' reach. The rotations of one mode are computed together."""
        which = np.arange(len(self.actors)) if which is None else which
        effects = np.empty((len(self.times), len(which)))
        rotations: dict[str, list[int]] = {}
        for n, (i, values) in enumerate(zip(which.tolist(), plays, strict=True)):
            actor = self.actors[i]
            channels = actor.channels
            if channels.kind == "rotation":
                rotations.setdefault(channels.mode, []).append(n)
            elif i in self.hangs:
                moved = np.einsum("fij,fj->fi", self.hangs[i], values - channels.values)
                effects[:, n] = distances(moved[:, None])[:, 0]
            else:
                ratio = np.abs(values / np.where(self.dense[i] == 0.0, 1.0, self.dense[i]) - 1.0).max(axis=-1)
                effects[:, n] = ratio * self.reach[:, actor.node]
        for mode, places in rotations.items():
            actors = [self.actors[which[n]] for n in places]
            played = turns(mode, np.stack([plays[n] for n in places], axis=1))  # (F, m, 4)
            dense = np.stack([self.dense[int(which[n])] for n in places], axis=1)
            # The chord d between the unit quaternions (the nearer sign) is 2 sin(angle / 4): 2 sin(angle / 2)
            # is d sqrt(4 - d^2), which keeps its precision for the smallest turns.
            chord = np.minimum(distances(played - dense), distances(played + dense))
            reach = self.reach[:, [actor.node for actor in actors]]
            effects[:, places] = chord * np.sqrt(np.maximum(4.0 - chord * chord, 0.0)) * reach
        return effects

    def along(self) -> NDArray[np.bool_]:
        """(B, A): whether each actor's node is the node or above it."""
        owners = np.array([actor.node for actor in self.actors], dtype=np.int64)
        along = np.zeros((len(self.nodes), len(self.actors)), dtype=bool)
        for k in range(len(self.nodes)):
            node = k
            while node >= 0:
                along[k] |= owners == node
                node = self.skeleton.parents[node]
        return along

    def points(self, plays: Sequence[FloatArray]) -> FloatArray:
        """Every measured point on every frame (F, P, 3), the actors playing ``plays``."""
        return points_of(self.skeleton, posed(self.skeleton, self.bases(plays)))

    def in_line(self) -> FloatArray:
        """(A,): how many actors the longest line of nodes through each actor's node holds (from a node with
        measured points up to the top)."""
        counts = np.zeros(len(self.nodes), dtype=np.int64)
        for actor in self.actors:
            counts[actor.node] += 1
        above = np.zeros(len(self.nodes), dtype=np.int64)
        for k, parent in enumerate(self.skeleton.parents):
            above[k] = counts[k] + (above[parent] if parent >= 0 else 0)
        longest = [max(above[j] for j in self.skeleton.below(a.node)) for a in self.actors]
        return np.maximum(np.array(longest, dtype=np.float64), 1.0)


def distances(moves: FloatArray) -> FloatArray:
    """The lengths (F, P) of vectors (F, P, 3)."""
    return np.asarray(np.sqrt(np.einsum("fpi,fpi->fp", moves, moves)), dtype=np.float64)


def reach_of(skeleton: Skeleton, world: FloatArray, points: FloatArray) -> FloatArray:
    """(F, B): how far the points of each node and of the nodes below it may be from its head on each frame: at
    most the farthest of those nodes' heads plus how far that node's own points reach from its head."""
    nodes = skeleton.point_nodes
    heads = world[..., :3, 3]
    own = np.zeros(world.shape[:2])
    if len(nodes):  # each node's farthest point from its head (the points come node after node)
        starts = np.flatnonzero(np.diff(nodes, prepend=-1))
        own[:, nodes[starts]] = np.maximum.reduceat(distances(points - heads[:, nodes]), starts, axis=1)
    reach = own.copy()
    for k in range(len(skeleton.parents)):
        below = np.flatnonzero(skeleton.beneath[k])[1:]
        if below.size:
            apart = distances(heads[:, below] - heads[:, k, None]) + own[:, below]
            reach[:, k] = np.maximum(reach[:, k], apart.max(axis=1))
    return reach
