"""``plant``: every foot's goals at once, from the feet as animated; and the settings value of a planting."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_addon.planting import PLANT_KEYWORDS, ContactRules, Foot, PlantRules, PlantSettings, foot_bones, plant, side
from fabrik_addon.solver import FloatArray

FPS = 30.0


def _stepping_foot(side: float, phase: float) -> Foot:
    """A leg 0.9 long (hip at 0.85 over the floor) stepping forward 0.5 a second: the ball down and creeping
    (1 cm per contact) half the time, swinging the other half; the ankle 0.05 behind the ball and above it."""
    t = np.arange(0.0, 4.0, 1.0 / FPS)
    cycle = (t + phase) % 1.0
    down = cycle < 0.5
    steps = np.floor(t + phase)
    x = steps * 0.5 + np.where(down, cycle * 0.02, 0.01 + (cycle - 0.5) * 0.98)
    z = np.where(down, 0.0, 0.12 * np.sin(np.pi * (cycle - 0.5) / 0.5))
    ball = np.stack([x, np.full_like(x, side), z], axis=1)
    ankle = ball + np.array([-0.05, 0.0, 0.06])
    hip = np.stack([0.5 * t - 0.125 + (phase % 1.0) * 0.5, np.full_like(t, side), np.full_like(t, 0.85)], axis=1)
    return Foot(ball, ankle, hip, 0.9)


def test_each_foot_is_pinned_through_its_contacts_and_follows_its_animation_elsewhere() -> None:
    feet = [_stepping_foot(0.1, 0.0), _stepping_foot(-0.1, 0.5)]
    planted = plant(feet, PlantRules(), fps=FPS, lower_hips=False)
    assert [len(c) for c in planted.contacts] == [4, 4]
    for k, (foot, contacts) in enumerate(zip(feet, planted.contacts, strict=True)):
        for first, last in contacts:
            held = planted.goals[first : last + 1, k]
            assert np.ptp(held, axis=0).max() <= 1e-12  # one point through the contact
            assert np.ptp(foot.ball[first : last + 1, 0]) > 0.005  # where the animation crept
        free = planted.weights[:, k] == 0.0
        np.testing.assert_array_equal(planted.goals[free, k], foot.ball[free])
    assert planted.floor == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_array_equal(planted.drop, 0.0)


def test_lowered_hips_bring_every_pin_within_reach_less_the_soft_margin() -> None:
    foot = _stepping_foot(0.1, 0.0)
    far = Foot(foot.ball, foot.ankle, foot.hip + np.array([0.0, 0.0, 0.1]), foot.reach)  # hips high: pins out of reach
    rules = PlantRules(soft_reach=0.02)
    without = plant([far], rules, fps=FPS, lower_hips=False)
    assert without.out_of_reach.any()
    lowered = plant([far], rules, fps=FPS, lower_hips=True)
    assert not lowered.out_of_reach.any()
    hips = far.hip.copy()
    hips[:, 2] -= lowered.drop
    heads = lowered.goals[:, 0] - (far.ball - far.ankle)
    pinned = lowered.weights[:, 0] > 0
    distance = np.linalg.norm(heads - hips, axis=1)
    assert distance[pinned].max() <= 0.9 * (1 - 0.02 * lowered.weights[pinned, 0].min()) + 1e-9
    assert np.abs(np.diff(lowered.drop)).max() <= 0.3 * 0.9 / FPS + 1e-12  # hips_speed leg lengths a second


def test_contacts_given_are_planted_as_given() -> None:
    foot = _stepping_foot(0.1, 0.0)
    marked = Foot(foot.ball, foot.ankle, foot.hip, foot.reach, [(40, 50)])
    planted = plant([marked], PlantRules(), fps=FPS, lower_hips=False)
    assert planted.contacts == [[(40, 50)]]
    assert np.ptp(planted.goals[40:51, 0], axis=0).max() == 0.0


def test_settings_from_keywords_check_what_they_are_given() -> None:
    settings = PlantSettings.from_keywords(
        "Walk", ["LeftAnkle", "RightAnkle"], hips_bone="Hips", contact_height=0.05, blend_seconds=0.1, frame_end=9
    )
    assert settings.feet == ("LeftAnkle", "RightAnkle")
    assert settings.rules.contacts == ContactRules(height=0.05)
    assert settings.rules.blend_seconds == 0.1
    assert settings.frames.end == 9
    assert "contact_height" in PLANT_KEYWORDS
    with pytest.raises(TypeError, match="unknown plant_feet option 'contact_hieght'"):
        PlantSettings.from_keywords("Walk", ["LeftAnkle"], contact_hieght=0.05)
    with pytest.raises(ValueError, match=r"feet must name the foot bones \(a list of names; none to find them\)"):
        PlantSettings.from_keywords("Walk", "LeftAnkle")
    assert PlantSettings.from_keywords("Walk").feet == ()  # found in the animation
    with pytest.raises(ValueError, match="named twice"):
        PlantSettings.from_keywords("Walk", ["LeftAnkle", "LeftAnkle"])
    with pytest.raises(ValueError, match="chain_length"):
        PlantSettings.from_keywords("Walk", ["LeftAnkle"], chain_length=1)
    with pytest.raises(ValueError, match=r"Hips \(hips_bone\) 'LeftAnkle' is one of the feet"):
        PlantSettings.from_keywords("Walk", ["LeftAnkle"], hips_bone="LeftAnkle")
    with pytest.raises(ValueError, match="pin_at"):
        PlantSettings.from_keywords("Walk", ["LeftAnkle"], pin_at="end")
    with pytest.raises(ValueError, match="hips_speed"):
        PlantSettings.from_keywords("Walk", ["LeftAnkle"], hips_speed=0)


@pytest.mark.parametrize("soft_reach", [0.26, 5.0])
def test_a_soft_reach_that_cannot_be_meant_is_refused_naming_its_unit(soft_reach: float) -> None:
    with pytest.raises(ValueError, match=r"Soft Reach \(soft_reach\) .* is in leg lengths: .* give at most 0.25"):
        PlantRules(soft_reach=soft_reach)
    assert PlantRules(soft_reach=0.25).soft_reach == 0.25


def test_a_cut_in_the_animation_is_never_blended_across() -> None:
    """Two takes spliced with the body 1.5 leg lengths apart, a contact ending a few frames before the cut:
    its blend out stops at the cut (it eased the ball toward a pin a leg and a half away, and the hips went
    down by most of a leg), no contact spans the cut, and the hips need no drop for it."""
    fps, frames, cut = 30.0, 120, 60
    hip = np.tile([0.0, 0.0, 0.9], (frames, 1))
    ball = np.tile([0.1, 0.0, 0.0], (frames, 1))
    hip[cut:, 0] += 1.5
    ball[cut:, 0] += 1.5
    ankle = ball - [0.1, 0.0, -0.05]
    foot = Foot(ball, ankle, hip, 0.9, [(10, 57), (70, 100)])  # as marked: the first ends 2 frames before the cut
    planted = plant([foot], PlantRules(), fps=fps, lower_hips=True)
    assert planted.contacts[0] == [(10, 57), (70, 100)]
    assert plant([Foot(ball, ankle, hip, 0.9, [(10, 100)])], PlantRules(), fps=fps, lower_hips=True).contacts == [
        [(10, 59), (60, 100)]
    ]
    np.testing.assert_allclose(planted.goals[cut:, 0], ball[cut:], atol=1e-12)  # the second take's own pin
    np.testing.assert_allclose(planted.goals[:cut, 0], ball[:cut], atol=1e-12)
    np.testing.assert_array_equal(planted.drop, 0.0)


def _biped(toes: bool = True) -> tuple[FloatArray, list[int], list[str], FloatArray]:
    """A standing biped's bones (heads at rest, parents, names) and its tails on two frames: hips, a spine, and
    each leg a hip joint, thigh, shin, foot (and toes)."""
    Point = tuple[float, float, float]
    heads: dict[str, Point] = {"Hips": (0.0, 0.0, 1.0), "Spine": (0.0, 0.0, 1.0), "Head": (0.0, 0.0, 1.5)}
    parents: dict[str, str] = {"Hips": "", "Spine": "Hips", "Head": "Spine"}
    for letter, x in (("L", 0.1), ("R", -0.1)):
        leg: list[tuple[str, Point]] = [("HipJoint", (0.0, 0.0, 1.0)), ("Thigh", (x, 0.0, 0.95))]
        leg += [("Shin", (x, 0.0, 0.5)), ("Foot", (x, 0.0, 0.08))] + ([("Toes", (x, -0.12, 0.02))] if toes else [])
        parent = "Hips"
        for part, head in leg:
            heads[f"{part}.{letter}"], parents[f"{part}.{letter}"] = head, parent
            parent = f"{part}.{letter}"
    names = list(heads)
    children = {name: [n for n in names if parents[n] == name] for name in names}
    tips = {"Head": (0, 0, 1.7), "Toes.L": (0.1, -0.2, 0.0), "Toes.R": (-0.1, -0.2, 0.0)}
    if not toes:
        tips = {"Head": (0, 0, 1.7), "Foot.L": (0.1, -0.15, 0.0), "Foot.R": (-0.1, -0.15, 0.0)}
    tails = [tips.get(n, heads[children[n][-1]] if children[n] else (0, 0, 0)) for n in names]
    at_rest = np.array([heads[n] for n in names], dtype=float)
    index = [names.index(parents[n]) if parents[n] else -1 for n in names]  # '' for the root
    return at_rest, index, names, np.array([tails, tails], dtype=float)


@pytest.mark.parametrize("toes", [True, False])
def test_the_feet_of_a_biped_are_the_bones_below_the_thigh_and_shin_left_then_right(toes: bool) -> None:
    heads, parents, names, tails = _biped(toes)
    found = foot_bones(tails, [1.7, 1.7], heads, parents, names)
    assert [names[b] for b in found.feet] == ["Foot.L", "Foot.R"]


def test_a_side_is_read_from_a_bones_name_as_clips_spell_it() -> None:
    for name in ("LeftAnkle", "foot.L", "CC_Base_L_Foot", "lfoot", "Foot_L", "LeftToeBase", "mixamorig:LeftFoot"):
        assert side(name) == "left", name
    for name in ("RightAnkle", "foot.R", "CC_Base_R_Foot", "rtibia", "Foot_R"):
        assert side(name) == "right", name
    for name in ("Hips", "lowerback", "Root", "Spine1"):
        assert side(name) is None, name


def test_the_hips_bob_at_most_a_quarter_more_than_animated_however_short_the_need() -> None:
    """Hips bobbing 2 cm, one pin in the middle of the clip a leg can reach only with them 5 cm lower: the least
    drop makes them bob 7 cm; the smooth drop, slowed where it must be, at most 2.5 cm, every pin reached."""
    fps, frames = 30.0, 300
    t = np.arange(frames) / fps
    hip = np.column_stack([np.zeros(frames), np.zeros(frames), 0.9 + 0.01 * np.sin(2 * np.pi * t)])
    ball = np.column_stack([np.zeros(frames), np.zeros(frames), np.zeros(frames)])
    ball[140:160, 0] = 0.42  # out sideways: needs the hips about 5 cm lower there
    ankle = ball + np.array([0.0, 0.0, 0.05])
    foot = Foot(ball, ankle, hip, 0.9, [(140, 159)])
    least = plant([foot], PlantRules(hips_seconds=0.0, soft_reach=0.0), fps=fps, lower_hips=True)
    smooth = plant([foot], PlantRules(soft_reach=0.0), fps=fps, lower_hips=True)
    assert least.bob_after > 2.5 * least.bob_before
    assert smooth.bob_after <= 1.25 * smooth.bob_before
    np.testing.assert_array_less(least.drop - 1e-12, smooth.drop)  # at least the need on every frame
    assert not smooth.out_of_reach.any()
