"""A chain of bones as rigid bodies: from local rotations to joint positions and back.

Every position and rotation here is in the chain's base frame: the root bone's rest frame, placed at the
root's head (its origin). Bone ``k`` is a rigid body from its head to the next joint, the head of bone
``k + 1``, or for the last bone its tail; that offset is fixed in the bone's own rest frame, which is how a
disconnected bone hangs from its parent. A bone's pose is its local rotation: relative to its rest frame
under its posed parent, as Blender's pose bones rotate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..core import (
    FloatArray,
    matrix_to_quat,
    norms,
    quat_between,
    quat_multiply,
    quat_to_matrix,
    sign_continuous,
    twist,
)


@dataclass(frozen=True)
class ChainRest:
    """The rest geometry of a chain of ``m`` bones.

    Attributes
    ----------
    rest_rotations : ndarray, shape (m, 3, 3)
        Each bone's rest frame relative to its parent's rest frame; the root's is the identity (the base
        frame is the root's rest frame).
    offsets : ndarray, shape (m, 3)
        From each bone's head to the next joint (the next bone's head, or the last bone's tail), in the
        bone's own rest frame. Their lengths are the segment lengths the solver keeps. An offset of exactly
        zero (a bone whose child's head sits on its own head, as a BVH skeleton's joints often do) carries
        nothing: turning the bone only turns what hangs from it.
    """

    rest_rotations: FloatArray
    offsets: FloatArray

    def __post_init__(self) -> None:
        m = len(self.offsets)
        if self.rest_rotations.shape != (m, 3, 3) or self.offsets.shape != (m, 3) or m < 1:
            raise ValueError(
                f"a chain of m >= 1 bones needs rest_rotations (m, 3, 3) and offsets (m, 3), got "
                f"{self.rest_rotations.shape} and {self.offsets.shape}"
            )

    @cached_property
    def lengths(self) -> FloatArray:
        """Segment lengths, shape (m,). (This and the tables below are made once per rest: never change its
        arrays in place.)"""
        return np.asarray(np.linalg.norm(self.offsets, axis=1), dtype=np.float64)

    @cached_property
    def axes(self) -> FloatArray:
        """Each offset's direction, (m, 3); a zero offset's stays zero."""
        return np.asarray(self.offsets / np.where(self.lengths > 0, self.lengths, 1.0)[:, None], dtype=np.float64)

    @cached_property
    def rest_quats(self) -> FloatArray:
        """Each bone's rest frame relative to its parent's, as a quaternion (m, 4)."""
        return matrix_to_quat(self.rest_rotations)

    def stretched_offsets(self, scales: FloatArray) -> FloatArray:
        """The offsets (F, m, 3) of bones scaled along their own Y axes by ``scales`` (F, m), as a bone's
        Y scale moves what hangs from it."""
        offsets = np.repeat(self.offsets[None], len(scales), axis=0)
        offsets[..., 1] *= scales
        return offsets


def forward_kinematics(
    rest: ChainRest, rotations: FloatArray, scales: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """Joint positions and bone orientations of a chain posed by local rotations.

    Parameters
    ----------
    rest : ChainRest
    rotations : ndarray, shape (F, m, 4)
        Local rotation quaternions (w, x, y, z) of each bone on each frame.
    scales : ndarray, shape (F, m), optional
        Each bone's scale along its own Y axis (a stretched bone; see ``ChainRest.stretched_offsets``); 1 by
        default.

    Returns
    -------
    joints : ndarray, shape (F, m+1, 3)
        Heads of the bones, then the last bone's tail.
    orientations : ndarray, shape (F, m, 3, 3)
        Each posed bone's frame in the base frame.
    """
    frames, bones = rotations.shape[:2]
    if frames == 1 and bones <= FLOAT_BONES:  # numpy's per-call cost would be most of the time: plain floats
        return _one_pose(rest, rotations[0], None if scales is None else scales[0])
    joints = np.zeros((frames, bones + 1, 3))
    orientations = np.empty((frames, bones, 3, 3))
    offsets = np.broadcast_to(rest.offsets, (frames, bones, 3)) if scales is None else rest.stretched_offsets(scales)
    # Only the product down the chain is a loop over bones: every bone's turn, and every segment once the
    # orientations are known, in one call each (numpy's per-call cost is most of a few frames' time; each
    # value is computed as a call per bone computes it).
    turns = quat_to_matrix(rotations)
    parent = np.broadcast_to(np.eye(3), (frames, 3, 3))
    for k in range(bones):
        orientations[:, k] = parent @ rest.rest_rotations[k] @ turns[:, k]
        parent = orientations[:, k]
    np.cumsum(np.einsum("fkij,fkj->fki", orientations, offsets), axis=1, out=joints[:, 1:])
    return joints, orientations


#: Up to this many bones, ``forward_kinematics`` poses one frame on plain floats.
FLOAT_BONES = 32


def _one_pose(rest: ChainRest, rotations: FloatArray, scales: FloatArray | None) -> tuple[FloatArray, FloatArray]:
    """``forward_kinematics`` of one frame on plain floats, rotations (m, 4) and scales (m,): the same products
    in the same order, each bone's segment summed over its offset's components in order (the array version's
    ``einsum`` may pair them otherwise: the same to rounding). Returns (1, m+1, 3) and (1, m, 3, 3)."""
    offsets = rest.offsets.tolist()
    if scales is not None:
        for offset, scale in zip(offsets, scales.tolist(), strict=True):
            offset[1] *= scale
    x = y = z = 0.0
    joints: list[tuple[float, float, float]] = [(x, y, z)]
    orientations = []
    parent: _Matrix = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    for (w, qx, qy, qz), rest_rotation, (ox, oy, oz) in zip(
        rotations.tolist(), rest.rest_rotations.tolist(), offsets, strict=True
    ):
        xx, yy, zz, xy, xz, yz = qx * qx, qy * qy, qz * qz, qx * qy, qx * qz, qy * qz  # quat_to_matrix's terms
        wx, wy, wz = w * qx, w * qy, w * qz
        turn = (
            (1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)),
            (2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)),
            (2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)),
        )
        parent = _times(_times(parent, rest_rotation), turn)
        orientations.append(parent)
        (p00, p01, p02), (p10, p11, p12), (p20, p21, p22) = parent
        x, y, z = (
            x + (p00 * ox + p01 * oy + p02 * oz),
            y + (p10 * ox + p11 * oy + p12 * oz),
            z + (p20 * ox + p21 * oy + p22 * oz),
        )
        joints.append((x, y, z))
    return np.array([joints], dtype=np.float64), np.array([orientations], dtype=np.float64)


#: A 3 x 3 matrix on plain floats, row after row.
_Matrix = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]


def _times(a: _Matrix | list[list[float]], b: _Matrix | list[list[float]]) -> _Matrix:
    """The product of two 3 x 3 matrices on plain floats, each entry summed in order."""
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = a
    (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = b
    return (
        (a00 * b00 + a01 * b10 + a02 * b20, a00 * b01 + a01 * b11 + a02 * b21, a00 * b02 + a01 * b12 + a02 * b22),
        (a10 * b00 + a11 * b10 + a12 * b20, a10 * b01 + a11 * b11 + a12 * b21, a10 * b02 + a11 * b12 + a12 * b22),
        (a20 * b00 + a21 * b10 + a22 * b20, a20 * b01 + a21 * b11 + a22 * b21, a20 * b02 + a21 * b12 + a22 * b22),
    )


def local_rotations(rest: ChainRest, joints: FloatArray, input_rotations: FloatArray) -> FloatArray:
    """The local rotations that put each bone along its solved segment, keeping the twist it had.

    Each bone gets the smallest rotation (swing) that turns its rest offset onto its new segment, after the
    twist about that offset that its input rotation had (swing-twist decomposition about the offset), so
    no bone rolls: the twist of the input pose is kept exactly. A bone whose offset is zero (its next joint on
    its own head) has no segment to point along: it keeps its input rotation.

    Parameters
    ----------
    rest : ChainRest
    joints : ndarray, shape (F, m+1, 3)
        Solved joint positions, in the base frame, with the segment lengths of ``rest``.
    input_rotations : ndarray, shape (F, m, 4) or (m, 4)
        The local rotations the bones had before solving (their twist is kept, and the first frame's
        quaternion signs follow them).

    Returns
    -------
    ndarray, shape (F, m, 4)
        Local rotation quaternions, sign-continuous from frame to frame.
    """
    frames, bones = joints.shape[0], joints.shape[1] - 1
    inputs = np.asarray(input_rotations).reshape(-1, bones, 4)  # (F or 1, m, 4)
    carried = rest.lengths > 0
    if frames == 1 and len(inputs) == 1:  # numpy's per-call cost would be all of the time: plain floats
        found = _one_frame(rest, carried.tolist(), joints[0].tolist(), inputs[0].tolist())
        if found is not None:
            return found[None]
    # Bone by bone, every frame at once, in the layout (4 or 3, F): one contiguous row per component.
    twists = twist(inputs, rest.axes).transpose(1, 2, 0)  # (m, 4, F or 1): the twists kept
    segments = np.diff(joints, axis=1).transpose(1, 2, 0)  # (m, 3, F)
    sizes = norms(segments)  # (m, F), summed as one frame alone sums them (``einsum`` pairs by their number)
    segments = segments / np.where(carried[:, None], sizes, 1.0)[:, None]
    result = np.empty((bones, 4, frames))
    parent = np.zeros((4, frames))
    parent[0] = 1.0
    for k in range(bones):
        frame = _product(parent, rest.rest_quats[k][:, None])  # the bone's rest frame under its posed parent
        if carried[k]:
            result[k] = _product(_swing(rest.axes[k], _rotate_back(frame, segments[k])), twists[k])
        else:
            result[k] = np.broadcast_to(inputs[:, k].T, (4, frames))
        parent = _product(frame, result[k])
    return sign_continuous(result.transpose(2, 0, 1), reference=inputs[0])


def _one_frame(
    rest: ChainRest, carried: list[bool], joints: list[list[float]], inputs: list[list[float]]
) -> FloatArray | None:
    """``local_rotations`` of one frame on plain floats, joints (m+1, 3) and input rotations (m, 4): every
    operation that of the functions it calls on arrays (``twist``, ``_product``, ``_rotate_back``, ``_swing``,
    ``sign_continuous``), in their order, so the rotations are the same to the bit. Returns (m, 4), or None
    where a bone that carries its next joint is solved to no length (left to the arrays)."""
    result = []
    pw, px, py, pz = 1.0, 0.0, 0.0, 0.0
    for k, ((bw, bx, by, bz), (x, y, z), (qw, qx, qy, qz)) in enumerate(
        zip(rest.rest_quats.tolist(), rest.axes.tolist(), inputs, strict=True)
    ):
        fw = pw * bw - px * bx - py * by - pz * bz  # the bone's rest frame under its posed parent
        fx = pw * bx + px * bw + py * bz - pz * by
        fy = pw * by - px * bz + py * bw + pz * bx
        fz = pw * bz + px * by - py * bx + pz * bw
        if carried[k]:
            (hx, hy, hz), (ex, ey, ez) = joints[k], joints[k + 1]
            vx, vy, vz = ex - hx, ey - hy, ez - hz  # the solved segment, made unit length
            length = math.sqrt(vx * vx + vy * vy + vz * vz)
            if not length > 0.0:  # a bone solved to no length: the arrays give it NaN
                return None
            vx, vy, vz = vx / length, vy / length, vz / length
            tx, ty, tz = 2.0 * (fz * vy - fy * vz), 2.0 * (fx * vz - fz * vx), 2.0 * (fy * vx - fx * vy)
            dx = vx + fw * tx - (fy * tz - fz * ty)
            dy = vy + fw * ty - (fz * tx - fx * tz)
            dz = vz + fw * tz - (fx * ty - fy * tx)
            sw, sx, sy, sz = x * dx + y * dy + z * dz + 1.0, y * dz - z * dy, z * dx - x * dz, x * dy - y * dx
            if sw < _OPPOSITE:
                sw, sx, sy, sz = quat_between(rest.axes[k], np.array([dx, dy, dz])).tolist()
            size = math.sqrt(sw * sw + sx * sx + sy * sy + sz * sz)
            sw, sx, sy, sz = sw / size, sx / size, sy / size, sz / size
            along = qx * x + qy * y + qz * z  # the twist the input had about the bone's axis
            tw, tx, ty, tz = qw, along * x, along * y, along * z
            size = math.sqrt(tw * tw + tx * tx + ty * ty + tz * tz)
            tw, tx, ty, tz = (tw / size, tx / size, ty / size, tz / size) if size > 1e-12 else (1.0, 0.0, 0.0, 0.0)
            rw = sw * tw - sx * tx - sy * ty - sz * tz
            rx = sw * tx + sx * tw + sy * tz - sz * ty
            ry = sw * ty - sx * tz + sy * tw + sz * tx
            rz = sw * tz + sx * ty - sy * tx + sz * tw
        else:
            rw, rx, ry, rz = qw, qx, qy, qz
        pw, px, py, pz = (
            fw * rw - fx * rx - fy * ry - fz * rz,
            fw * rx + fx * rw + fy * rz - fz * ry,
            fw * ry - fx * rz + fy * rw + fz * rx,
            fw * rz + fx * ry - fy * rx + fz * rw,
        )
        if rw * qw + rx * qx + ry * qy + rz * qz < 0:  # on the input's side
            rw, rx, ry, rz = -rw, -rx, -ry, -rz
        result.append((rw, rx, ry, rz))
    return np.array(result)


#: Where ``1 + cos`` of a swing is below this, its axis and direction are opposite: no unique smallest turn.
_OPPOSITE = 1e-12


def _product(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton products ``a * b`` of quaternions stored as columns, (4, F)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    product = np.empty(np.broadcast_shapes(a.shape, b.shape))
    product[0] = aw * bw - ax * bx - ay * by - az * bz
    product[1] = aw * bx + ax * bw + ay * bz - az * by
    product[2] = aw * by - ax * bz + ay * bw + az * bx
    product[3] = aw * bz + ax * by - ay * bx + az * bw
    return product


def _rotate_back(q: FloatArray, v: FloatArray) -> FloatArray:
    """Vectors ``v`` (3, F) turned by the inverse of unit quaternions ``q`` (4, F) (``rotations.quat_rotate``
    with the vector part negated)."""
    w, ux, uy, uz = q
    vx, vy, vz = v
    tx, ty, tz = 2.0 * (uz * vy - uy * vz), 2.0 * (ux * vz - uz * vx), 2.0 * (uy * vx - ux * vy)
    rotated = np.empty(v.shape)
    rotated[0] = vx + w * tx - (uy * tz - uz * ty)
    rotated[1] = vy + w * ty - (uz * tx - ux * tz)
    rotated[2] = vz + w * tz - (ux * ty - uy * tx)
    return rotated


def _swing(axis: FloatArray, directions: FloatArray) -> FloatArray:
    """``rotations.quat_between`` from one unit ``axis`` (3,) to unit ``directions`` (3, F), as columns (4, F):
    ``(1 + cos, axis x direction)``, normalised (the half-angle form), written out element by element (as
    ``_one_frame`` repeats it)."""
    x, y, z = axis
    dx, dy, dz = directions
    q = np.empty((4, directions.shape[1]))
    q[0] = x * dx + y * dy + z * dz + 1.0
    q[1] = y * dz - z * dy
    q[2] = z * dx - x * dz
    q[3] = x * dy - y * dx
    opposite = np.flatnonzero(q[0] < _OPPOSITE)
    if opposite.size:
        q[:, opposite] = quat_between(axis, directions[:, opposite].T).T
    return np.asarray(q / np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), dtype=np.float64)


def inherited_stretch(rest: ChainRest, rotations: FloatArray, scales: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The rotations and Y scales to key on stretched bones whose children inherit their scale, as Blender's
    default "Full" scale inheritance does, so each bone lies where ``rotations`` and ``scales`` put it.

    A child of a bone scaled along Y inherits that scale in its parent's axes, which also lengthens and
    turns the child when the joint is bent. Each bone's keyed rotation and Y scale undo that: its Y axis,
    seen through everything it inherits, points along the solved direction with the solved length. (The
    other two axes of a bone below a stretched, bent joint are sheared, as with Blender's own IK.)

    Parameters
    ----------
    rest : ChainRest
    rotations : ndarray, shape (F, m, 4)
        Solved local rotations (rigid bones).
    scales : ndarray, shape (F, m)
        Solved Y scales.

    Returns
    -------
    rotations : ndarray, shape (F, m, 4)
        Local rotations to key; each keeps its solved twist about Y.
    scales : ndarray, shape (F, m)
        Y scales to key.
    """
    solved = forward_kinematics(rest, rotations, scales)[1]
    return inherit_stretch(np.arange(-1, len(rest.offsets) - 1), rest.rest_rotations, solved, rotations, scales)


def inherit_stretch(
    parents: NDArray[np.int64],
    rest_rotations: FloatArray,
    solved: FloatArray,
    rotations: FloatArray,
    scales: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """``inherited_stretch`` for bones in any hierarchy (a chain, a tree), parents before children.

    Parameters
    ----------
    parents : ndarray of int, shape (m,)
        Each bone's parent among them; -1 for a bone with none (its parent is the base frame).
    rest_rotations : ndarray, shape (m, 3, 3)
        Each bone's rest frame relative to its parent's.
    solved : ndarray, shape (F, m, 3, 3)
        Each bone's solved orientation in the base frame.
    rotations, scales : ndarray, shapes (F, m, 4) and (F, m)
        Solved local rotations (for their twists) and Y scales.
    """
    frames, bones = rotations.shape[:2]
    keyed_rotations = np.empty_like(rotations)
    keyed_scales = np.empty_like(scales)
    inherited = np.empty((frames, bones, 3, 3))  # each bone's full linear map, scale included
    y_axis = np.array([0.0, 1.0, 0.0])
    for k in range(bones):
        above = np.eye(3) if parents[k] < 0 else inherited[:, parents[k]]
        linear = above @ rest_rotations[k]
        wanted = np.linalg.solve(linear, (solved[:, k] @ y_axis)[..., None])[..., 0]  # the Y axis to key
        size = np.linalg.norm(wanted, axis=-1)
        swing = quat_between(np.broadcast_to(y_axis, wanted.shape), wanted / size[:, None])
        keyed_rotations[:, k] = quat_multiply(swing, twist(rotations[:, k], y_axis))
        keyed_scales[:, k] = scales[:, k] * size
        stretch = np.ones((frames, 3))
        stretch[:, 1] = keyed_scales[:, k]
        inherited[:, k] = linear @ quat_to_matrix(keyed_rotations[:, k]) * stretch[:, None, :]
    return keyed_rotations, keyed_scales
