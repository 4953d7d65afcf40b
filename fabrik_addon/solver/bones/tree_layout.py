"""How the solver on a tree of bones sees it (``tree.TreeRest``) whose end effectors are some
bones' tails: the points each bone carries, the effector weight hanging from each, which effectors each bone
moves, and each effector's branch.

A bone is a rigid body from its head to the points it carries: its children's heads (children whose heads
coincide share one point: a fork, the paper's sub-base) and, on a tip bone, its tail. Each point pulls with
the total weight of the effectors at and beyond it, as in ``points.tree_layout``.

An effector's *branch* is the run of bones that ends at its tip bone and starts below the nearest bone above
it that forks or is another effector's tip (or at the tree's root): what turns the tip without turning any
other branch. A chain is the tree of one branch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import FloatArray
from .tree import TreeRest, place_key


@dataclass(frozen=True)
class Point:
    """A point a bone carries.

    Attributes
    ----------
    bone : int
    offset : ndarray, shape (3,)
        From the bone's head, in its own frame.
    children : tuple of int
        The bones whose heads are here.
    effector : int
        The effector here (the bone is its tip), or -1.
    weight : float
        The effector weight at and beyond the point (> 0).
    shares : tuple of (int, float)
        Where the point is pulled to in the inward pass is a weighted centroid: each child bone's wish for its
        head, by its share (the weight beyond it over ``weight``)...
    target_share : float
        ...and the effector's target, by this share (0 without an effector).
    """

    bone: int
    offset: FloatArray
    children: tuple[int, ...]
    effector: int
    weight: float
    shares: tuple[tuple[int, float], ...]
    target_share: float


@dataclass(frozen=True)
class Branch:
    """An effector's branch: ``bones`` from its first bone to the tip, and whether it is ``alone`` (no other
    effector hangs from its first bone, so turning it moves no other effector)."""

    bones: tuple[int, ...]
    alone: bool


@dataclass(frozen=True)
class TreeBones:
    """A tree of bones with effectors at some bones' tails, laid out for the limited tree solver.

    Attributes
    ----------
    rest : TreeRest
    tips : ndarray of int, shape (E,)
        Each effector's bone (its tail is the effector).
    weights : ndarray, shape (E,)
    points : tuple of Point
        Every carried point, bone by bone in order.
    carried : tuple of tuple of int
        Per bone, its points (indices into ``points``).
    head_points : ndarray of int, shape (b,)
        Per bone, the point of its parent where its head is; -1 for the root bone.
    tail_points : ndarray of int, shape (E,)
        Per effector, its point.
    moves : ndarray of bool, shape (b, E)
        Whether each bone is on the path from the root to each effector's tip (turning it moves the effector).
    branches : tuple of Branch
        Per effector.
    """

    rest: TreeRest
    tips: NDArray[np.int64]
    weights: FloatArray
    points: tuple[Point, ...]
    carried: tuple[tuple[int, ...], ...]
    head_points: NDArray[np.int64]
    tail_points: NDArray[np.int64]
    moves: NDArray[np.bool_]
    branches: tuple[Branch, ...]

    @property
    def offsets(self) -> FloatArray:
        """Every point's offset, shape (P, 3)."""
        return np.array([point.offset for point in self.points])

    @property
    def reach(self) -> FloatArray:
        """Per effector, the length of the path from the root's head to it along its bones (P,): how far from
        the root it can be at most, unstretched."""
        lengths = np.linalg.norm(self.offsets[self.head_points[1:]], axis=1)
        along = np.concatenate([[0.0], lengths])  # each bone's head from its parent's head
        tails = np.linalg.norm(self.offsets[self.tail_points], axis=1)
        return np.asarray(self.moves.T.astype(float) @ along + tails, dtype=np.float64)


def tree_bones(rest: TreeRest, tips: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> TreeBones:
    """Lay out ``rest`` with effectors at the tails of the bones ``tips`` (E,), pulling with ``weights`` (E,)
    (default 1 each).

    Raises
    ------
    ValueError
        Naming the problem: a tip out of range or repeated, a leaf bone that is no tip (nothing would turn
        it), a weight that is not a positive number.
    """
    bones = len(rest.parents)
    tip_array = np.asarray(tips)
    if tip_array.ndim != 1 or tip_array.size < 1 or not np.issubdtype(tip_array.dtype, np.integer):
        raise ValueError(f"tips must be bone indices of shape (E,), E >= 1, got {tip_array.dtype} {tip_array.shape}")
    tip_list = [int(t) for t in tip_array]
    if min(tip_list) < 0 or max(tip_list) >= bones or len(set(tip_list)) < len(tip_list):
        raise ValueError(f"tips must be distinct bones 0 to {bones - 1}, got {tip_list}")
    weight_array = np.ones(len(tip_list)) if weights is None else np.array(weights, dtype=np.float64)
    if weight_array.shape != (len(tip_list),) or not (np.isfinite(weight_array) & (weight_array > 0)).all():
        raise ValueError(f"weights must be {len(tip_list)} positive finite numbers, got {weight_array.tolist()}")
    children = rest.children
    for k in range(bones):
        if not children[k] and k not in tip_list:
            raise ValueError(f"bone {k} has no children and is no tip: nothing would turn it")
    moves = np.zeros((bones, len(tip_list)), dtype=bool)
    for e, tip in enumerate(tip_list):
        bone = tip
        while bone >= 0:
            moves[bone, e] = True
            bone = int(rest.parents[bone])
    hanging = moves.astype(float) @ weight_array  # effector weight each bone moves
    effector_of = {tip: e for e, tip in enumerate(tip_list)}

    points: list[Point] = []
    carried: list[tuple[int, ...]] = []
    head_points = np.full(bones, -1, dtype=np.int64)
    tail_points = np.zeros(len(tip_list), dtype=np.int64)
    for k in range(bones):
        places: dict[tuple[float, ...], tuple[FloatArray, list[int]]] = {}
        for child in children[k]:
            places.setdefault(place_key(rest.heads[child]), (rest.heads[child], []))[1].append(child)
        tail = np.array([0.0, rest.lengths[k], 0.0])
        if k in effector_of:
            places.setdefault(place_key(tail), (tail, []))
        mine = []
        for where, (offset, at) in places.items():
            e = effector_of.get(k, -1) if where == place_key(tail) else -1
            total = sum(float(hanging[c]) for c in at) + (float(weight_array[e]) if e >= 0 else 0.0)
            shares = tuple((c, float(hanging[c]) / total) for c in at)
            share = float(weight_array[e]) / total if e >= 0 else 0.0
            head_points[at] = len(points)
            if e >= 0:
                tail_points[e] = len(points)
            mine.append(len(points))
            points.append(Point(k, np.asarray(offset, dtype=np.float64), tuple(at), e, total, shares, share))
        carried.append(tuple(mine))
    branches = tuple(_branch(rest, children, tip, effector_of, moves) for tip in tip_list)
    return TreeBones(
        rest, np.array(tip_list, dtype=np.int64), weight_array, tuple(points), tuple(carried), head_points,
        tail_points, moves, branches,
    )  # fmt: skip


def _branch(
    rest: TreeRest, children: list[list[int]], tip: int, effector_of: dict[int, int], moves: NDArray[np.bool_]
) -> Branch:
    """The run of bones from the one below the nearest fork or other tip above ``tip`` down to it."""
    bones = [tip]
    while (parent := int(rest.parents[bones[-1]])) >= 0 and len(children[parent]) == 1 and parent not in effector_of:
        bones.append(parent)
    return Branch(tuple(reversed(bones)), bool(moves[bones[-1]].sum() == 1))
