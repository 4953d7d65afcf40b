"""Poles from the animation: the pole angle that turns the root's X axis to the side the chain bends to, and
pole places on that side that follow the root smoothly, straight frames included."""

from __future__ import annotations

import numpy as np

from fabrik_addon.solver import FloatArray
from fabrik_addon.targets import pole_angle, pole_places


def _leg(bends: FloatArray, twist: float) -> tuple[FloatArray, ...]:
    """A two-bone leg hanging down from the origin (thigh and shin 1 long), bending toward +Y by ``bends``
    (radians, one per frame) at the knee, its thigh's X axis turned by ``twist`` about the thigh from +X toward
    the bend: heads, tails, knees, X axes and Z axes per frame."""
    frames = len(bends)
    heads = np.zeros((frames, 3))
    knees = np.tile([0.0, 0.0, -1.0], (frames, 1))
    tails = knees + np.stack([np.zeros(frames), np.sin(bends), -np.cos(bends)], axis=1)
    x_axes = np.tile([np.cos(twist), np.sin(twist), 0.0], (frames, 1))
    z_axes = np.tile([-np.sin(twist), np.cos(twist), 0.0], (frames, 1))  # the thigh points down: Y is -Z
    return heads, tails, knees, x_axes, z_axes


def test_the_angle_turns_the_x_axis_to_the_side_the_knee_bends_to() -> None:
    """A shin bent forward (+Y) puts the knee behind the hip-to-ankle line (-Y): there the pole goes."""
    for twist in (0.0, 0.4, -1.2):
        heads, tails, knees, x_axes, z_axes = _leg(np.linspace(0.2, 1.2, 30), twist)
        angle = pole_angle(heads, tails, knees, x_axes, z_axes)
        up = x_axes[0] * np.cos(angle) + z_axes[0] * np.sin(angle)
        np.testing.assert_allclose(up, [0.0, -1.0, 0.0], atol=1e-12)


def test_a_straight_chain_has_no_side_and_angle_0() -> None:
    heads, tails, knees, x_axes, z_axes = _leg(np.zeros(10), 0.3)
    assert pole_angle(heads, tails, knees, x_axes, z_axes) == 0.0


def test_poles_stand_off_the_line_beside_the_knee_on_the_bend_side_and_straight_frames_keep_their_side() -> None:
    bends = np.concatenate([np.linspace(1.0, 0.0, 20), np.linspace(0.0, 1.0, 20)])  # straight on frames 19 and 20
    heads, tails, knees, x_axes, z_axes = _leg(bends, 0.0)
    angle = pole_angle(heads, tails, knees, x_axes, z_axes)
    places = pole_places(heads, tails, knees, x_axes, z_axes, angle, 0.5)
    line = (tails - heads) / np.linalg.norm(tails - heads, axis=1)[:, None]
    off = places - heads - np.einsum("fi,fi->f", knees - heads, line)[:, None] * line
    np.testing.assert_allclose(np.linalg.norm(off, axis=1), 0.5, atol=1e-12)  # the distance from the line
    np.testing.assert_allclose(np.einsum("fi,fi->f", off, line), 0.0, atol=1e-12)  # beside the knee
    knee_side = knees - heads - np.einsum("fi,fi->f", knees - heads, line)[:, None] * line
    bent = np.linalg.norm(knee_side, axis=1) > 1e-6
    assert np.all(np.einsum("fi,fi->f", off[bent], knee_side[bent]) > 0.0)  # on the knee's side
    turns = np.arccos(np.clip(np.einsum("fi,fi->f", off[1:], off[:-1]) / 0.25, -1.0, 1.0))
    assert turns.max() < np.radians(10.0)  # no jump through the straight frames
