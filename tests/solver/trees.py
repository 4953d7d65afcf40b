"""Trees for the tree solvers' tests and benchmark: the rigs the issue names (a Y, a hand, a 3-level tree),
random trees of limbs (of joints, and of bones), random poses of a tree, and the invariants every solution must
keep."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from fabrik_addon.solver import Tree, TreeRest
from fabrik_addon.solver.core import quat_between, quat_rotate, quat_to_matrix

from .chains import random_rest_rotations

FloatArray = NDArray[np.float64]


class _Builder:
    """Joints added one at a time: a parent, a body label, a position."""

    def __init__(self, root: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        self.parents, self.bodies, self.points = [-1], [-1], [np.array(root, dtype=float)]

    def add(self, parent: int, offset: npt.ArrayLike, body: int | None = None) -> int:
        """A joint at ``offset`` from ``parent``, on its own body unless ``body`` labels a shared one."""
        self.parents.append(parent)
        self.bodies.append(len(self.parents) if body is None else body)
        self.points.append(self.points[parent] + np.asarray(offset, dtype=float))
        return len(self.parents) - 1

    def limb(self, start: int, offsets: npt.ArrayLike) -> int:
        """A chain of segments from ``start``; returns its last joint."""
        joint = start
        for offset in np.asarray(offsets, dtype=float):
            joint = self.add(joint, offset)
        return joint

    def tree(self) -> Tree:
        return Tree(self.parents, np.array(self.points), self.bodies)


def y_tree() -> tuple[Tree, list[int]]:
    """A Y: a 4-bone trunk up Z, two 6-bone branches leaving its top; the two branch tips."""
    b = _Builder()
    top = b.limb(0, np.tile([0.0, 0.0, 1.0], (4, 1)))
    tips = [b.limb(top, np.tile([side * 0.6, 0.0, 0.8], (6, 1))) for side in (-1.0, 1.0)]
    return b.tree(), tips


def hand() -> tuple[Tree, list[int]]:
    """An arm (upper arm, forearm), a palm, and five 3-bone fingers whose roots are disconnected from the
    palm: one rigid body from the wrist carrying the five finger roots. Returns the tree and the fingertips."""
    b = _Builder()
    wrist = b.limb(0, [[0.0, 0.0, 3.0], [0.0, 0.0, 3.0]])
    palm = 1000
    roots = [b.add(wrist, [-1.0 + 0.5 * f, 0.0, 1.0 + 0.2 * (f % 3)], body=palm) for f in range(5)]
    tips = [b.limb(root, np.tile([0.05 * (f - 2), 0.0, 0.7], (3, 1))) for f, root in enumerate(roots)]
    return b.tree(), tips


def three_level_tree() -> tuple[Tree, list[int]]:
    """A 63-bone tree of three levels: a 6-bone trunk forks into three 4-bone limbs, each forking into three
    4-bone twigs (9 tips), and the trunk's top also carries a rigid crown (one body) whose three disconnected
    roots start 2-bone horns (12 tips in all)."""
    b = _Builder()
    top = b.limb(0, np.tile([0.0, 0.0, 0.5], (6, 1)))
    tips = []
    for i in range(3):
        angle = 2 * np.pi * i / 3
        out = np.array([np.cos(angle), np.sin(angle), 1.0]) * 0.4
        fork = b.limb(top, np.tile(out, (4, 1)))
        for k in range(3):
            twist = angle + (k - 1) * 0.6
            tips.append(b.limb(fork, np.tile([0.3 * np.cos(twist), 0.3 * np.sin(twist), 0.25], (4, 1))))
    crown = 2000
    for i in range(3):
        angle = 2 * np.pi * (i + 0.5) / 3
        root = b.add(top, [0.3 * np.cos(angle), 0.3 * np.sin(angle), 0.1], body=crown)
        tips.append(b.limb(root, np.tile([0.0, 0.0, 0.3], (2, 1))))
    return b.tree(), tips


def limb_tree(rng: np.random.Generator, limbs: int, palm_share: float = 0.3) -> Tree:
    """A random tree of ``limbs`` limbs, each a chain of 2 to 6 segments hanging from the root or from the end
    of an earlier limb; with probability ``palm_share`` a limb's start carries a rigid palm of 2 to 4
    disconnected limb roots instead. Overall scale from 1e-3 to 1e3, segments varying 10x within the tree,
    every direction random."""
    scale = 10 ** rng.uniform(-3, 3)
    b = _Builder(tuple(rng.normal(size=3) * scale))
    ends = [0]

    def offset() -> FloatArray:
        direction = rng.normal(size=3)
        return np.asarray(direction / np.linalg.norm(direction) * scale * 10 ** rng.uniform(-1, 0))

    for _ in range(limbs):
        start = ends[int(rng.integers(len(ends)))]
        roots = [start]
        if rng.random() < palm_share:
            palm = 1000 + len(b.parents)
            roots = [b.add(start, offset(), body=palm) for _ in range(int(rng.integers(2, 5)))]
        for root in roots:
            ends.append(b.limb(root, [offset() for _ in range(int(rng.integers(2, 7)))]))
    return b.tree()


def leaves(tree: Tree) -> NDArray[np.int64]:
    """Joints with no child."""
    has_child = np.zeros(tree.size, dtype=bool)
    has_child[tree.parents[1:]] = True
    return np.flatnonzero(~has_child)


def random_poses(tree: Tree, rng: np.random.Generator, frames: int) -> FloatArray:
    """Poses (frames, n, 3) the tree can take: every body turned by its own uniformly random rotation about its
    parent joint, root where it is."""
    turns = rng.normal(size=(frames, int(tree.bodies.max()) + 1, 4))
    turns /= np.linalg.norm(turns, axis=2, keepdims=True)
    poses = np.empty((frames, tree.size, 3))
    poses[:, 0] = tree.joints[0]
    for j in range(1, tree.size):
        parent = tree.parents[j]
        rest = np.broadcast_to(tree.joints[j] - tree.joints[parent], (frames, 3))
        poses[:, j] = poses[:, parent] + quat_rotate(turns[:, tree.bodies[j]], rest)
    return poses


def shape_error(tree: Tree, poses: FloatArray) -> float:
    """The largest relative change of any distance the tree must keep: every segment length, and within each
    body every distance between its head and its joints and between any two of its joints (a body that kept
    its lengths but scissored fails)."""
    worst = 0.0
    for body in range(int(tree.bodies.max()) + 1):
        joints = np.flatnonzero(tree.bodies == body)
        points = np.concatenate([[tree.parents[joints[0]]], joints])
        pairs = np.triu_indices(len(points), k=1)
        before = np.linalg.norm(tree.joints[points][:, None] - tree.joints[points][None], axis=-1)[pairs]
        after = np.linalg.norm(poses[:, points][:, :, None] - poses[:, points][:, None], axis=-1)[:, *pairs]
        worst = max(worst, float((np.abs(after - before) / before).max()))
    return worst


def limb_bones(rng: np.random.Generator, limbs: int) -> tuple[TreeRest, list[int]]:
    """A random tree of bones: a root bone and ``limbs`` limbs of 2 to 4 bones, each hanging from the tail of
    the root or of an earlier limb's last bone (several there make a fork), or with probability 0.3 from a palm
    bone there that carries 2 or 3 limbs at disconnected offsets; lengths from 0.3 to 1.5, random rest frames.
    Returns the tree and its tips: every bone without children."""
    parents, heads, lengths = [-1], [np.zeros(3)], [rng.uniform(0.3, 1.5)]

    def add(parent: int, head: FloatArray) -> int:
        parents.append(parent)
        heads.append(head)
        lengths.append(rng.uniform(0.3, 1.5))
        return len(parents) - 1

    def tail(bone: int) -> FloatArray:
        return np.array([0.0, lengths[bone], 0.0])

    ends = [0]
    for _ in range(limbs):
        start = ends[int(rng.integers(len(ends)))]
        roots = [(start, tail(start))]
        if rng.random() < 0.3:
            palm = add(start, tail(start))
            roots = [(palm, rng.normal(size=3) * 0.5 + tail(palm)) for _ in range(int(rng.integers(2, 4)))]
        for parent, head in roots:
            bone = add(parent, head)
            for _ in range(int(rng.integers(1, 4))):
                bone = add(bone, tail(bone))
            ends.append(bone)
    rest = TreeRest(np.array(parents), random_rest_rotations(rng, len(parents)), np.array(heads), np.array(lengths))
    return rest, [k for k, children in enumerate(rest.children) if not children]


def bones_from_points(parents: list[int], heads: npt.ArrayLike, tails: npt.ArrayLike) -> TreeRest:
    """A tree of bones from their heads and tails (b, 3) in one frame, parents before children: each bone's
    frame turns Y onto it by the smallest turn (no roll), positions relative to the root bone's head and
    frame."""
    head, tail = np.asarray(heads, dtype=float), np.asarray(tails, dtype=float)
    lengths = np.linalg.norm(tail - head, axis=1)
    frames = quat_to_matrix(
        quat_between(np.broadcast_to([0.0, 1.0, 0.0], head.shape), (tail - head) / lengths[:, None])
    )
    rest_rotations, offsets = np.empty_like(frames), np.zeros_like(head)
    rest_rotations[0] = np.eye(3)
    for k, parent in enumerate(parents[1:], start=1):
        rest_rotations[k] = frames[parent].T @ frames[k]
        offsets[k] = frames[parent].T @ (head[k] - head[parent])
    return TreeRest(np.array(parents), rest_rotations, offsets, lengths)


def y_bones(trunk: int = 4, branch: int = 6) -> tuple[TreeRest, list[int]]:
    """``scripts/scenes/rigs.py``'s Y as a tree of bones: a trunk of ``trunk`` bones up +Z, two branches of ``branch``
    bones from its top, leaning apart; and the two branch tips."""
    parents, heads, tails = [], [], []
    for i in range(trunk):
        parents.append(i - 1)
        heads.append([0.0, 0.0, 0.5 * i])
        tails.append([0.0, 0.0, 0.5 * (i + 1)])
    tips = []
    for lean in (1.0, -1.0):
        for i in range(branch):
            parents.append(trunk - 1 if i == 0 else len(parents) - 1)
            heads.append([lean * 0.25 * i, 0.0, 0.5 * trunk + 0.4 * i])
            tails.append([lean * 0.25 * (i + 1), 0.0, 0.5 * trunk + 0.4 * (i + 1)])
        tips.append(len(parents) - 1)
    return bones_from_points(parents, heads, tails), tips


def hand_bones() -> tuple[TreeRest, list[int]]:
    """``scripts/scenes/rigs.py``'s hand as a tree of bones: an upper arm, a forearm, a palm and five fingers of three
    bones whose roots are disconnected from the palm; and the five fingertips."""
    parents = [-1, 0, 1]
    heads = [np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.05, 1.9])]
    tails = [heads[1], heads[2], np.array([0.0, 0.08, 2.25])]
    tips = []
    for finger in range(5):
        head = np.array([(finger - 2) * 0.09, 0.08, 2.3 - 0.02 * abs(finger - 2)])
        for segment in range(3):
            parents.append(2 if segment == 0 else len(parents) - 1)
            heads.append(head)
            tails.append(head + np.array([0.0, 0.01, 0.12 - 0.02 * segment]))
            head = tails[-1]
        tips.append(len(parents) - 1)
    return bones_from_points(parents, heads, tails), tips


def branching_bones(lengths: tuple[int, ...] = (6, 6, 4), fan: int = 3) -> tuple[TreeRest, list[int]]:
    """``scripts/scenes/rigs.py``'s 60-bone tree of branches as a tree of bones, and its outermost tips."""
    parents: list[int] = []
    heads: list[FloatArray] = []
    tails: list[FloatArray] = []
    tips: list[int] = []

    def grow(parent: int, level: int, direction: FloatArray) -> None:
        head = tails[parent] if parent >= 0 else np.zeros(3)
        for _ in range(lengths[level]):
            parents.append(parent)
            heads.append(head)
            tails.append(head + 0.3 * direction)
            parent, head = len(parents) - 1, tails[-1]
        if level + 1 == len(lengths):
            tips.append(parent)
            return
        for k in range(fan):
            angle = 2 * np.pi * (k + 0.25 * level) / fan
            spread = np.array([np.cos(angle), np.sin(angle), 0.0]) * (0.5 + 0.2 * level)
            grow(parent, level + 1, (direction + spread) / np.linalg.norm(direction + spread))

    grow(-1, 0, np.array([0.0, 0.0, 1.0]))
    return bones_from_points(parents, heads, tails), tips
