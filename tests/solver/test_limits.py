"""Joint limits: the nearest allowed rotation, measured by Blender's own terms (hinges, cones, twist, locks)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabrik_addon.solver import FloatArray, JointLimits
from fabrik_addon.solver.core import axis_angle_to_quat, quat_multiply, quat_normalize

DEG = np.pi / 180


def _about(axis: str, angles: FloatArray) -> FloatArray:
    vector = {"X": [1.0, 0, 0], "Y": [0, 1.0, 0], "Z": [0, 0, 1.0]}[axis]
    return axis_angle_to_quat(np.column_stack([angles, np.tile(vector, (len(angles), 1))]))


def _random_limits(rng: np.random.Generator, bones: int) -> JointLimits:
    return JointLimits.of(
        bones,
        lock=rng.random((bones, 3)) < 0.25,
        use_limit=rng.random((bones, 3)) < 0.6,
        minimum=-rng.uniform(0, np.pi, (bones, 3)),
        maximum=rng.uniform(0, np.pi, (bones, 3)),
    )


def test_a_hinge_keeps_only_its_turn_about_x_within_its_range() -> None:
    knee = JointLimits.of(1, lock=[[0, 1, 1]], use_limit=[[1, 0, 0]], minimum=0.0, maximum=150 * DEG)
    rotations = quat_normalize(np.random.default_rng(1).normal(size=(500, 1, 4)))
    clamped = knee.clamp(rotations)[:, 0]
    np.testing.assert_allclose(clamped[:, 2:], 0.0, atol=1e-15)  # no Y or Z part: a turn about X only
    angles = 2 * np.arctan2(clamped[:, 1], clamped[:, 0])
    assert angles.min() >= -1e-12
    assert angles.max() <= 150 * DEG + 1e-12
    assert angles.max() > 149 * DEG
    assert angles.min() < 1 * DEG


@pytest.mark.parametrize(("angle", "expected"), [(-40, 0), (10, 10), (90, 90), (170, 150)])
def test_a_hinge_clamps_an_angle_about_x_to_its_range(angle: float, expected: float) -> None:
    knee = JointLimits.of(1, lock=[[0, 1, 1]], use_limit=[[1, 0, 0]], minimum=0.0, maximum=150 * DEG)
    clamped = knee.clamp(_about("X", np.array([angle * DEG]))[:, None])[0, 0]
    np.testing.assert_allclose(2 * np.arctan2(clamped[1], clamped[0]), expected * DEG, atol=1e-12)


def test_twist_is_bounded_by_the_y_limit_and_kept_apart_from_the_swing() -> None:
    limits = JointLimits.of(1, use_limit=[[0, 1, 0]], minimum=-20 * DEG, maximum=30 * DEG)
    swing = _about("X", np.array([0.7]))
    twisted = quat_multiply(swing, _about("Y", np.array([80 * DEG])))  # twist first, then swing
    np.testing.assert_allclose(
        limits.clamp(twisted[:, None])[0, 0], quat_multiply(swing, _about("Y", np.array([30 * DEG])))[0], atol=1e-12
    )


def test_x_and_z_limits_bound_the_swing_by_an_ellipse() -> None:
    limits = JointLimits.of(
        1, use_limit=[[1, 0, 1]], minimum=[[-10 * DEG, 0, -40 * DEG]], maximum=[[60 * DEG, 0, 40 * DEG]]
    )
    for axis, angle, bound in [("X", 90, 60), ("X", -30, -10), ("Z", 70, 40), ("Z", -70, -40)]:
        clamped = limits.clamp(_about(axis, np.array([angle * DEG]))[:, None])[0, 0]
        np.testing.assert_allclose(clamped, _about(axis, np.array([bound * DEG]))[0], atol=1e-12)
    # Halfway between the X and Z extents, a swing on the ellipse's edge stays; one beyond it is pulled in.
    edge = np.array([np.sin(30 * DEG) * np.cos(0.6), np.sin(20 * DEG) * np.sin(0.6)])
    for factor, inside in [(0.99, True), (1.3, False)]:
        x, z = factor * edge
        q = np.array([[[np.sqrt(1 - x * x - z * z), x, 0.0, z]]])
        assert (limits.excess(q)[0, 0] < 1e-12) == inside
        clamped = limits.clamp(q)[0, 0]
        assert (clamped[1] / np.sin(30 * DEG)) ** 2 + (clamped[3] / np.sin(20 * DEG)) ** 2 <= 1 + 1e-12


@given(st.integers(0, 2**32 - 1))
def test_a_swing_on_its_ellipse_edge_leaves_along_the_normal_and_stays_against_it(seed: int) -> None:
    """Cones of random X and Z ranges, twist free: random rotations clamped lie on the edge, where a small
    turn about the rest frame's X and Z by the outward normal leaves the cone by about its size and one by
    the inward normal stays in; swings halved are no edge."""
    rng = np.random.default_rng(seed)
    bones, step = 8, 1e-4
    limits = JointLimits.of(
        bones,
        use_limit=[1, 0, 1],
        minimum=-rng.uniform(5 * DEG, 120 * DEG, (bones, 3)),
        maximum=rng.uniform(5 * DEG, 120 * DEG, (bones, 3)),
    )
    rotations = limits.clamp(quat_normalize(rng.normal(size=(30, bones, 4))))
    edge, normal = limits.swing_edges(rotations)
    assert edge.mean() > 0.5
    axes = np.stack([normal[..., 0], np.zeros(edge.shape), normal[..., 1]], axis=-1)
    for sign, leaves in [(1.0, True), (-1.0, False)]:
        turns = axis_angle_to_quat(np.concatenate([np.full((*edge.shape, 1), sign * step), axes], axis=-1))
        excess = limits.excess(quat_multiply(turns, rotations))[edge]
        assert ((excess > 0.25 * step) if leaves else (excess < 1e-9)).all()
    swings = limits.clamp(quat_normalize(rng.normal(size=(30, bones, 4)) * [1.0, 1.0, 0.0, 1.0]))  # no twist
    assert limits.swing_edges(swings)[0].mean() > 0.5
    x, z = 0.5 * swings[..., 1], 0.5 * swings[..., 3]
    halved = np.stack([np.sqrt(1.0 - x * x - z * z), x, np.zeros(x.shape), z], axis=-1)
    assert not limits.swing_edges(halved)[0].any()


def test_locked_bone_is_rigid_and_free_bone_is_untouched() -> None:
    rotations = quat_normalize(np.random.default_rng(2).normal(size=(50, 2, 4)))
    rotations = np.where(rotations[..., :1] < 0, -rotations, rotations)
    limits = JointLimits.of(2, lock=[[1, 1, 1], [0, 0, 0]])
    clamped = limits.clamp(rotations)
    np.testing.assert_allclose(clamped[:, 0], np.tile([1.0, 0, 0, 0], (50, 1)), atol=1e-15)
    np.testing.assert_allclose(clamped[:, 1], rotations[:, 1], atol=1e-12)


@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_clamp_is_a_projection_onto_the_allowed_rotations(seed: int, bones: int) -> None:
    rng = np.random.default_rng(seed)
    limits = _random_limits(rng, bones)
    rotations = quat_normalize(rng.normal(size=(40, bones, 4)))
    clamped = limits.clamp(rotations)
    assert np.isfinite(clamped).all()
    np.testing.assert_allclose(np.linalg.norm(clamped, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(limits.clamp(clamped), clamped, atol=1e-9)  # allowed rotations stay
    assert limits.excess(clamped).max() < 1e-6
    inside = limits.excess(rotations) < 1e-9
    np.testing.assert_allclose(np.abs(np.sum(clamped * rotations, axis=-1))[inside], 1.0, atol=1e-12)


def test_bad_limits_are_named() -> None:
    with pytest.raises(ValueError, match=r"minimum must lie in \[-3.14159, 0\].*bone 1, axis Z"):
        JointLimits.of(2, minimum=[[0.0, 0.0, 0.0], [0.0, 0.0, 0.5]])
    with pytest.raises(ValueError, match="stretch must lie"):
        JointLimits.of(1, stretch=1.5)
    with pytest.raises(ValueError, match=r"lock must have shape \(2, 3\)"):
        JointLimits(np.zeros((1, 3), bool), np.zeros((2, 3), bool), np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(2))


@pytest.mark.parametrize("beyond_rad", [1e-9, 1e-8, 1e-6, 0.3])
def test_excess_measures_even_the_tiniest_turn_beyond_a_limit(beyond_rad: float) -> None:
    """Rotations read back from Blender's float32 sit within about 1e-7 rad of where they were written;
    ``2 acos(q.c)`` would measure a turn of 1e-8 as 3e-8 and one of 1e-9 as 0."""
    hinge = JointLimits.of(1, lock=[[False, True, True]], use_limit=[[True, False, False]], minimum=-0.5, maximum=0.5)
    angle = 0.5 + beyond_rad
    rotation = np.array([[np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0]])
    assert hinge.excess(rotation)[0] == pytest.approx(beyond_rad, rel=1e-6)
    assert hinge.excess(-rotation)[0] == pytest.approx(beyond_rad, rel=1e-6)  # either sign of the quaternion


def test_pickled_limits_keep_their_values_not_the_clamps_made_of_them() -> None:
    """The clamps a JointLimits makes are kept on it once made; a pickle (a farm's worker, a cache written by
    an older version) carries the limits alone, and the clamps are made again where they are used."""
    limits = JointLimits.of(2, use_limit=[[0, 0, 0], [1, 0, 0]], minimum=0.0, maximum=1.0)
    quats = np.array([[1.0, 0.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]])
    clamped = limits.clamp(quats)
    copied = pickle.loads(pickle.dumps(limits))
    assert "_clamps" not in copied.__dict__
    for name in ("lock", "use_limit", "minimum", "maximum", "stretch"):
        np.testing.assert_array_equal(getattr(copied, name), getattr(limits, name))
    np.testing.assert_array_equal(copied.clamp(quats), clamped)


def test_a_pickle_of_limits_holding_clamps_of_an_older_make_loads_without_them() -> None:
    limits = JointLimits.of(2, use_limit=[[0, 0, 0], [1, 0, 0]], minimum=0.0, maximum=1.0)
    quats = np.array([[1.0, 0.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]])
    loaded = JointLimits.__new__(JointLimits)
    loaded.__setstate__({**limits.__dict__, "_clamps": ("of", "another", "make")})
    assert "_clamps" not in loaded.__dict__
    np.testing.assert_array_equal(loaded.clamp(quats), limits.clamp(quats))
