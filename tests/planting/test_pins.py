"""Pins through contacts, eased in and out without a pop; the animation untouched elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.planting import pinned_path, smooth_step
from fabrik_addon.solver import FloatArray


def _walking_ball(frames: int = 60) -> FloatArray:
    rng = np.random.default_rng(3)
    return np.asarray(np.cumsum(rng.normal(0.0, 0.01, (frames, 3)), axis=0))


@pytest.mark.parametrize("pin_at", ["middle", "start"])
def test_the_ball_holds_one_point_through_each_contact(pin_at: str) -> None:
    ball = _walking_ball()
    contacts = [(10, 20), (35, 44)]
    path = pinned_path(ball, contacts, blend_frames=4, pin_at=pin_at)
    for (first, last), pin in zip(contacts, path.pins, strict=True):
        np.testing.assert_array_equal(path.goals[first : last + 1], np.broadcast_to(pin, (last - first + 1, 3)))
        np.testing.assert_array_equal(pin, ball[(first + last) // 2 if pin_at == "middle" else first])
        np.testing.assert_array_equal(path.weights[first : last + 1], 1.0)


def test_outside_contacts_and_blends_the_goal_is_the_animation() -> None:
    ball = _walking_ball()
    path = pinned_path(ball, [(10, 20), (35, 44)], blend_frames=4)
    free = np.ones(60, dtype=bool)
    free[6:25] = False
    free[31:49] = False
    np.testing.assert_array_equal(path.goals[free], ball[free])
    np.testing.assert_array_equal(path.weights[free], 0.0)
    assert (path.weights[6:10] > 0).all()
    assert (path.weights[21:25] > 0).all()


def test_blends_ease_without_a_pop_and_never_overlap() -> None:
    ball = _walking_ball()
    path = pinned_path(ball, [(10, 20), (26, 30)], blend_frames=10)  # 5 frames apart: 2 frames of blend each
    assert path.weights[21] > 0
    assert path.weights[22] > 0
    assert path.weights[23] == 0.0  # the middle frame between them belongs to neither
    assert path.weights[24] > 0
    assert path.weights[25] > 0
    ramp = path.weights[:10]
    assert (np.diff(ramp) > 0).all()
    assert ramp[0] < 0.03  # rising from near zero, smoothly
    steps = np.abs(np.diff(path.weights))
    assert steps.max() <= 0.5 + 1e-12  # no frame jumps by more than half the way (10 frames: far less)
    assert np.abs(np.diff(path.weights[:11])).max() < 0.2


def test_contacts_at_the_ends_of_the_frames_blend_only_inward() -> None:
    ball = _walking_ball(30)
    path = pinned_path(ball, [(0, 5), (25, 29)], blend_frames=4)
    np.testing.assert_array_equal(path.weights[:6], 1.0)
    np.testing.assert_array_equal(path.weights[25:], 1.0)
    assert path.weights[10:21].max() == 0.0


def test_smooth_step_is_flat_at_both_ends() -> None:
    t = np.array([0.0, 1e-4, 0.5, 1 - 1e-4, 1.0])
    values = smooth_step(t)
    np.testing.assert_allclose(values[[0, 2, 4]], [0.0, 0.5, 1.0])
    assert values[1] < 1e-7
    assert 1.0 - values[3] < 1e-7


@pytest.mark.parametrize(("keyword", "value"), [("pin_at", "end"), ("blend_frames", -1), ("blend_frames", 2.5)])
def test_bad_options_are_refused(keyword: str, value: object) -> None:
    options = {"blend_frames": 3, "pin_at": "middle", keyword: value}
    with pytest.raises(ValueError, match=keyword):
        pinned_path(_walking_ball(), [(10, 20)], **options)  # type: ignore[arg-type]
