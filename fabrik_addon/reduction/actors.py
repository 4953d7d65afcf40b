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
_BATCH = 65536


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
    _world: FloatArray = field(repr=False)  # (B, F, 4, 4): room for the nodes' bases, then their posed matrices
    _still: dict[int, FloatArray] = field(default_factory=dict, repr=False)  # the bases no actor changes
    _placed: list[FloatArray] = field(default_factory=list, repr=False)  # per run, the points (m, F, 3, P)

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
        room[..., 3, 3] = 1.0
        pose = cls(times, skeleton, listed, actors, np.zeros((0, 0, 3)), np.zeros((0, 0)), {}, room)
        pose._basis(list(range(len(listed))), {})
        pose._still = {k: room[k].copy() for k in range(len(listed)) if k not in set(pose.touched)}
        world = posed_nodes(skeleton, room, room)
        pose.reference = np.empty((len(times), len(skeleton.point_nodes), 3))
        own = np.zeros((len(listed), len(times)))  # how far each node's points reach from its head
        for run, columns in pose.runs:
            placed = _placed(world[run], np.stack(skeleton.points[run]))
            pose._placed.append(placed)
            pose.reference[:, columns] = placed.transpose(1, 0, 3, 2).reshape(len(times), -1, 3)
            own[run] = _lengths(placed - world[run, :, :3, 3:]).max(axis=2)
        pose.reach = reach_of(skeleton, world, own)
        for i, actor in enumerate(actors):
            if actor.channels.kind == "location":
                parent, offset = skeleton.parents[actor.node], skeleton.offsets[actor.node]
                hang = offset if parent < 0 else world[parent] @ offset
                pose.hangs[i] = np.ascontiguousarray(np.broadcast_to(hang[..., :3, :3], (len(times), 3, 3)))
        return pose

    @cached_property
    def runs(self) -> list[tuple[slice, slice]]:
        """Runs of nodes with as many points each, a few thousand numbers' worth at most, and their points among
        all (``points_of``' order)."""
        counts = [len(points) for points in self.skeleton.points]
        ends = np.cumsum(counts)
        runs, start = [], 0
        for k in range(1, len(counts) + 1):
            if k == len(counts) or counts[k] != counts[start] or (k - start) * len(self.times) * 16 >= _BATCH:
                first = int(ends[start] - counts[start])
                runs.append((slice(start, k), slice(first, int(ends[k - 1]))))
                start = k
        return runs

    @cached_property
    def _unit_scales(self) -> set[tuple[int, int]]:
        """The scales (by node and place) that are 1 on every frame."""
        return {
            (k, j)
            for k, properties in enumerate(self.nodes)
            for j, channels in enumerate(properties)
            if channels.kind == "scale" and np.all(channels.values == 1.0)
        }

    @cached_property
    def touched(self) -> list[int]:
        """The nodes some actor poses."""
        return sorted({actor.node for actor in self.actors})

    def plays(self, keyed: Sequence[FloatArray]) -> list[FloatArray]:
        """What each actor's property plays on every frame (F, n) when its F-curves hold ``keyed`` (F, k)."""
        every = np.arange(len(self.times))
        return [a.channels.plays(values, every) for a, values in zip(self.actors, keyed, strict=True)]

    def posed(self, plays: Sequence[FloatArray]) -> FloatArray:
        """Every node's posed matrix (B, F, 4, 4), its actors playing ``plays`` (F, n) (in room the next call
        uses again: each node's basis, then, in place, its posed matrix)."""
        self._basis(self.touched, {(a.node, a.slot): values for a, values in zip(self.actors, plays, strict=True)})
        for k, basis in self._still.items():
            self._world[k] = basis
        return posed_nodes(self.skeleton, self._world, self._world)

    def _basis(self, touched: list[int], playing: dict[tuple[int, int], FloatArray]) -> None:
        """Make the bases of the nodes ``touched`` (``T(location) @ R(rotation) @ S(scale)``) in room for them,
        their properties playing ``playing`` (by node and place) or the pose: each kind and mode a few nodes at a
        time."""
        bases, frames = self._world, len(self.times)
        groups: dict[tuple[str, str], list[tuple[int, FloatArray]]] = {}
        for k in touched:
            kinds = {channels.kind for channels in self.nodes[k]}
            if "rotation" not in kinds:
                bases[k, :, :3, :3] = np.eye(3)
            if "location" not in kinds:
                bases[k, :, :3, 3] = 0.0
            for j, channels in enumerate(self.nodes[k]):
                values = playing.get((k, j))
                if values is None and (k, j) in self._unit_scales:
                    continue
                values = channels.values if values is None else values
                if channels.kind != "scale" or np.any(values != 1.0):
                    groups.setdefault((channels.kind, channels.mode), []).append((k, values))
        step = max(1, _BATCH // (9 * frames))
        for kind in ("location", "rotation", "scale"):  # a scale scales the rotation's columns
            for (of_kind, mode), members in groups.items():
                if of_kind != kind:
                    continue
                for start in range(0, len(members), step):
                    some = [k for k, _ in members[start : start + step]]
                    values = np.stack([v for _, v in members[start : start + step]])
                    if kind == "location":
                        bases[some, :, :3, 3] = values
                    elif kind == "rotation":
                        bases[some, :, :3, :3] = quat_to_matrix(turns(mode, values))
                    else:
                        bases[some, :, :3, :3] *= values[:, :, None, :]

    def error(self, plays: Sequence[FloatArray]) -> FloatArray:
        """How far (F, P) each measured point is from ``reference``, the actors playing ``plays``."""
        world = self.posed(plays)
        error = np.empty(self.reference.shape[:2])
        for (run, columns), reference in zip(self.runs, self._placed, strict=True):
            apart = _lengths(_placed(world[run], np.stack(self.skeleton.points[run])) - reference)  # (m, F, P)
            error[:, columns] = apart.transpose(1, 0, 2).reshape(len(self.times), -1)
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
        share of the scale times the reach. Through what an actor plays (``Channels.plays``) where it is given,
        and an Euler or axis-angle turn, by finite differences; actors of a kind a few at a time."""
        frames = len(self.times)
        forms = np.zeros((width, width, len(self.actors), frames))
        groups: dict[tuple[str, str, int, bool], list[int]] = {}
        for i, actor in enumerate(self.actors):
            channels = actor.channels
            groups.setdefault((channels.kind, channels.mode, actor.width, channels.play is None), []).append(i)
        for (kind, mode, k, direct), members in groups.items():
            step = max(1, _BATCH // (4 * (k + 1) * frames))
            for start in range(0, len(members), step):
                some = members[start : start + step]
                if direct and (kind != "rotation" or mode == "QUATERNION"):
                    full = self._direct(kind, some)  # (n, n, m, F), over every value of the property
                    if all(len(self.actors[i].channels.values[0]) == k for i in some):  # every value keyed
                        forms[:k, :k, some] = full
                        continue
                    for m, i in enumerate(some):
                        place = list(self.actors[i].channels.indices)
                        forms[:k, :k, i] = full[np.ix_(place, place)][:, :, m]
                    continue
                moved = np.stack([self._moved(i) for i in some])  # (m, k + 1, F, n)
                if kind == "rotation":
                    reach = 2.0 * self.reach[:, [self.actors[i].node for i in some]].T
                    moved = turns(mode, moved) * reach[:, None, :, None]
                elif kind == "location":
                    moved = np.einsum("mfij,mkfj->mkfi", np.stack([self.hangs[i] for i in some]), moved)
                else:
                    dense = np.stack([self.actors[i].channels.values for i in some])  # (m, F, 3)
                    reach = self.reach[:, [self.actors[i].node for i in some]].T[:, None, :, None]
                    moved = moved / np.where(dense == 0.0, 1.0, dense)[:, None] * reach
                forms[:k, :k, some] = np.moveaxis(_form(moved, kind == "rotation"), 0, 2)
        return forms

    def _direct(self, kind: str, some: list[int]) -> FloatArray:
        """The quadratic forms (n, n, m, F) of actors that play their values as keyed, over every value of their
        property: a quaternion's, ``4 reach^2 / |q|^2 (I - u u^T)`` (``u`` the unit quaternion: only the turn
        moves the points); a location's, ``H^T H`` (``H`` the frame it moves in); a scale's,
        ``(reach / scale)^2`` on its diagonal."""
        values = np.stack([self.actors[i].channels.values.T for i in some], axis=1)  # (n, m, F)
        if kind == "location":
            hangs = np.stack([self.hangs[i] for i in some])  # (m, F, 3, 3)
            return np.asarray(np.einsum("mfji,mfjk->ikmf", hangs, hangs), dtype=np.float64)
        reach = self.reach[:, [self.actors[i].node for i in some]].T  # (m, F)
        if kind == "scale":
            return np.asarray(np.eye(3)[:, :, None, None] * ((reach / values) ** 2)[None], dtype=np.float64)
        square = np.einsum("nmf,nmf->mf", values, values)
        unit = values / np.sqrt(square)
        across = -unit[:, None] * unit[None, :]
        across[np.arange(4), np.arange(4)] += 1.0
        across *= 4.0 * reach * reach / square
        return np.asarray(across, dtype=np.float64)

    def _moved(self, actor: int) -> FloatArray:
        """What actor ``actor`` plays (k + 1, F, n): as keyed, then with each keyed value moved by ``_STEP``."""
        channels, k, frames = self.actors[actor].channels, self.actors[actor].width, len(self.times)
        if channels.play is None:  # every value, the keyed ones moved in turn
            moved = np.repeat(channels.values[None], k + 1, axis=0)
            moved[np.arange(1, k + 1), :, list(channels.indices)] += _STEP
            return moved
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
    """Where nodes' posed matrices (m, F, 4, 4) put their points (m, P, 3): (m, F, 3, P), a product per node."""
    count, frames, each = len(world), world.shape[1], points.shape[1]
    local = np.concatenate([np.swapaxes(points, 1, 2), np.ones((count, 1, each))], axis=1)  # (m, 4, P)
    placed = (world.reshape(count, 4 * frames, 4) @ local).reshape(count, frames, 4, each)
    return np.asarray(placed[:, :, :3], dtype=np.float64)


def _lengths(moves: FloatArray) -> FloatArray:
    """The lengths (m, F, P) of vectors (m, F, 3, P)."""
    return np.asarray(np.sqrt(np.einsum("mfip,mfip->mfp", moves, moves)), dtype=np.float64)


def distances(moves: FloatArray) -> FloatArray:
    """The lengths (F, P) of vectors (F, P, 3)."""
    return np.asarray(np.sqrt(np.einsum("fpi,fpi->fp", moves, moves)), dtype=np.float64)


def reach_of(skeleton: Skeleton, world: FloatArray, own: FloatArray) -> FloatArray:
    """(F, B): how far the points of each node and of the nodes below it may be from its head on each frame, given
    the nodes' posed matrices (B, F, 4, 4) and how far each node's own points reach from its head (B, F): at most
    the farthest of those nodes' heads plus how far that node's own points reach."""
    heads = np.ascontiguousarray(world[..., :3, 3])  # (B, F, 3)
    reach = own.copy()
    for k in range(len(heads)):
        under = np.flatnonzero(skeleton.beneath[k])[1:]
        if not under.size:
            continue
        below: slice | NDArray[np.int64] = under
        if under[-1] - under[0] == len(under) - 1:  # a run of nodes (a chain's): slices, not copies
            below = slice(int(under[0]), int(under[-1]) + 1)
        apart = heads[below] - heads[k]  # (n, F, 3)
        farthest = np.sqrt(np.einsum("nfi,nfi->nf", apart, apart))
        farthest += own[below]
        np.maximum(reach[k], farthest.max(axis=0), out=reach[k])
    return np.ascontiguousarray(reach.T)
