"""Quaternions and vectors stored as rows, components first and frames last: quaternions (4, ...) as (w, x,
y, z), vectors (3, ...), so that each component of every frame is one contiguous row.

The limited solver loops over bones in Python and works on every frame at once. With a few hundred frames
each numpy call costs far more than its arithmetic, so these routines use as few calls as they can: the
product of two quaternions is their outer product (one broadcast multiplication) times a constant table (one
matrix product), a rotation matrix the same; turns by a constant quaternion, and rotations of a constant
vector, are one matrix product each. Every routine works frame by frame (nothing mixes frames), to the
last bit: see ``apply``.
"""

from __future__ import annotations

import numpy as np

from .rotations import quat_between, quat_multiply, quat_to_matrix
from .validate import FloatArray

_BASIS = np.eye(4)


def _outer(a: FloatArray, b: FloatArray) -> FloatArray:
    """Products of every component of ``a`` with every one of ``b``: (4, ...) x (4, ...) -> (16, N)."""
    return (a[:, None] * b[None]).reshape(16, -1)


def _bilinear_table(function: object) -> FloatArray:
    """The (rows, 16) matrix ``T`` with ``function(a, b) == T @ outer(a, b)`` for a function bilinear in two
    quaternions, read off its values on pairs of basis quaternions."""
    assert callable(function)
    return np.stack([function(_BASIS[j], _BASIS[k]) for j in range(4) for k in range(4)], axis=-1)


def _rotation_form(q: FloatArray, p: FloatArray) -> FloatArray:
    """The symmetric bilinear form whose value on (q, q) is ``|q|^2`` times q's rotation matrix, flattened (9,):
    for unit quaternions the matrix itself, as a quadratic form (no constant term)."""

    def homogeneous(v: FloatArray) -> FloatArray:
        size = float(v @ v)
        return size * quat_to_matrix(v / np.sqrt(size)) if size > 0 else np.zeros((3, 3))

    return np.asarray(0.25 * (homogeneous(q + p) - homogeneous(q - p)), dtype=np.float64).reshape(9)


#: ``a * b`` (Hamilton product), ``conj(a) * b`` and ``a * conj(b)`` from the outer product of ``a`` and ``b``.
_PRODUCT = _bilinear_table(quat_multiply)
_CONJ = np.array([1.0, -1.0, -1.0, -1.0])
_CONJ_PRODUCT = _bilinear_table(lambda a, b: quat_multiply(a * _CONJ, b))
_PRODUCT_CONJ = _bilinear_table(lambda a, b: quat_multiply(a, b * _CONJ))
#: A unit quaternion's rotation matrix, flattened (9,), from its outer product with itself.
_MATRIX = _bilinear_table(_rotation_form)


def apply(table: FloatArray, rows: FloatArray) -> FloatArray:
    """A constant matrix (k, n) times rows (n, N): (k, N).

    With ``einsum`` rather than ``@``: BLAS splits a long product between threads, and then how many it has
    changes the last bits of every frame (and a frame's result could depend on the frames beside it);
    ``einsum`` sums each frame's terms in one order, whatever the machine and the number of frames.
    """
    return np.asarray(np.einsum("ij,jf->if", table, rows))


def multiply(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton products ``a * b`` (``b`` first, then ``a``): (4, ...) x (4, ...) -> (4, N), N the frames."""
    return apply(_PRODUCT, _outer(a, b))


def conj_multiply(a: FloatArray, b: FloatArray) -> FloatArray:
    """``conj(a) * b``, the turn from ``a`` to ``b`` seen in ``a``'s frame: (4, ...) x (4, ...) -> (4, N)."""
    return apply(_CONJ_PRODUCT, _outer(a, b))


def multiply_conj(a: FloatArray, b: FloatArray) -> FloatArray:
    """``a * conj(b)``, the turn that takes ``b`` to ``a``: (4, ...) x (4, ...) -> (4, N)."""
    return apply(_PRODUCT_CONJ, _outer(a, b))


def right_tables(r: FloatArray) -> FloatArray:
    """The matrices ``R`` (..., 4, 4) with ``q * r == apply(R, q)`` for constant quaternions ``r`` (..., 4)."""
    return np.asarray(np.einsum("ijk,...k->...ij", _PRODUCT.reshape(4, 4, 4), r))


def left_tables(r: FloatArray) -> FloatArray:
    """The matrices ``L`` (..., 4, 4) with ``r * q == apply(L, q)`` for constant quaternions ``r`` (..., 4)."""
    return np.asarray(np.einsum("ijk,...j->...ik", _PRODUCT.reshape(4, 4, 4), r))


def matrices(q: FloatArray) -> FloatArray:
    """Rotation matrices of unit quaternions: (4, ...) -> (3, 3, N)."""
    return apply(_MATRIX, _outer(q, q)).reshape(3, 3, -1)


def rotate(q: FloatArray, v: FloatArray) -> FloatArray:
    """Vectors ``v`` (3, N) turned by unit quaternions ``q`` (4, N)."""
    return np.asarray(np.einsum("ijf,jf->if", matrices(q), v))


def rotate_back(q: FloatArray, v: FloatArray) -> FloatArray:
    """Vectors ``v`` (3, N) turned by the inverses of unit quaternions ``q`` (4, N)."""
    return np.asarray(np.einsum("jif,jf->if", matrices(q), v))


def fixed_vector_tables(v: FloatArray) -> FloatArray:
    """The matrices ``T`` (..., 3, 16) with ``rotate(q, v) == apply(T, outer(q, q))`` for constant vectors ``v``
    (..., 3)."""
    return np.asarray(np.einsum("ijk,...j->...ik", _MATRIX.reshape(3, 3, 16), v))


def rotate_fixed(q: FloatArray, table: FloatArray) -> FloatArray:
    """A constant vector turned by unit quaternions ``q`` (4, N), given its ``fixed_vector_tables``: (3, N)."""
    return apply(table, _outer(q, q))


def between_tables(d: FloatArray) -> FloatArray:
    """The matrices (..., 4, 3) giving ``(d . u, d x u)`` from vectors ``u`` (3, N), for constant unit vectors
    ``d`` (..., 3)."""
    cross = np.cross(d[..., None, :], -np.eye(3))  # row i is e_i x d, so cross @ u == d x u
    return np.concatenate([d[..., None, :], cross], axis=-2)


def turn_from(table: FloatArray, half_turn: FloatArray, u: FloatArray) -> FloatArray:
    """The smallest turns taking a constant unit vector ``d`` onto the directions of non-zero vectors ``u``
    (3, N), as unit quaternions (4, N): ``(|u| + d . u, d x u)`` normalised, ``table`` being
    ``between_tables(d)``. Where ``u`` points away from ``d`` (``1 + cos`` of the angle under 1e-12, as in
    ``rotations.quat_between``) there is no smallest turn: those get ``half_turn`` (4, 1), a half turn about
    a fixed perpendicular of ``d`` (``half_turns_from``).
    """
    size = np.sqrt(np.einsum("if,if->f", u, u))
    q = apply(table, u)
    q[0] += size
    return normalized(np.where(q[0] > 1e-12 * size, q, half_turn))


def normalized(q: FloatArray) -> FloatArray:
    """Rows (k, N) scaled to unit columns."""
    return np.asarray(q / np.sqrt(np.einsum("if,if->f", q, q)))


def half_turns_from(d: FloatArray) -> FloatArray:
    """Half turns (..., 4, 1) about unit vectors perpendicular to unit vectors ``d`` (..., 3), chosen as
    ``quat_between`` chooses them, for ``turn_from``."""
    return np.asarray(quat_between(d, -d), dtype=np.float64)[..., None]
