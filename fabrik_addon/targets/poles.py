"""Compute a pole for a chain given its animated pose: the pole angle and the pole's place on each frame that
make a bake toward the animated tip bend the chain as it was animated.

A pole works as the IK constraint's (``fabrik_addon.solver.solve_bones``): the chain turns about the line from
its root's head to its goal until the root's "up" axis, its X axis turned toward its Z axis by the pole angle,
lies in the plane of that line and the pole, on the pole's side. A pole placed on that side of the animated
chain's own plane, on every frame, asks for no turn: the bake keeps the animated bend. The angle is the one
that puts the pole where the chain bends (its middle joint's side of the line, averaged over the frames,
weighted by how bent the chain is), so an animator sees the pole in front of the knee; the pole then follows the
root's axes, which turn smoothly with the animation even where the chain is straight and the bend's own side is
not defined.
"""

from __future__ import annotations

import numpy as np

from ..solver import FloatArray


def pole_angle(
    heads: FloatArray, tails: FloatArray, middles: FloatArray, x_axes: FloatArray, z_axes: FloatArray
) -> float:
    """The pole angle (radians, in [-pi, pi]) that turns the root's X axis toward the side the chain bends to.

    Parameters
    ----------
    heads, tails : ndarray, shape (F, 3)
        The root bone's head and the tip bone's tail on each frame, world space.
    middles : ndarray, shape (F, 3)
        The chain's middle joint on each frame (a knee, an elbow).
    x_axes, z_axes : ndarray, shape (F, 3)
        The root bone's X and Z axes on each frame, unit length.

    Returns
    -------
    float
        The mean over the frames of the angle from the X axis toward the Z axis to the bend's side, each frame
        weighted by how far the middle joint is from the root-to-tip line; 0 where the chain is never bent.
    """
    line = _unit(tails - heads)
    bend = middles - heads
    bend = bend - np.einsum("fi,fi->f", bend, line)[:, None] * line
    sines = np.einsum("fi,fi->f", bend, z_axes)
    cosines = np.einsum("fi,fi->f", bend, x_axes)
    if not np.any(np.hypot(sines, cosines) > 0.0):
        return 0.0
    return float(np.arctan2(sines.sum(), cosines.sum()))  # each frame's (cos, sin) scaled by its bend


def pole_places(
    heads: FloatArray,
    tails: FloatArray,
    middles: FloatArray,
    x_axes: FloatArray,
    z_axes: FloatArray,
    angle: float,
    distance: float,
) -> FloatArray:
    """Where the pole goes on each frame (F, 3): ``distance`` from the root-to-tip line, beside the middle
    joint, toward the root's "up" axis (X turned toward Z by ``angle``) off the line.

    Parameters
    ----------
    heads, tails, middles, x_axes, z_axes : ndarray, shape (F, 3)
        As for ``pole_angle``.
    angle : float
        The pole angle, radians.
    distance : float
        How far from the line, world units (> 0).

    Returns
    -------
    ndarray, shape (F, 3)
        On a frame where the up axis lies along the line (no side to put the pole on), the place it has on the
        frame before (or after, for the first frames).
    """
    line = _unit(tails - heads)
    up = x_axes * np.cos(angle) + z_axes * np.sin(angle)
    side = up - np.einsum("fi,fi->f", up, line)[:, None] * line
    lengths = np.linalg.norm(side, axis=1)
    usable = lengths > 1e-9
    if not usable.any():
        side = np.broadcast_to(_unit(x_axes[:1]), x_axes.shape).copy()
    else:
        side = side / np.where(usable, lengths, 1.0)[:, None]
        index = np.maximum.accumulate(np.where(usable, np.arange(len(usable)), -1))
        index = np.where(index < 0, int(np.argmax(usable)), index)
        side = side[index]
    along = np.einsum("fi,fi->f", middles - heads, line)[:, None] * line
    return np.asarray(heads + along + distance * side, dtype=np.float64)


def _unit(vectors: FloatArray) -> FloatArray:
    lengths = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.asarray(vectors / np.where(lengths > 0.0, lengths, 1.0), dtype=np.float64)
