"""The keyed properties of posed nodes ("actors") as key reduction weighs them: the nodes posed on every frame
(``Pose``: the measured points, how far each node's points reach), and how far an error of each actor's keyed
values moves the points of its node and of the nodes below it (``Pose.weights``, to first order).

Arrays are worked a few thousand numbers at a time where they would be larger (``_BATCH``): those stay in the
processor's cache and in memory the allocator keeps, where larger ones are mapped and zeroed anew each time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..solver import FloatArray, quat_to_matrix
from .pose import Channels, Skeleton, posed_nodes, turns

#: Rows of the frames (an index array).
Rows = NDArray[np.int64]
#: The step of the finite differences that weigh an actor's error (in its keyed values' units: radians, scene
#: units, quaternion components): large enough that Blender's float32 rounding of what a layer plays is lost in
#: it, small enough that the errors weighed (under a degree, a few millimetres) are as small.
_STEP = 1e-4
#: About how many numbers an array worked at once holds (see the module).
_BATCH = 8192


@dataclass
class Actor:
    """A keyed property of a node: its node, its place among the node's channels, its channels."""

    node: int
    slot: int
    channels: Channels

    @property
    def width(self) -> int:
        """How many keyed values (F-curves) it has."""
        assert self.channels.keyed is not None
        return int(self.channels.keyed.shape[1])


@dataclass
class Pose:
    """The nodes, posed: their channels as the pose has them, the measured points where the pose puts them
    (``reference``), and how far each node's points and the points below it reach from its head (``reach``)."""

    times: FloatArray
    skeleton: Skeleton
    nodes: list[list[Channels]]
    actors: list[Actor]
    reference: FloatArray = field(repr=False)  # (F, P, 3)
    reach: FloatArray = field(repr=False)  # (F, B)
    hangs: dict[int, FloatArray] = field(repr=False)  # by actor: the frame (F, 3, 3) a keyed location moves in
    _bases: FloatArray = field(repr=False)  # (B, F, 4, 4): room for the nodes' bases
    _world: FloatArray = field(repr=False)  # (B, F, 4, 4): room for their posed matrices

    @classmethod
    def of(cls, times: FloatArray, skeleton: Skeleton, nodes: Sequence[Sequence[Channels]]) -> Pose:
        listed = [list(properties) for properties in nodes]
        actors = [
            Actor(k, j, channels)
            for k, properties in enumerate(listed)
            for j, channels in enumerate(properties)
            if channels.keyed is not None
        ]
        room = np.zeros((len(listed), len(times), 4, 4))
        pose = cls(times, skeleton, listed, actors, np.zeros((0, 0, 3)), np.zeros((0, 0)), {}, room, room.copy())
        world = pose.posed([a.channels.values for a in actors])
        pose.reference = np.empty((len(times), len(skeleton.point_nodes), 3))
        for k, columns in enumerate(pose.columns):
            pose.reference[:, columns] = _placed(world[k], skeleton.points[k])
        pose.reach = reach_of(skeleton, world, pose.reference)
        for i, actor in enumerate(actors):
            if actor.channels.kind == "location":
                parent, offset = skeleton.parents[actor.node], skeleton.offsets[actor.node]
                hang = offset if parent < 0 else world[parent] @ offset
                pose.hangs[i] = np.ascontiguousarray(np.broadcast_to(hang[..., :3, :3], (len(times), 3, 3)))
        return pose

    @cached_property
    def columns(self) -> list[slice]:
        """Each node's points among all (``points_of``' order)."""
        ends = np.cumsum([len(points) for points in self.skeleton.points])
        return [slice(int(end) - len(points), int(end)) for end, points in zip(ends, self.skeleton.points, strict=True)]

    def plays(self, keyed: Sequence[FloatArray]) -> list[FloatArray]:
        """What each actor's property plays on every frame (F, n) when its F-curves hold ``keyed`` (F, k)."""
        every = np.arange(len(self.times))
        return [a.channels.plays(values, every) for a, values in zip(self.actors, keyed, strict=True)]

    def posed(self, plays: Sequence[FloatArray]) -> FloatArray:
        """Every node's posed matrix (B, F, 4, 4), its actors playing ``plays`` (F, n) (in room the next call
        uses again): each basis ``T(location) @ R(rotation) @ S(scale)``, the rotations of one mode turned a few
        nodes at a time."""
        playing = {(a.node, a.slot): values for a, values in zip(self.actors, plays, strict=True)}
        bases, frames = self._bases, len(self.times)
        bases[..., 3, 3] = 1.0
        groups: dict[str, list[tuple[int, FloatArray]]] = {}
        for k, properties in enumerate(self.nodes):
            if all(channels.kind != "rotation" for channels in properties):
                bases[k, :, :3, :3] = np.eye(3)
            for j, channels in enumerate(properties):
                if channels.kind == "rotation":
                    groups.setdefault(channels.mode, []).append((k, playing.get((k, j), channels.values)))
                elif channels.kind == "location":
                    bases[k, :, :3, 3] = playing.get((k, j), channels.values)
        step = max(1, _BATCH // (9 * frames))
        for mode, members in groups.items():
            for start in range(0, len(members), step):
                some = members[start : start + step]
                bases[[k for k, _ in some], :, :3, :3] = quat_to_matrix(turns(mode, np.stack([v for _, v in some])))
        for k, properties in enumerate(self.nodes):
            for j, channels in enumerate(properties):
                scale = playing.get((k, j), channels.values)
                if channels.kind == "scale" and np.any(scale != 1.0):
                    bases[k, :, :3, :3] *= scale[:, None, :]
        return posed_nodes(self.skeleton, bases, self._world)

    def error(self, plays: Sequence[FloatArray]) -> FloatArray:
        """How far (F, P) each measured point is from ``reference``, the actors playing ``plays``."""
        world = self.posed(plays)
        error = np.empty(self.reference.shape[:2])
        for k, columns in enumerate(self.columns):
            error[:, columns] = distances(_placed(world[k], self.skeleton.points[k]) - self.reference[:, columns])
        return error

    @cached_property
    def along(self) -> NDArray[np.bool_]:
        """(B, A): whether each actor's node is the node or above it."""
        return np.asarray(self.skeleton.beneath[[actor.node for actor in self.actors]].T, dtype=bool)

    def in_line(self) -> FloatArray:
        """(A,): how many actors the longest line of nodes through each actor's node holds (from a node with
        measured points up to the top)."""
        counts = np.zeros(len(self.nodes), dtype=np.int64)
        for actor in self.actors:
            counts[actor.node] += 1
        above = np.zeros(len(self.nodes), dtype=np.int64)
        for k, parent in enumerate(self.skeleton.parents):
            above[k] = counts[k] + (above[parent] if parent >= 0 else 0)
        longest = np.where(self.skeleton.beneath[[a.node for a in self.actors]], above, 0).max(axis=1, initial=1)
        return np.asarray(longest, dtype=np.float64)

    def weights(self, width: int) -> FloatArray:
        """How far an error of each actor's keyed values moves the points of its node and below, to first order:
        (W, W, A, F) such that an error ``e`` (W,) of actor ``a``'s values on frame ``f`` moves them by at most
        ``sqrt(e @ Q[:, :, a, f] @ e)`` (its extra columns, past its own, are 0). A rotation's error is the
        change of its unit quaternion, which times twice the points' reach (``reach``) is how far it moves
        them (the chord of the turn), a location's is carried through the frame it hangs in, a scale's is its
        share of the scale times the reach. Weighed through what each actor plays (``Channels.plays``), by finite
        differences, actors of a kind a few at a time."""
        frames = len(self.times)
        forms = np.zeros((width, width, len(self.actors), frames))
        groups: dict[tuple[str, str, int], list[int]] = {}
        for i, actor in enumerate(self.actors):
            groups.setdefault((actor.channels.kind, actor.channels.mode, actor.width), []).append(i)
        for (kind, mode, k), members in groups.items():
            step = max(1, _BATCH // (4 * (k + 1) * frames))
            for start in range(0, len(members), step):
                some = members[start : start + step]
                moved = np.stack([self._moved(i) for i in some])  # (m, k + 1, F, n)
                if kind == "rotation":
                    moved = (
                        turns(mode, moved)
                        * 2.0
                        * self.reach[:, [self.actors[i].node for i in some]].T[:, None, :, None]
                    )
                elif kind == "location":
                    moved = np.einsum("mfij,mkfj->mkfi", np.stack([self.hangs[i] for i in some]), moved)
                else:
                    dense = np.stack([self.actors[i].channels.values for i in some])  # (m, F, 3)
                    reach = self.reach[:, [self.actors[i].node for i in some]].T[:, None, :, None]
                    moved = moved / np.where(dense == 0.0, 1.0, dense)[:, None] * reach
                forms[:k, :k, some] = np.moveaxis(_form(moved, kind == "rotation"), 0, 2)
        return forms

    def _moved(self, actor: int) -> FloatArray:
        """What actor ``actor`` plays (k + 1, F, n): as keyed, then with each keyed value moved by ``_STEP``."""
        channels, k, frames = self.actors[actor].channels, self.actors[actor].width, len(self.times)
        keyed = channels.keyed
        assert keyed is not None
        bumped = np.repeat(keyed[None], k + 1, axis=0)
        bumped[np.arange(1, k + 1), :, np.arange(k)] += _STEP
        return channels.plays(bumped.reshape(-1, k), np.tile(np.arange(frames), k + 1)).reshape(k + 1, frames, -1)


def _form(moved: FloatArray, turned: bool) -> FloatArray:
    """Actors' quadratic forms (m, k, k, F) (``Pose.weights``) given where their effects move (m, k + 1, F, n):
    unmoved, then with each keyed value moved by ``_STEP``; ``turned``: quaternions, of either sign."""
    slope = moved[:, 1:] - moved[:, :1]
    if turned:  # a quaternion moved to the other side plays the same turn
        flip = np.einsum("mkfi,mfi->mkf", moved[:, 1:], moved[:, 0]) < 0.0
        slope = np.where(flip[..., None], -moved[:, 1:] - moved[:, :1], slope)
    slope /= _STEP
    return np.asarray(np.einsum("mafi,mbfi->mabf", slope, slope), dtype=np.float64)


def _placed(world: FloatArray, points: FloatArray) -> FloatArray:
    """Where a node's posed matrices (F, 4, 4) put its points (P, 3): (F, P, 3)."""
    return np.asarray(world[:, :3, :3] @ points.T + world[:, :3, 3:], dtype=np.float64).transpose(0, 2, 1)


def distances(moves: FloatArray) -> FloatArray:
    """The lengths (F, P) of vectors (F, P, 3)."""
    return np.asarray(np.sqrt(np.einsum("fpi,fpi->fp", moves, moves)), dtype=np.float64)


def reach_of(skeleton: Skeleton, world: FloatArray, points: FloatArray) -> FloatArray:
    """(F, B): how far the points of each node and of the nodes below it may be from its head on each frame, given
    the nodes' posed matrices (B, F, 4, 4) and the points (F, P, 3): at most the farthest of those nodes' heads
    plus how far that node's own points reach from its head."""
    heads = np.ascontiguousarray(world[..., :3, 3])  # (B, F, 3)
    own = np.zeros(heads.shape[:2])  # (B, F)
    ends = np.cumsum([len(p) for p in skeleton.points])
    for k, end in enumerate(ends.tolist()):
        if len(skeleton.points[k]):
            own[k] = distances(points[:, end - len(skeleton.points[k]) : end] - heads[k, :, None]).max(axis=1)
    reach = own.copy()
    for k in range(len(skeleton.parents)):
        below = np.flatnonzero(skeleton.beneath[k])[1:]
        if below.size:
            apart = heads[below] - heads[k]  # (n, F, 3)
            farthest = (np.sqrt(np.einsum("nfi,nfi->nf", apart, apart)) + own[below]).max(axis=0)
            np.maximum(reach[k], farthest, out=reach[k])
    return np.ascontiguousarray(reach.T)
