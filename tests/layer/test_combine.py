"""What a layer blended with Combine keys, and what Blender plays from it: the layer plays the pose it was made
for at influence 1 and the animation below at influence 0, for every kind of channel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabrik_addon.layer import base_values, channel_kind, combined, layer_values, played_as_blender
from fabrik_addon.solver import FloatArray, quat_to_matrix


def _quaternions(rng: np.random.Generator, frames: int) -> FloatArray:
    """Random quaternions of random lengths (keys need not be unit: Blender normalises both sides)."""
    q = rng.normal(size=(frames, 4))
    return np.asarray(q * rng.uniform(0.5, 2.0, (frames, 1)), dtype=np.float64)


@given(seed=st.integers(0, 2**32 - 1))
def test_a_quaternion_layer_plays_the_wanted_rotation_and_the_lower_one_at_influence_0(seed: int) -> None:
    rng = np.random.default_rng(seed)
    below, wanted = _quaternions(rng, 20), _quaternions(rng, 20)
    layer = layer_values("quaternion", below, wanted)
    played = combined("quaternion", below, layer)
    np.testing.assert_allclose(
        quat_to_matrix(played), quat_to_matrix(wanted / np.linalg.norm(wanted, axis=1)[:, None]), atol=1e-9
    )
    resting = combined("quaternion", below, layer, 0.0)
    np.testing.assert_allclose(resting, below / np.linalg.norm(below, axis=1)[:, None], atol=1e-12)


def test_quaternion_layer_keys_turn_the_short_way_between_frames() -> None:
    """Each key on the side of the one before it, the first on the identity's: the layer's keys between frames
    interpolate the short way round (q and -q are one rotation)."""
    rng = np.random.default_rng(7)
    below = _quaternions(rng, 50)
    layer = layer_values("quaternion", below, below * -1.0)  # the same rotations: the identity, either sign
    np.testing.assert_allclose(layer, np.tile([1.0, 0.0, 0.0, 0.0], (50, 1)), atol=1e-12)
    turning = layer_values("quaternion", below, _quaternions(rng, 50))
    assert turning[0, 0] >= 0.0
    assert np.all(np.sum(turning[1:] * turning[:-1], axis=1) >= 0.0)


@pytest.mark.parametrize("kind", ["add", "multiply"])
def test_added_and_scaled_channels_play_the_wanted_values(kind: str) -> None:
    rng = np.random.default_rng(11)
    below = rng.uniform(0.2, 3.0, (30, 3))  # scales of one sign: a factor between them has a power
    wanted = rng.uniform(0.2, 3.0, (30, 3))
    layer = layer_values(kind, below, wanted)
    np.testing.assert_allclose(combined(kind, below, layer), wanted, rtol=1e-12)
    np.testing.assert_allclose(combined(kind, below, layer, 0.0), below, rtol=0, atol=0)
    half = combined(kind, below, layer, np.full(30, 0.5))  # an influence per frame
    assert np.all(np.minimum(below, wanted) - 1e-12 <= half)
    assert np.all(half <= np.maximum(below, wanted) + 1e-12)


def test_a_scale_of_zero_below_cannot_be_scaled_to_another() -> None:
    np.testing.assert_array_equal(layer_values("multiply", np.zeros((2, 1)), np.zeros((2, 1))), np.ones((2, 1)))
    with pytest.raises(ValueError, match="a scale of 0 below the layer cannot be scaled to another value"):
        layer_values("multiply", np.zeros((2, 1)), np.ones((2, 1)))


def test_each_property_blends_by_its_kind_over_its_base_value() -> None:
    assert channel_kind("rotation_quaternion") == "quaternion"
    assert channel_kind("scale") == "multiply"
    assert [channel_kind(p) for p in ("location", "rotation_euler", "rotation_axis_angle", '["fabrik_contact"]')] == [
        "add"
    ] * 4
    np.testing.assert_array_equal(base_values("quaternion", 4), [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(base_values("multiply", 3), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(base_values("add", 4), [0.0, 0.0, 0.0, 0.0])  # axis-angle too: Blender adds
    with pytest.raises(ValueError, match="unknown kind of channel 'slerp'"):
        layer_values("slerp", np.zeros((1, 4)), np.zeros((1, 4)))


def test_blender_rounds_small_quaternion_turns_of_a_layer_by_its_float32_acos() -> None:
    """Combine takes a turn's angle from ``acosf`` of its first value in float32: a turn whose cosine rounds to 1
    plays as none, and larger ones are off by at most that rounding (about 0.04 degrees); other channels play
    as ``combined`` has them. (Blender's own evaluation is held to this in tests/blender/test_key_reduction.py.)"""
    rng = np.random.default_rng(1)
    below = _quaternions(rng, 6)
    axis = np.array([0.6, 0.0, 0.8])
    angles = np.array([1e-5, 2e-4, 1e-3, 1e-2, 0.5, 2.0])
    layer = np.concatenate([np.cos(angles / 2)[:, None], np.sin(angles / 2)[:, None] * axis], axis=1)
    played = played_as_blender("quaternion", below, layer)
    turns = quat_to_matrix(played) @ np.swapaxes(quat_to_matrix(below / np.linalg.norm(below, axis=1)[:, None]), 1, 2)
    turned = np.arccos(np.clip((np.trace(turns, axis1=1, axis2=2) - 1) / 2, -1, 1))
    assert turned[0] == pytest.approx(0.0, abs=1e-6)  # 1e-5 rad rounds to no turn
    assert turned[1] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(turned[2:], angles[2:], atol=7e-4)
    np.testing.assert_allclose(turned[4:], angles[4:], rtol=1e-5)
    below3, layer3 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    np.testing.assert_array_equal(played_as_blender("add", below3, layer3), combined("add", below3, layer3))
