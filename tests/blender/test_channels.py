"""Key values in each of Blender's rotation modes stand for the rotations they were made from."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.blender.rig import bone_channels, rotation_channels, rotation_property
from fabrik_addon.solver import FloatArray
from fabrik_addon.solver.core import (
    EULER_ORDERS,
    axis_angle_to_quat,
    euler_to_matrix,
    matrix_to_quat,
    quat_normalize,
    quat_to_axis_angle,
)

RNG = np.random.default_rng(1234)
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def _same_rotation(a: FloatArray, b: FloatArray) -> None:
    np.testing.assert_allclose(np.abs(np.sum(a * b, axis=-1)), 1.0, atol=1e-12)


@pytest.mark.parametrize("mode", ["QUATERNION", "AXIS_ANGLE", *EULER_ORDERS])
def test_rotation_channels_represent_the_same_rotations(mode: str) -> None:
    path = quat_normalize(np.cumsum(RNG.normal(size=(200, 4)) * 0.05, axis=0) + IDENTITY)
    reference = {"QUATERNION": -path[0], "AXIS_ANGLE": quat_to_axis_angle(path[0])}.get(mode, np.zeros(3))
    values = rotation_channels(path, mode, reference)
    if mode == "QUATERNION":
        back = values
        assert np.sum(values[0] * reference) > 0
    elif mode == "AXIS_ANGLE":
        back = axis_angle_to_quat(values)
    else:
        back = matrix_to_quat(euler_to_matrix(values, mode))
        assert np.abs(np.diff(values, axis=0)).max() < np.pi
    _same_rotation(back, path)


def test_bone_channels_are_each_bones_rotation_channels() -> None:
    """Bones of one mode converted together come out as one by one, beside bones in other modes and each with
    its own reference (one quaternion on the other side of the sign, an Euler a whole turn away): quaternions
    to the bit; Euler and axis-angle values as the same rotations, continuous from frame to frame (numpy's
    ``arctan2`` may round the last bit otherwise with where an array lies in memory, one by one too)."""
    modes = ["QUATERNION", "XYZ", "QUATERNION", "AXIS_ANGLE", "QUATERNION", "XYZ", "ZXY", "AXIS_ANGLE", "XYZ"]
    steps = RNG.normal(size=(120, len(modes), 4)) * 0.3  # large steps: signs flip along the way
    rotations = quat_normalize(np.cumsum(steps, axis=0) + IDENTITY)
    references = [
        -rotations[0, 0],
        np.zeros(3),
        rotations[0, 2],
        quat_to_axis_angle(rotations[0, 3]),
        -IDENTITY,
        np.array([2 * np.pi, 0.3, -2 * np.pi]),
        np.array([0.1, 0.2, 0.3]),
        quat_to_axis_angle(-rotations[0, 7]),
        np.array([-0.5, 0.0, 4.0]),
    ]
    together = bone_channels(rotations, modes, references)
    for k, mode in enumerate(modes):
        alone = rotation_channels(rotations[:, k], mode, references[k])
        if mode == "QUATERNION":
            np.testing.assert_array_equal(together[k], alone)
            continue
        if mode == "AXIS_ANGLE":
            back = axis_angle_to_quat(together[k])
        else:
            back = matrix_to_quat(euler_to_matrix(together[k], mode))
            assert np.abs(np.diff(together[k], axis=0)).max() < np.pi
            assert np.abs(together[k][0] - references[k]).max() <= np.pi
        _same_rotation(back, rotations[:, k])
        apart = np.angle(np.exp(1j * (together[k] - alone)))  # the same angles, up to whole turns
        np.testing.assert_allclose(apart, 0.0, rtol=0, atol=1e-12)


def test_rotation_property_names_the_pose_bone_property_of_each_mode() -> None:
    assert rotation_property("QUATERNION") == "rotation_quaternion"
    assert rotation_property("AXIS_ANGLE") == "rotation_axis_angle"
    assert {rotation_property(order) for order in EULER_ORDERS} == {"rotation_euler"}
    with pytest.raises(ValueError, match="unknown rotation mode 'SPIN'"):
        rotation_property("SPIN")
