"""Rotation maths on arrays: quaternions (w, x, y, z) as Blender orders them, rotation matrices, Euler angles
and axis-angle, all vectorised over any leading axes. Radians throughout.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from .validate import FloatArray

#: Blender's Euler orders. "XYZ" turns about X first, then Y, then Z: the matrix is Rz @ Ry @ Rx.
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_AXIS = {"X": 0, "Y": 1, "Z": 2}


def _as(array: object) -> FloatArray:
    return cast(FloatArray, array)


def quat_multiply(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton product ``a * b`` (the rotation ``b`` first, then ``a``), shapes (..., 4).

    Written out by component (no ``moveaxis``/``stack``): the limited solver calls it on small arrays in its
    inner loops, where numpy's per-call overhead is the cost."""
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    product = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)))
    product[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    product[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    product[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    product[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return product


def quat_conjugate(q: FloatArray) -> FloatArray:
    """The inverse rotation of unit quaternions, shape (..., 4)."""
    return _as(q * np.array([1.0, -1.0, -1.0, -1.0]))


def quat_normalize(q: FloatArray) -> FloatArray:
    return _as(q / np.linalg.norm(q, axis=-1, keepdims=True))


def quat_to_matrix(q: FloatArray) -> FloatArray:
    """Rotation matrices of unit quaternions: (..., 4) -> (..., 3, 3).

    Written out by component, as ``quat_multiply`` is: the limited solver calls it on small arrays per bone.
    Up to ``FLOAT_MATRICES`` quaternions of doubles are converted one by one on plain floats with the same
    arithmetic (``_quat_to_matrix_floats``), as ``matrix_to_quat`` does.
    """
    if np.size(q) <= 4 * FLOAT_MATRICES and np.result_type(q) == np.float64:
        return _quat_to_matrix_floats(q)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.empty((*np.shape(q)[:-1], 3, 3))
    m[..., 0, 0] = 1 - 2 * (yy + zz)
    m[..., 0, 1] = 2 * (xy - wz)
    m[..., 0, 2] = 2 * (xz + wy)
    m[..., 1, 0] = 2 * (xy + wz)
    m[..., 1, 1] = 1 - 2 * (xx + zz)
    m[..., 1, 2] = 2 * (yz - wx)
    m[..., 2, 0] = 2 * (xz - wy)
    m[..., 2, 1] = 2 * (yz + wx)
    m[..., 2, 2] = 1 - 2 * (xx + yy)
    return m


def matrix_to_quat(m: FloatArray) -> FloatArray:
    """Unit quaternions (w >= 0) of rotation matrices: (..., 3, 3) -> (..., 4).

    Each of the four rows below is the quaternion scaled by 4 times one of its components; the row whose
    component is largest is the best conditioned, so every rotation converts accurately, half turns too.
    Up to ``FLOAT_MATRICES`` matrices of doubles are converted one by one on plain floats
    (``_matrix_to_quat_floats``), with the same arithmetic: the live preview's single frames pay numpy's cost per
    call otherwise.
    """
    if np.size(m) <= 9 * FLOAT_MATRICES and np.result_type(m) == np.float64:
        return _matrix_to_quat_floats(m)
    m00, m01, m02 = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    m10, m11, m12 = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    m20, m21, m22 = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    scaled = np.empty((*np.shape(m)[:-2], 4, 4))
    scaled[..., 0, :] = _columns(1 + m00 + m11 + m22, m21 - m12, m02 - m20, m10 - m01)  # 4w q
    scaled[..., 1, :] = _columns(m21 - m12, 1 + m00 - m11 - m22, m01 + m10, m02 + m20)  # 4x q
    scaled[..., 2, :] = _columns(m02 - m20, m01 + m10, 1 - m00 + m11 - m22, m12 + m21)  # 4y q
    scaled[..., 3, :] = _columns(m10 - m01, m02 + m20, m12 + m21, 1 - m00 - m11 + m22)  # 4z q
    best = np.argmax(np.diagonal(scaled, axis1=-2, axis2=-1), axis=-1)  # of 4w^2, 4x^2, 4y^2, 4z^2
    q = quat_normalize(np.take_along_axis(scaled, best[..., None, None], axis=-2)[..., 0, :])
    return _as(np.where(q[..., :1] < 0, -q, q))


#: Up to this many matrices, ``matrix_to_quat`` works on plain floats.
FLOAT_MATRICES = 32


def _matrix_to_quat_floats(m: FloatArray) -> FloatArray:
    """``matrix_to_quat`` one matrix at a time on plain floats: every operation that of the array version, in
    its order, so the quaternions are the same to the bit (``argmax``'s first largest, or first NaN, too)."""
    shape = np.shape(m)
    found = []
    for (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) in np.reshape(m, (-1, 3, 3)).tolist():
        rows = (
            (1 + m00 + m11 + m22, m21 - m12, m02 - m20, m10 - m01),
            (m21 - m12, 1 + m00 - m11 - m22, m01 + m10, m02 + m20),
            (m02 - m20, m01 + m10, 1 - m00 + m11 - m22, m12 + m21),
            (m10 - m01, m02 + m20, m12 + m21, 1 - m00 - m11 + m22),
        )
        best = 0
        for k in range(4):
            value = rows[k][k]
            if value != value:  # NaN: numpy's argmax picks the first
                best = k
                break
            if value > rows[best][best]:
                best = k
        w, x, y, z = rows[best]
        size = math.sqrt(w * w + x * x + y * y + z * z)
        w, x, y, z = w / size, x / size, y / size, z / size
        found.append((-w, -x, -y, -z) if w < 0 else (w, x, y, z))
    return np.array(found, dtype=np.float64).reshape(*shape[:-2], 4)


def _quat_to_matrix_floats(q: FloatArray) -> FloatArray:
    """``quat_to_matrix`` one quaternion at a time on plain floats, each operation that of the array version, in
    its order: the same matrices to the bit."""
    found = []
    for w, x, y, z in np.reshape(q, (-1, 4)).tolist():
        xx, yy, zz = x * x, y * y, z * z
        xy, xz, yz = x * y, x * z, y * z
        wx, wy, wz = w * x, w * y, w * z
        found.append(
            (
                (1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)),
                (2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)),
                (2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)),
            )
        )
    return np.array(found, dtype=np.float64).reshape(*np.shape(q)[:-1], 3, 3)


def _columns(*values: FloatArray) -> FloatArray:
    """Arrays of one shape (...) side by side: (..., len(values)), without ``np.stack``'s overhead."""
    result = np.empty((*np.shape(values[0]), len(values)))
    for i, value in enumerate(values):
        result[..., i] = value
    return result


def quat_rotate(q: FloatArray, v: FloatArray) -> FloatArray:
    """Rotate vectors ``v`` (..., 3) by unit quaternions ``q`` (..., 4): ``v + 2w (u x v) + 2 u x (u x v)``,
    ``u`` the vector part, written out by component (see ``quat_multiply``)."""
    w, ux, uy, uz = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    vx, vy, vz = v[..., 0], v[..., 1], v[..., 2]
    tx, ty, tz = 2.0 * (uy * vz - uz * vy), 2.0 * (uz * vx - ux * vz), 2.0 * (ux * vy - uy * vx)
    rotated = np.empty((*np.broadcast_shapes(np.shape(q)[:-1], np.shape(v)[:-1]), 3))
    rotated[..., 0] = vx + w * tx + (uy * tz - uz * ty)
    rotated[..., 1] = vy + w * ty + (uz * tx - ux * tz)
    rotated[..., 2] = vz + w * tz + (ux * ty - uy * tx)
    return rotated


def quat_between(a: FloatArray, b: FloatArray) -> FloatArray:
    """The smallest rotation taking unit vectors ``a`` to unit vectors ``b`` (..., 3) -> (..., 4).

    Opposite vectors have no unique smallest rotation; they get a half turn about a fixed axis
    perpendicular to ``a`` (the cross product with the world axis least aligned with it).
    """
    a, b = np.broadcast_arrays(a, b)
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    # q = (1 + cos, a x b) normalised is the half-angle form, written out by component (see quat_multiply).
    q = np.empty((*a.shape[:-1], 4))
    q[..., 0] = 1.0 + ax * bx + ay * by + az * bz
    q[..., 1] = ay * bz - az * by
    q[..., 2] = az * bx - ax * bz
    q[..., 3] = ax * by - ay * bx
    opposite = q[..., 0] < 1e-12
    if np.any(opposite):  # (0, a unit vector perpendicular to a)
        least = np.argmin(np.abs(a), axis=-1)
        helper = np.zeros(a.shape)
        np.put_along_axis(helper, least[..., None], 1.0, axis=-1)
        perpendicular = np.cross(a, helper)
        perpendicular /= np.linalg.norm(perpendicular, axis=-1, keepdims=True)
        q[opposite, 0] = 0.0
        q[opposite, 1:] = perpendicular[opposite]
    return quat_normalize(q)


def twist(q: FloatArray, axis: FloatArray) -> FloatArray:
    """The twist part of ``q`` about unit ``axis`` (swing-twist decomposition ``q = swing * twist``).

    Returns the identity where the rotation is a pure half-turn swing (its twist is undefined).
    """
    along = np.sum(q[..., 1:] * axis, axis=-1, keepdims=True) * axis
    t = np.concatenate([q[..., :1], along], axis=-1)
    size = np.linalg.norm(t, axis=-1, keepdims=True)
    identity = np.array([1.0, 0.0, 0.0, 0.0])
    return _as(np.where(size > 1e-12, t / np.where(size > 1e-12, size, 1.0), identity))


def sign_continuous(q: FloatArray, reference: FloatArray | None = None) -> FloatArray:
    """Flip signs along axis 0 (frames) so each quaternion is on the same side as the one before it: the
    same rotations, with no jump between q and -q. ``reference`` (shape q[0]) picks the first frame's sign."""
    dots = np.sum(q[1:] * q[:-1], axis=-1)
    flips = np.concatenate([np.zeros((1, *dots.shape[1:]), dtype=bool), dots < 0])
    if reference is not None:
        flips[0] = np.sum(q[0] * reference, axis=-1) < 0
    signs = np.where(np.logical_xor.accumulate(flips, axis=0), -1.0, 1.0)
    return _as(q * signs[..., None])


def _axis_rotation(axis: int, angle: FloatArray) -> FloatArray:
    c, s = np.cos(angle), np.sin(angle)
    one, zero = np.ones_like(angle), np.zeros_like(angle)
    rows = {
        0: [[one, zero, zero], [zero, c, -s], [zero, s, c]],
        1: [[c, zero, s], [zero, one, zero], [-s, zero, c]],
        2: [[c, -s, zero], [s, c, zero], [zero, zero, one]],
    }[axis]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def euler_to_matrix(angles: FloatArray, order: str) -> FloatArray:
    """Rotation matrices of Blender Euler angles (..., 3), given as (x, y, z) whatever the order."""
    matrix = np.broadcast_to(np.eye(3), (*angles.shape[:-1], 3, 3))
    for letter in order:  # the first axis of the order turns first, so it sits rightmost
        axis = _AXIS[letter]
        matrix = _axis_rotation(axis, angles[..., axis]) @ matrix
    return _as(matrix)


def matrix_to_euler(m: FloatArray, order: str) -> FloatArray:
    """Blender Euler angles (x, y, z) of rotation matrices, the solution with the middle angle in
    [-pi/2, pi/2]."""
    i, j, k = (_AXIS[letter] for letter in order)
    # For order i, j, k the matrix is R_k R_j R_i; its [k, i] entry is -/+ sin of the middle angle.
    parity = 1.0 if (j - i) % 3 == 1 else -1.0
    middle = np.arcsin(np.clip(-parity * m[..., k, i], -1.0, 1.0))
    first = np.arctan2(parity * m[..., k, j], m[..., k, k])
    last = np.arctan2(parity * m[..., j, i], m[..., i, i])
    # At gimbal lock (cos middle == 0) the first and last angles share one degree of freedom: put it last.
    locked = np.abs(m[..., k, i]) > 1.0 - 1e-12
    first = np.where(locked, 0.0, first)
    last = np.where(locked, np.arctan2(-parity * m[..., i, j], m[..., j, j]), last)
    angles = np.empty((*m.shape[:-2], 3))
    angles[..., i], angles[..., j], angles[..., k] = first, middle, last
    return angles


def euler_continuous(angles: FloatArray, reference: FloatArray | None = None) -> FloatArray:
    """Unwrap Euler angles along axis 0 (frames): add whole turns so no angle jumps by more than pi from
    one frame to the next (Blender's compatible Euler). ``reference`` (shape angles[0]) is the angle the
    first frame should be near."""
    if reference is not None:
        angles = angles.copy()
        angles[0] = reference + np.angle(np.exp(1j * (angles[0] - reference)))
    return _as(np.unwrap(angles, axis=0))


def quat_to_axis_angle(q: FloatArray) -> FloatArray:
    """Blender axis-angle (angle, x, y, z) of unit quaternions (..., 4). The identity gets the Y axis, as
    Blender's default. Pass sign-continuous quaternions for a continuous axis."""
    vector = q[..., 1:]
    size = np.linalg.norm(vector, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(size[..., 0], q[..., 0])
    axis = np.where(size > 1e-12, vector / np.where(size > 1e-12, size, 1.0), [0.0, 1.0, 0.0])
    return np.concatenate([angle[..., None], axis], axis=-1)


def axis_angle_to_quat(axis_angle: FloatArray) -> FloatArray:
    """Unit quaternions of Blender axis-angle (angle, x, y, z), shape (..., 4)."""
    angle = axis_angle[..., 0]
    axis = axis_angle[..., 1:]
    size = np.linalg.norm(axis, axis=-1, keepdims=True)
    unit = np.where(size > 0, axis / np.where(size > 0, size, 1.0), [0.0, 1.0, 0.0])
    return np.concatenate([np.cos(angle / 2)[..., None], np.sin(angle / 2)[..., None] * unit], axis=-1)
