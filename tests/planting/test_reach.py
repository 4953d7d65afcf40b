"""The hips' drop: the least lowering, at a limited speed, that brings every pin within reach; and the soft
easing of pins a leg still cannot reach."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.planting import eased_heads, hips_drop, lowered, needed_drop, rate_limited, smooth_drop


def test_the_drop_needed_brings_the_goal_exactly_to_the_reach() -> None:
    rng = np.random.default_rng(5)
    hips = rng.normal(0.0, 0.1, (50, 1, 3)) + np.array([0.0, 0.0, 1.0])
    heads = rng.normal(0.0, 0.3, (50, 1, 3)) * [1, 1, 0.1]
    reach = np.full((50, 1), 0.95)
    drop, out = needed_drop(hips, heads, reach)
    moved = lowered(hips, drop[:, 0])
    distance = np.linalg.norm(moved - heads, axis=-1)[:, 0]
    inside = np.linalg.norm(hips - heads, axis=-1)[:, 0] <= 0.95
    np.testing.assert_array_equal(drop[inside, 0], 0.0)
    reachable = ~out[:, 0] & ~inside
    assert reachable.any()
    np.testing.assert_allclose(distance[reachable], 0.95, atol=1e-12)


def test_a_goal_too_far_out_sideways_is_flagged() -> None:
    drop, out = needed_drop(np.array([[[0.0, 0, 1]]]), np.array([[[2.0, 0, 0]]]), np.array([[1.0]]))
    assert out[0, 0]
    assert drop[0, 0] == pytest.approx(1.0)  # down to the goal's height: as near as it gets


def test_rate_limited_is_the_least_curve_above_the_need_with_slopes_within_the_step() -> None:
    rng = np.random.default_rng(6)
    need = np.maximum(rng.normal(0, 1, 300), 0.0) * (rng.random(300) < 0.1)
    curve = rate_limited(need, 0.05)
    assert (curve >= need).all()
    assert np.abs(np.diff(curve)).max() <= 0.05 + 1e-12
    # the least such curve: the upper envelope of cones on every need
    cones = (need[None, :] - 0.05 * np.abs(np.arange(300)[:, None] - np.arange(300)[None, :])).max(axis=1)
    np.testing.assert_allclose(curve, np.maximum(cones, 0.0), atol=1e-12)


def test_hips_drop_takes_the_deepest_leg_and_leaves_unpinned_frames_alone() -> None:
    frames = 40
    hips = np.zeros((frames, 2, 3)) + np.array([0.0, 0.0, 1.0])
    heads = np.zeros((frames, 2, 3))
    heads[:, :, 2] = 0.1  # within reach as animated
    heads[10:30, 1] = [0.3, 0.0, 0.0]  # pinned 0.3 out and lower: the right leg needs a drop there
    weights = np.zeros((frames, 2))
    weights[10:30] = 1.0
    result = hips_drop(hips, heads, np.array([0.9, 0.9]), weights=weights, margin=0.0, max_step=0.02)
    need = 1.0 - np.sqrt(0.9**2 - 0.3**2)
    np.testing.assert_allclose(result.drop[10:30], need, atol=1e-12)
    assert np.abs(np.diff(result.drop)).max() <= 0.02 + 1e-12
    assert result.drop[0] == pytest.approx(max(0.0, need - 0.2))  # eased in over ten frames before
    margin = hips_drop(hips, heads, np.array([0.9, 0.9]), weights=weights, margin=0.05, max_step=1.0)
    np.testing.assert_allclose(margin.drop[10:30], 1.0 - np.sqrt(0.85**2 - 0.3**2), atol=1e-12)
    np.testing.assert_array_equal(margin.drop[:10], 0.0)  # unpinned frames keep the animation: no margin there


def test_eased_heads_pull_in_only_near_full_reach_and_only_where_soft() -> None:
    hips = np.zeros((3, 1, 3))
    heads = np.array([[[0, 0, -0.5]], [[0, 0, -0.99]], [[0, 0, -1.2]]], dtype=float)
    eased = eased_heads(hips, heads, np.array([1.0]), np.full((3, 1), 0.1))
    np.testing.assert_array_equal(eased[0], heads[0])
    assert -1.0 < eased[1, 0, 2] < -0.9
    assert -1.0 < eased[2, 0, 2] < eased[1, 0, 2] + 1e-12 or eased[2, 0, 2] < eased[1, 0, 2]
    np.testing.assert_array_equal(eased_heads(hips, heads, np.array([1.0]), np.zeros((3, 1))), heads)


def test_a_smooth_drop_is_never_short_of_the_need_and_holds_steady_through_steps() -> None:
    """A walk needs the hips lower twice a stride (0.5 s apart at 30 fps): the smooth drop is at or above the
    need on every frame, steady through the steps (where the least drop came and went with them) and eases in
    and out at the walk's ends over about its span."""
    fps, seconds = 30.0, 10.0
    t = np.arange(int(seconds * fps)) / fps
    walking = (t > 2.0) & (t < 8.0)
    need = np.where(walking, 0.04 * np.maximum(np.sin(2 * np.pi * t / 0.5), 0.0) ** 4, 0.0)
    drop = smooth_drop(need, fps)  # over a second
    assert (drop >= need).all()
    steady = (t > 3.0) & (t < 7.0)
    assert np.ptp(drop[steady]) < 0.02 * np.ptp(need[steady])
    assert np.abs(np.diff(drop)).max() < 0.15 * need.max()  # eased: the least drop rises the whole way in a frame
    assert drop[:20].max() == 0.0
    assert drop[-20:].max() == 0.0
    np.testing.assert_array_equal(smooth_drop(need, 1.0), need)  # no span: the need itself


def test_a_smooth_drop_covers_any_need() -> None:
    rng = np.random.default_rng(39)
    for span in (2.0, 7.0, 30.0, 121.0):
        need = np.maximum(rng.normal(0, 1, 400), 0.0) * (rng.random(400) < 0.05)
        drop = smooth_drop(need, span)
        assert (drop >= need).all()
        assert drop.max() <= need.max() + 1e-12
