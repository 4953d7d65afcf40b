"""Compute where the points of posed nodes (bones, objects) are on every frame, given each node's location,
rotation and scale channels and what it hangs from: the forward kinematics that key reduction measures its
error with, as Blender poses bones.

A node's posed matrix is ``hang @ T(location) @ R(rotation) @ S(scale)``, its ``hang`` the posed matrix of its
parent node times its ``offset`` (for a node without a parent, the offset alone: its world frame on each frame).
For a bone under its parent bone the offset is its rest frame under the parent (``bone.matrix`` and its head
from the parent's head); for any other node it may change from frame to frame (what lies between two bones
whose keys are kept, or what a top node hangs from in the world), and is then given per frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..solver import EULER_ORDERS, FloatArray, axis_angle_to_quat, quat_multiply, quat_to_matrix

#: What a node's channels hold: its location, its rotation (in a rotation mode), its scale.
KINDS = ("location", "rotation", "scale")
#: Rotation modes besides the Euler orders, with the number of values each has.
ROTATION_MODES = {"QUATERNION": 4, "AXIS_ANGLE": 4, **{order: 3 for order in EULER_ORDERS}}

#: What a keyed channel's F-curves hold on some frames (R, k), given those frames' rows (R,), becomes what the node
#: plays there (R, n): a layer's values blended over what plays below it, say.
Play = Callable[[FloatArray, NDArray[np.int64]], FloatArray]


@dataclass(frozen=True)
class Channels:
    """One of a node's properties (its location, rotation or scale) on every frame, and which of its values
    are keyed in F-curves whose keys may be thinned.

    Attributes
    ----------
    kind : {"location", "rotation", "scale"}
    mode : str
        For a rotation, its mode (``"QUATERNION"``, ``"AXIS_ANGLE"`` or an Euler order such as ``"XYZ"``); ""
        otherwise.
    values : ndarray, shape (F, n)
        What the node plays on each frame (n = 3, or 4 for a quaternion or axis-angle): the pose the error is
        measured from.
    keyed : ndarray, shape (F, k), or None
        What the F-curves of the keyed values hold on each frame (their keys on every frame); None for a
        property whose keys are left alone.
    indices : tuple of int
        Which of the n values the k F-curves key, in their order.
    play : callable, optional
        Turns keyed values on some rows into what the node plays there (see ``Play``); by default the keyed values
        replace ``values`` at ``indices``.
    """

    kind: str
    values: FloatArray
    mode: str = ""
    keyed: FloatArray | None = None
    indices: tuple[int, ...] = ()
    play: Play | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        width = ROTATION_MODES.get(self.mode) if self.kind == "rotation" else 3
        if width is None:
            raise ValueError(f"unknown rotation mode {self.mode!r}")
        if self.values.ndim != 2 or self.values.shape[1] != width:
            raise ValueError(
                f"a {self.kind} ({self.mode or 'xyz'}) has {width} values a frame, got {self.values.shape}"
            )
        if self.keyed is not None and (self.keyed.shape != (len(self.values), len(self.indices))):
            raise ValueError(f"keyed values must be (F, {len(self.indices)}), got {self.keyed.shape}")

    def plays(self, keyed: FloatArray, rows: NDArray[np.int64]) -> FloatArray:
        """What the node plays on ``rows`` (R,) when its F-curves hold ``keyed`` (R, k) there."""
        if self.play is not None:
            return self.play(keyed, rows)
        values = np.take(self.values, rows, axis=0)
        values[:, list(self.indices)] = keyed
        return np.asarray(values, dtype=np.float64)


def turns(mode: str, values: FloatArray) -> FloatArray:
    """The unit quaternions (..., 4) of rotations given in a rotation mode (..., n): normalised quaternions, an
    axis and angle, or Euler angles (x, y, z) turned in the order's order (the first axis first)."""
    if mode == "QUATERNION":  # normalised (the sum of squares written out: a norm over the last axis is slow)
        w, x, y, z = values[..., 0], values[..., 1], values[..., 2], values[..., 3]
        return np.asarray(values / np.sqrt(w * w + x * x + y * y + z * z)[..., None], dtype=np.float64)
    if mode == "AXIS_ANGLE":
        return axis_angle_to_quat(values)
    turned: FloatArray | None = None
    for letter in mode:
        axis = "XYZ".index(letter)
        half = 0.5 * values[..., axis]
        about = np.zeros((*values.shape[:-1], 4))
        about[..., 0], about[..., 1 + axis] = np.cos(half), np.sin(half)
        turned = about if turned is None else quat_multiply(about, turned)
    assert turned is not None, "an Euler order has three axes"
    return turned


def linear(channels: Channels, values: FloatArray) -> FloatArray:
    """The 3 x 3 part (..., 3, 3) a property's ``values`` (..., n) give a node's basis: its rotation, or its
    scale (a diagonal); a location gives none (identity). The values of several nodes with the same kind and
    mode may be stacked along a leading axis."""
    if channels.kind == "rotation":
        return quat_to_matrix(turns(channels.mode, values))
    if channels.kind == "scale":
        return np.asarray(values[..., :, None] * np.eye(3), dtype=np.float64)
    return np.broadcast_to(np.eye(3), (*values.shape[:-1], 3, 3))


def basis(properties: Sequence[Channels], values: Sequence[FloatArray]) -> FloatArray:
    """A node's basis on each frame (F, 4, 4), ``T(location) @ R(rotation) @ S(scale)``, given its properties and
    the values (F, n) each plays; a property it lacks is the identity."""
    frames = len(values[0]) if values else 1
    matrices = np.zeros((frames, 4, 4))
    matrices[:, 3, 3] = 1.0
    linear_part = np.broadcast_to(np.eye(3), (frames, 3, 3))
    by_kind = {channels.kind: (channels, value) for channels, value in zip(properties, values, strict=True)}
    for kind in ("rotation", "scale"):
        if kind in by_kind:
            linear_part = linear_part @ linear(*by_kind[kind])
    matrices[:, :3, :3] = linear_part
    if "location" in by_kind:
        matrices[:, :3, 3] = by_kind["location"][1]
    return matrices


@dataclass(frozen=True)
class Skeleton:
    """Nodes posed one under another, and the points measured on each.

    Attributes
    ----------
    parents : tuple of int
        Each node's parent node, an earlier one, or -1.
    offsets : tuple of ndarray, shape (4, 4) or (F, 4, 4)
        From the parent's posed frame (the world, for a node without a parent) to the node's frame before its own
        basis.
    points : tuple of ndarray, shape (P, 3)
        The points measured on each node, in its posed frame (with its scale); P may be 0.
    """

    parents: tuple[int, ...]
    offsets: tuple[FloatArray, ...]
    points: tuple[FloatArray, ...]

    def __post_init__(self) -> None:
        if not len(self.parents) == len(self.offsets) == len(self.points):
            raise ValueError("a skeleton needs a parent, an offset and points for every node")
        for k, parent in enumerate(self.parents):
            if not -1 <= parent < k:
                raise ValueError(f"node {k}'s parent must be an earlier node or -1, got {parent}")

    @property
    def point_nodes(self) -> NDArray[np.int64]:
        """The node of each point, in the order ``points_of`` lists them (P_total,)."""
        return np.repeat(np.arange(len(self.points)), [len(p) for p in self.points])

    @cached_property
    def beneath(self) -> NDArray[np.bool_]:
        """(B, B): whether node ``j`` is node ``k`` or under it, at ``[k, j]``."""
        under = np.eye(len(self.parents), dtype=bool)
        for j, parent in enumerate(self.parents):
            if parent >= 0:
                under[:, j] |= under[:, parent]
        return under

    def below(self, node: int) -> list[int]:
        """The node and every node under it, in order."""
        return [int(k) for k in np.flatnonzero(self.beneath[node])]


def posed(skeleton: Skeleton, bases: Sequence[FloatArray]) -> FloatArray:
    """Compute every node's posed matrix in world space (F, B, 4, 4) given each node's basis (F, 4, 4)."""
    return np.moveaxis(posed_nodes(skeleton, bases), 0, 1)


def posed_nodes(
    skeleton: Skeleton, bases: Sequence[FloatArray] | FloatArray, out: FloatArray | None = None
) -> FloatArray:
    """``posed``, node after node (B, F, 4, 4), given each node's basis (F, 4, 4) (into ``out`` where given, which
    may be ``bases`` itself: a node's basis is read before its posed matrix is written, after its parent's)."""
    frames = max(len(b) for b in bases)
    world = np.empty((len(bases), frames, 4, 4)) if out is None else out
    for k, (parent, offset) in enumerate(zip(skeleton.parents, skeleton.offsets, strict=True)):
        hang = offset if parent < 0 else world[parent] @ offset
        np.matmul(hang, bases[k], out=world[k])
    return world


def points_of(skeleton: Skeleton, world: FloatArray) -> FloatArray:
    """Compute every measured point in world space (F, P_total, 3), node after node, given the nodes' posed
    matrices (F, B, 4, 4)."""
    nodes = np.ascontiguousarray(np.moveaxis(world, 1, 0))  # (B, F, 4, 4): each node's frames one product
    count, frames = len(nodes), len(world)
    counts = {len(points) for points in skeleton.points}
    if len(counts) == 1:  # as many points on every node (bones): a product per node
        (each,) = counts
        local = np.concatenate([np.stack(skeleton.points), np.ones((count, each, 1))], axis=2)  # (B, each, 4)
        placed = nodes.reshape(count, 4 * frames, 4) @ np.swapaxes(local, 1, 2)  # (B, 4 F, each)
        placed = placed.reshape(count, frames, 4, each)[:, :, :3]
        return np.ascontiguousarray(placed.transpose(1, 0, 3, 2)).reshape(frames, count * each, 3)
    owners = skeleton.point_nodes
    local = np.concatenate([p.reshape(-1, 3) for p in skeleton.points]) if len(owners) else np.zeros((0, 3))
    matrices = world[:, owners]
    return np.asarray(np.einsum("fpij,pj->fpi", matrices[..., :3, :3], local) + matrices[..., :3, 3], dtype=np.float64)


def bone_points(length: float) -> FloatArray:
    """The points measured on a bone of ``length``, in its posed frame (5, 3): its head, its tail, and points a
    fifth of its length off its axis along X, along Z and along both. How far an error moves a point is convex
    in the point (the difference of two affine maps), so no point of the shape they span (the bone's axis, the
    square off its head) moves farther than the farthest of them."""
    off = 0.2 * length
    return np.array([[0.0, 0.0, 0.0], [0.0, length, 0.0], [off, 0.0, 0.0], [0.0, 0.0, off], [off, 0.0, off]])
