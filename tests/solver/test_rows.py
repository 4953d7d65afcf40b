"""The limited solver's row layout: its quaternion maths and its clamp equal the frames-first ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik_addon.solver import FloatArray, JointLimits
from fabrik_addon.solver.core import RowClamp, quat_between, quat_multiply, quat_normalize, quat_to_matrix
from fabrik_addon.solver.core import quat_rows as rows

CONJ = np.array([1.0, -1.0, -1.0, -1.0])


def _quats(rng: np.random.Generator, count: int) -> FloatArray:
    return quat_normalize(rng.normal(size=(count, 4)))


def test_products_and_rotations_equal_the_frames_first_ones() -> None:
    rng = np.random.default_rng(1)
    a, b, v = _quats(rng, 50), _quats(rng, 50), rng.normal(size=(50, 3))
    matrices = quat_to_matrix(a)
    np.testing.assert_allclose(rows.multiply(a.T, b.T).T, quat_multiply(a, b), atol=1e-15)
    np.testing.assert_allclose(rows.conj_multiply(a.T, b.T).T, quat_multiply(a * CONJ, b), atol=1e-15)
    np.testing.assert_allclose(rows.multiply_conj(a.T, b.T).T, quat_multiply(a, b * CONJ), atol=1e-15)
    np.testing.assert_allclose(rows.matrices(a.T).transpose(2, 0, 1), matrices, atol=1e-15)
    np.testing.assert_allclose(rows.rotate(a.T, v.T).T, np.einsum("fij,fj->fi", matrices, v), atol=1e-14)
    np.testing.assert_allclose(rows.rotate_back(a.T, v.T).T, np.einsum("fji,fj->fi", matrices, v), atol=1e-14)
    r, c = _quats(rng, 1)[0], rng.normal(size=3)
    np.testing.assert_allclose(rows.apply(rows.right_tables(r), a.T).T, quat_multiply(a, r), atol=1e-15)
    np.testing.assert_allclose(rows.apply(rows.left_tables(r), a.T).T, quat_multiply(r, a), atol=1e-15)
    turned = rows.rotate_fixed(a.T, rows.fixed_vector_tables(c)).T
    np.testing.assert_allclose(turned, np.einsum("fij,j->fi", matrices, c), atol=1e-14)
    stacked = _quats(rng, 3)  # tables of several constants at once are each one's table
    np.testing.assert_allclose(rows.right_tables(stacked)[1], rows.right_tables(stacked[1]), atol=0)
    np.testing.assert_allclose(rows.left_tables(stacked)[2], rows.left_tables(stacked[2]), atol=0)


def test_the_turn_from_a_fixed_direction_is_the_smallest_and_a_half_turn_when_opposite() -> None:
    rng = np.random.default_rng(2)
    d = quat_normalize(rng.normal(size=3))
    u = rng.normal(size=(50, 3)) * rng.uniform(1e-3, 1e3, (50, 1))
    table, half_turn = rows.between_tables(d), rows.half_turns_from(d)
    several = quat_normalize(rng.normal(size=(3, 3)))
    np.testing.assert_array_equal(rows.between_tables(several)[1], rows.between_tables(several[1]))
    np.testing.assert_array_equal(rows.half_turns_from(several)[2], rows.half_turns_from(several[2]))
    turns = rows.turn_from(table, half_turn, u.T).T
    directions = u / np.linalg.norm(u, axis=1, keepdims=True)
    np.testing.assert_allclose(turns, quat_between(np.broadcast_to(d, u.shape), directions), atol=1e-15)
    opposite = rows.turn_from(table, half_turn, -3.0 * d[:, None]).T
    np.testing.assert_allclose(np.einsum("fij,j->fi", quat_to_matrix(opposite), d), [-d], atol=1e-15)
    assert opposite[0, 0] == 0.0  # a half turn


@st.composite
def _limits(draw: st.DrawFn) -> tuple[JointLimits, FloatArray]:
    """Random limits of a few bones (any mix of locks, limits and free axes, zero ranges on some sides) and
    random rotations of theirs, some of them the awkward ones: the identity, half turns, pure twists."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bones = draw(st.integers(1, 6))
    some = rng.random((bones, 3)) < 0.85  # the rest get a range of 0 on that side
    limits = JointLimits.of(
        bones,
        lock=rng.random((bones, 3)) < 0.25,
        use_limit=rng.random((bones, 3)) < 0.6,
        minimum=-rng.uniform(0, np.pi, (bones, 3)) * some,
        maximum=rng.uniform(0, np.pi, (bones, 3)) * some[::-1],
    )
    quats = quat_normalize(rng.normal(size=(40, bones, 4)))
    quats[0] = [1.0, 0.0, 0.0, 0.0]
    quats[1] = [0.0, 0.6, 0.0, 0.8]  # a half-turn swing: no twist to speak of
    quats[2] = [0.0, 0.0, 1.0, 0.0]  # a half turn about Y
    quats[3] = -quats[4]
    return limits, quats


def _nearest_allowed(limits: JointLimits, quats: FloatArray) -> FloatArray:
    """The limits module's maths for the nearest allowed rotations (F, m, 4), written out per component: the
    twist about Y first and the swing after it; the swing's X and Z bounded by sin of half each limit (0 where
    locked) and drawn into the ellipse of the two bounds where both are limited; the twist angle bounded."""
    lock, use = limits.lock, limits.use_limit
    low = np.where(use, np.sin(0.5 * limits.minimum), -1.0)
    high = np.where(use, np.sin(0.5 * limits.maximum), 1.0)
    q = np.where(quats[..., :1] < 0, -quats, quats)
    w, x, y, z = np.moveaxis(q, -1, 0)
    size = np.hypot(w, y)
    tw, ty = (
        np.where(size > 1e-12, w / np.maximum(size, 1e-300), 1.0),
        np.where(size > 1e-12, y / np.maximum(size, 1e-300), 0.0),
    )
    sx, sz = x * tw + z * ty, z * tw - x * ty
    sx = np.where(lock[:, 0], 0.0, np.clip(sx, low[:, 0], high[:, 0]))
    sz = np.where(lock[:, 2], 0.0, np.clip(sz, low[:, 2], high[:, 2]))
    semi_x, semi_z = np.where(sx >= 0, high[:, 0], -low[:, 0]), np.where(sz >= 0, high[:, 2], -low[:, 2])
    with np.errstate(divide="ignore", invalid="ignore"):
        reach = np.hypot(np.where(semi_x > 0, sx / semi_x, 0.0), np.where(semi_z > 0, sz / semi_z, 0.0))
    both = use[:, 0] & use[:, 2] & ~lock[:, 0] & ~lock[:, 2]
    shrink = np.where(both & (reach > 1.0), 1.0 / np.maximum(reach, 1.0), 1.0)
    sx, sz = sx * shrink, sz * shrink
    sw = np.sqrt(np.maximum(0.0, 1.0 - sx * sx - sz * sz))
    angle = 2.0 * np.arctan2(ty, tw)
    angle = np.where(use[:, 1], np.clip(angle, limits.minimum[:, 1], limits.maximum[:, 1]), angle)
    angle = np.where(lock[:, 1], 0.0, angle)
    tw, ty = np.cos(0.5 * angle), np.sin(0.5 * angle)
    clamped = np.stack([sw * tw, sx * tw - sz * ty, sw * ty, sz * tw + sx * ty], axis=-1)
    return np.asarray(clamped / np.linalg.norm(clamped, axis=-1, keepdims=True))


@settings(max_examples=60)
@given(_limits())
def test_the_row_clamp_is_the_nearest_allowed_rotation(case: tuple[JointLimits, FloatArray]) -> None:
    """On rows, of every bone at once and of each bone, and as ``JointLimits.clamp`` gives it frames first."""
    limits, quats = case
    expected = _nearest_allowed(limits, quats)
    every = RowClamp.of(limits)(quats.transpose(2, 1, 0)).transpose(2, 1, 0)
    one = np.stack([RowClamp.of(limits, k)(quats[:, k].T).T for k in range(limits.bones)], axis=1)
    each = np.stack([limits.clamp(quats[:, k], bone=k) for k in range(limits.bones)], axis=1)
    for clamped in (every, one, limits.clamp(quats), each):
        assert (clamped[..., 0] >= 0).all()
        np.testing.assert_allclose(np.linalg.norm(clamped, axis=-1), 1.0, atol=1e-14)
        assert limits.excess(clamped).max() <= 1e-7
        # The same rotations, but where the twist is undefined (a half-turn swing) either choice is nearest.
        np.testing.assert_allclose(clamped[4:], expected[4:], atol=1e-12)


@pytest.mark.parametrize("bone", [None, 0])
def test_a_free_bone_is_left_as_it_is(bone: int | None) -> None:
    quats = quat_normalize(np.random.default_rng(3).normal(size=(20, 1, 4)))
    clamp = RowClamp.of(JointLimits.free(1), bone)
    given_rows = quats.transpose(2, 1, 0) if bone is None else quats[:, 0].T
    clamped = clamp(given_rows)
    np.testing.assert_array_equal(clamped, given_rows * np.sign(given_rows[0]))
