"""Geometry shared by the solvers: chains of joints, and the turn that best aims rigid offsets.

Internal layout: joint positions of many frames as one array of shape (n+1, 3, m), joints first and frames
last, so that one joint of every frame, ``P[i]``, is a contiguous (3, m) block; points are (3, m).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .validate import FloatArray

#: A fixed direction with no special alignment to the axes: the fallback where a direction is undefined.
FALLBACK_DIRECTION: FloatArray = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)


def cross(a: FloatArray, b: FloatArray, axis: int = -1) -> FloatArray:
    """Cross products of the vectors along ``axis`` (the last, or one counted from the front) of ``a`` and ``b``
    (broadcast together), each component ``a_i b_j - a_j b_i`` as ``np.cross`` rounds it, without its cost per
    call (several times these few products on a single frame)."""
    if axis < -1:
        raise ValueError(f"cross: the axis is -1 or one counted from the front, got {axis}")
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))

    def part(i: int) -> tuple[Any, ...]:
        return (Ellipsis, i) if axis == -1 else (*([slice(None)] * axis), i)

    x, y, z = part(0), part(1), part(2)
    product = np.empty(shape)
    product[x] = a[y] * b[z] - a[z] * b[y]
    product[y] = a[z] * b[x] - a[x] * b[z]
    product[z] = a[x] * b[y] - a[y] * b[x]
    return product


def dots(a: FloatArray, b: FloatArray) -> FloatArray:
    """Dot products of vectors stored along axis -2 (shapes (..., 3, m) -> (..., m)).

    Written out component by component rather than with ``einsum``/``sum``, whose rounding depends on how
    many frames there are: this way a frame's result never depends on the frames solved beside it.
    """
    products = a[..., 0, :] * b[..., 0, :] + a[..., 1, :] * b[..., 1, :] + a[..., 2, :] * b[..., 2, :]
    return cast(FloatArray, products)


def norms(vectors: FloatArray) -> FloatArray:
    """Lengths of vectors stored along axis -2 (shape (..., 3, m) -> (..., m))."""
    return np.sqrt(dots(vectors, vectors))


def unit_or(vectors: FloatArray, fallback: FloatArray) -> FloatArray:
    """Normalise (3, m) vectors; where a vector is (close to) zero use the matching ``fallback`` column."""
    length = norms(vectors)
    tiny = length <= 1e-300
    safe = np.where(tiny, 1.0, length)
    return np.where(tiny, fallback, vectors / safe)


def perpendicular(directions: FloatArray) -> FloatArray:
    """A unit vector perpendicular to each unit (3, m) direction, chosen deterministically."""
    # Cross with the world axis least aligned with each direction: never parallel.
    least = np.argmin(np.abs(directions), axis=0)
    axis = np.zeros_like(directions)
    axis[least, np.arange(directions.shape[1])] = 1.0
    square = cross(directions, axis, axis=0)
    return square / norms(square)


def chain_along(bases: FloatArray, directions: FloatArray, signed_lengths: FloatArray) -> FloatArray:
    """Joints of a chain lying on the lines ``bases + s * directions``.

    Parameters
    ----------
    bases : ndarray, shape (3, m)
        Root position per frame.
    directions : ndarray, shape (3, m)
        Unit direction per frame.
    signed_lengths : ndarray, shape (n,) or (n, m)
        Segment lengths; a negative one points the segment back along ``-directions``.

    Returns
    -------
    ndarray, shape (n+1, 3, m)
    """
    offsets = np.cumsum(signed_lengths, axis=0)
    if offsets.ndim == 1:
        offsets = offsets[:, None]
    along = offsets[:, None, :] * directions[None]
    return np.concatenate([bases[None], bases[None] + along])


def inner_radius(lengths: FloatArray) -> float:
    """Radius of the ball around the root that the tip cannot enter.

    Non-zero only when one segment is longer than all the others together: the chain can then at best fold
    the others back along it.
    """
    longest = float(lengths.max())
    return max(0.0, 2.0 * longest - float(lengths.sum()))


def is_straight_line(
    P: FloatArray, targets: FloatArray, rel_tol: float = 1e-9, reach: float | None = None
) -> NDArray[np.bool_]:
    """Per frame, whether every joint and the target lie on one line through the root.

    FABRIK and CCD only ever move joints within the plane (or line) the chain and target span, so such a
    chain would never bend; the caller bends it first. ``reach``, if given, is no less than any joint's
    distance from the root (the chain's length, a hair over), which spares measuring the chains.
    """
    root = P[0]
    axis = unit_or(P[-1] - root, unit_or(P[1] - root, FALLBACK_DIRECTION[:, None]))
    # No joint lies farther from the root than the chain is long, so a target farther off the line than
    # rel_tol times that (or its own distance) settles a frame without the joints (a hair over: rounding).
    to_target = targets - root
    extent = norms(np.diff(P, axis=0)).sum(axis=0) if reach is None else reach
    bound = (rel_tol + 1e-20) * np.maximum(extent, norms(to_target))
    straight = norms(cross(to_target, axis, axis=0)) <= bound
    if straight.any():
        near = np.flatnonzero(straight)
        offsets = np.concatenate([P[1:, :, near] - root[:, near], to_target[None, :, near]])  # (n+1, 3, k)
        off_line = norms(cross(offsets, axis[None, :, near], axis=1))
        straight[near] = off_line.max(axis=0) <= rel_tol * norms(offsets).max(axis=0)
    return straight


def bend(P: FloatArray, total_angle_rad: float | FloatArray, toward: FloatArray | None = None) -> FloatArray:
    """Bend straight chains into a gentle arc, keeping the root and every segment length.

    Segment ``i`` (from 0) of ``n`` turns by ``total_angle_rad * (i + 1) / n`` about an axis perpendicular
    to the chain, so the arc lies in one plane, every joint but the root leaves the line (one left on it
    would pull the chain back onto the line), and the result is the same for the same input.

    Parameters
    ----------
    P : ndarray, shape (n+1, 3, m)
        Straight (possibly folded) chains.
    total_angle_rad : float or ndarray, shape (m,)
    toward : ndarray, shape (3, m), optional
        Unit directions square to each chain that its arc bends toward; by default a fixed perpendicular.
    """
    segments = np.diff(P, axis=0)  # (n, 3, m)
    lengths = norms(segments)  # (n, m)
    axis_dir = unit_or(segments[0], FALLBACK_DIRECTION[:, None])
    # Segments folded back along the line keep pointing back: bend each by its own sign.
    signs = np.sign(dots(segments, axis_dir[None]))
    normal = perpendicular(axis_dir) if toward is None else toward
    fractions = (np.arange(1, segments.shape[0] + 1) / segments.shape[0])[:, None]
    turns = np.asarray(total_angle_rad) * fractions  # (n, 1) or (n, m)
    directions = signs[:, None] * (np.cos(turns)[:, None] * axis_dir[None] + np.sin(turns)[:, None] * normal[None])
    return np.concatenate([P[:1], P[:1] + np.cumsum(lengths[:, None] * directions, axis=0)])


def arc_angle(chord_ratio: FloatArray) -> FloatArray:
    """The angle (radians, in [0, 2 pi)) an arc turns through whose chord is ``chord_ratio`` (in [0, 1]) of its
    length: ``sin(a / 2) / (a / 2) == chord_ratio`` (bisection, to rounding)."""
    ratio = np.clip(chord_ratio, 0.0, 1.0)
    low, high = np.zeros_like(ratio), np.full_like(ratio, np.pi)
    for _ in range(60):
        middle = 0.5 * (low + high)
        longer = np.sinc(middle / np.pi) > ratio  # sin(x)/x falls from 1 at 0 to 0 at pi
        low, high = np.where(longer, middle, low), np.where(longer, high, middle)
    return np.asarray(low + high, dtype=np.float64)


def soften_reach(points: FloatArray, reach: float | FloatArray, soft: float | FloatArray) -> FloatArray:
    """Compute goals that ease into full extension given ``points`` (..., 3) about the origin, the ``reach``
    and the ``soft`` distance (scene units, >= 0; each broadcast against ``points[..., 0]``).

    A point nearer than ``reach - soft`` is kept; one farther is pulled in along its line to
    ``reach - soft * exp(-(d - (reach - soft)) / soft)``, which meets the kept points with slope 1 and
    approaches ``reach`` without getting there, so a chain following the goal straightens gradually instead
    of snapping straight. Where ``soft`` is 0 every point is kept; ``soft`` beyond ``reach`` eases from the
    origin.
    """
    points = np.asarray(points, dtype=np.float64)
    soft = np.asarray(soft, dtype=np.float64)
    if not (soft > 0.0).any():
        return points
    full = np.asarray(reach, dtype=np.float64)
    easing = np.maximum(np.minimum(soft, full), 1e-300)
    start = full - easing
    distance = np.linalg.norm(points, axis=-1)
    eases = (distance > start) & (soft > 0.0)
    if not eases.any():
        return points
    eased = full - easing * np.exp(-np.maximum(distance - start, 0.0) / easing)
    scale = np.where(eases, eased / np.maximum(distance, 1e-300), 1.0)
    return np.asarray(points * scale[..., None], dtype=np.float64)


def turn_about(P: FloatArray, pivot: int, from_dirs: FloatArray, to_dirs: FloatArray) -> None:
    """Rotate the joints after ``pivot`` about it, in place, per frame, by the smallest rotation that takes
    direction ``from_dirs`` to direction ``to_dirs``.

    Parameters
    ----------
    P : ndarray, shape (n+1, 3, m)
    pivot : int
    from_dirs, to_dirs : ndarray, shape (3, m)
        Any non-negative lengths; frames where either is zero are left alone. Opposite directions turn half
        a revolution about a fixed perpendicular.
    """
    scale = norms(from_dirs) * norms(to_dirs)
    moving = scale > 0
    scale = np.where(moving, scale, 1.0)
    normal = cross(from_dirs, to_dirs, axis=0)
    sin = norms(normal) / scale
    cos = np.where(moving, dots(from_dirs, to_dirs) / scale, 1.0)
    turned = sin > 1e-12
    axis = np.where(
        turned,
        normal / np.where(turned, sin * scale, 1.0),
        perpendicular(unit_or(from_dirs, FALLBACK_DIRECTION[:, None])),
    )
    # Rodrigues' formula for every later joint at once: x' = x cos + (k x x) sin + k (k . x)(1 - cos).
    x = P[pivot + 1 :] - P[pivot]
    k = np.broadcast_to(axis[None], x.shape)
    along = dots(k, x)[:, None]
    P[pivot + 1 :] = P[pivot] + x * cos + cross(k, x, axis=1) * sin + k * along * (1.0 - cos)


#: Weight of "turn as little as possible" against the least-squares aim, as a fraction of the aim's scale:
#: enough to pick one turn where the aim leaves a family of equally good ones, too little to matter otherwise
#: (it only slows a body's turn by this fraction, toward where the next iteration takes it anyway).
LEAST_TURN = 1e-6


def best_turn(offsets: FloatArray, aims: FloatArray, weights: FloatArray, least_turn: float = LEAST_TURN) -> FloatArray:
    """The unit quaternion (w, x, y, z) per frame, shape (4, m), maximising ``sum_k weights[k] * aims[k] .
    (R offsets[k])`` plus ``least_turn`` of its scale times ``trace(R)`` (Horn 1987: the eigenvector of the
    largest eigenvalue of a symmetric 4x4 matrix).

    Parameters
    ----------
    offsets, aims : ndarray, shape (k, 3, m)
    weights : ndarray, shape (k,)
    least_turn : float
        How much a smaller turn counts, as a fraction of the aim's scale (see ``LEAST_TURN``).
    """
    w = weights[:, None]
    S = [[(w * offsets[:, a] * aims[:, b]).sum(axis=0) for b in range(3)] for a in range(3)]  # (m,) each
    scale = (w * norms(offsets) * norms(aims)).sum(axis=0)
    (xx, xy, xz), (yx, yy, yz), (zx, zy, zz) = S
    N = np.empty((offsets.shape[2], 4, 4))
    N[:, 0, 0] = xx + yy + zz + 4.0 * least_turn * scale
    N[:, 1, 1] = xx - yy - zz
    N[:, 2, 2] = yy - xx - zz
    N[:, 3, 3] = zz - xx - yy
    N[:, 0, 1] = N[:, 1, 0] = yz - zy
    N[:, 0, 2] = N[:, 2, 0] = zx - xz
    N[:, 0, 3] = N[:, 3, 0] = xy - yx
    N[:, 1, 2] = N[:, 2, 1] = xy + yx
    N[:, 1, 3] = N[:, 3, 1] = zx + xz
    N[:, 2, 3] = N[:, 3, 2] = yz + zy
    _, vectors = np.linalg.eigh(N)
    return np.asarray(vectors[:, :, -1].T)
