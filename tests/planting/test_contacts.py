"""Contacts found from a ball's path, its floor and its skate: the rules in leg lengths and seconds, so the same
motion in other units or at another frame rate gives the same contacts."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.planting import ContactRules, contact_flags, find_contacts, floor_height, runs, skate
from fabrik_addon.solver import FloatArray


def _steps(fps: float, unit: float = 1.0) -> FloatArray:
    """A ball (F, 3) over 3 s: down and still 0-0.5 s, a swing, down again 1.0-1.8 s (a 2 mm creep, and one
    frame of noise lifting it at 1.4 s), a swing, down from 2.4 s. Leg length 1 (times ``unit``)."""
    t = np.arange(0.0, 3.0, 1.0 / fps)
    x = np.interp(t, [0, 0.5, 1.0, 1.8, 2.4, 3.0], [0, 0, 0.6, 0.602, 1.2, 1.2])
    z = 0.2 * np.clip(np.sin(np.pi * np.clip(np.interp(t, [0.5, 1.0, 1.8, 2.4], [0, 1, 1, 2]), 0, 2)), 0, None)
    z[(t >= 1.0) & (t <= 1.8)] = 0.0
    noisy = np.argmin(np.abs(t - 1.4))
    z[noisy] = 0.3  # one frame of a bad marker
    return np.asarray(np.stack([x, np.zeros_like(x), z], axis=1) * unit)


@pytest.mark.parametrize(("fps", "unit"), [(30.0, 1.0), (120.0, 1.0), (30.0, 100.0), (24.0, 0.01)])
def test_the_same_motion_gives_the_same_contacts_in_any_unit_and_frame_rate(fps: float, unit: float) -> None:
    ball = _steps(fps, unit)
    contacts = find_contacts(ball, fps=fps, leg_length=unit, floor=0.0)
    seconds = [(first / fps, last / fps) for first, last in contacts]
    assert len(seconds) == 3
    for (first, last), (start, end) in zip(seconds, [(0.0, 0.5), (1.0, 1.8), (2.4, 3.0)], strict=True):
        assert first == pytest.approx(start, abs=2.5 / fps + 0.02)  # the speed threshold blurs an edge a little
        assert last == pytest.approx(end, abs=2.5 / fps + 0.02)


def test_a_one_frame_gap_is_closed_and_a_longer_one_is_not() -> None:
    flags = np.array([1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1], dtype=bool)
    assert runs(flags, 1, 1) == [(0, 5), (8, 10)]
    assert runs(flags, 0, 1) == [(0, 2), (4, 5), (8, 10)]
    assert runs(flags, 2, 1) == [(0, 10)]
    assert runs(flags, 1, 4) == [(0, 5)]  # too short a run is no contact


def test_a_ball_too_high_or_too_fast_is_not_planted() -> None:
    fps = 30.0
    ball = _steps(fps)
    high = ball + np.array([0.0, 0.0, 0.05])  # 5 cm of a 1 m leg above the floor: more than 4 %
    assert find_contacts(high, fps=fps, leg_length=1.0, floor=0.0) == []
    assert len(find_contacts(high, fps=fps, leg_length=1.0, floor=0.0, rules=ContactRules(height=0.06))) == 3
    sliding = ball.copy()
    sliding[:, 1] = np.arange(len(ball)) * 0.5 / fps  # sliding sideways at half a leg per second
    assert find_contacts(sliding, fps=fps, leg_length=1.0, floor=0.0) == []


def test_the_floor_is_where_balls_rest_not_a_dip_through_it() -> None:
    fps = 30.0
    ball = _steps(fps) + np.array([0.0, 0.0, 0.07])
    ball[20, 2] = 0.0  # a toe dipping through the floor for a frame, while the foot moves
    ball[19:22, 0] += [0.0, 0.05, 0.1]
    floor = floor_height([ball], fps=fps, slowest=[0.3])
    assert floor == pytest.approx(0.07, abs=1e-9)
    never_resting = np.stack([np.arange(30.0), np.zeros(30), np.linspace(0.2, 0.1, 30)], axis=1)
    assert floor_height([never_resting], fps=fps, slowest=[0.3]) == pytest.approx(0.1)


def test_skate_is_the_widest_slide_within_a_contact() -> None:
    ball = np.array([[0, 0, 0], [0.001, 0, 0.5], [0.003, 0.004, 0], [0.5, 0, 0]], dtype=float)
    assert skate(ball, (0, 2)) == pytest.approx(np.hypot(0.003, 0.004))  # horizontal only
    assert skate(ball, (1, 1)) == 0.0
    np.testing.assert_array_equal(contact_flags([(1, 2)], 4), [False, True, True, False])


@pytest.mark.parametrize(
    ("field", "value"), [("height", 0.0), ("speed", -1.0), ("seconds", float("nan")), ("gap_frames", 1.5)]
)
def test_bad_rules_are_refused_by_name(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field.split("_")[0]):
        ContactRules(**{field: value})  # type: ignore[arg-type]
