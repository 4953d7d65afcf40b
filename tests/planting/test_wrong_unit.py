"""Plant Feet's settings in leg lengths that look given in another unit get a warning saying what they mean on
these legs and what the default is; plausible ones get none."""

from __future__ import annotations

import pytest

from fabrik_addon.planting import ContactRules, PlantRules, wrong_unit

MM = ("mm", 0.001)
LEG = 0.8013  # metres, hip to ankle: the committed walk's legs


def test_the_defaults_and_values_near_them_get_no_warning() -> None:
    assert wrong_unit(PlantRules(), LEG, MM) == ()
    rules = PlantRules(ContactRules(height=0.25, speed=4.0), hips_speed=4.0, tolerance=0.01)
    assert wrong_unit(rules, LEG, MM) == ()


def test_a_height_meant_in_centimetres_is_warned_of_with_what_it_means_on_these_legs() -> None:
    (warning,) = wrong_unit(PlantRules(ContactRules(height=4.0)), LEG, MM)
    assert warning == (
        "Height (contact_height) 4 is in leg lengths: 3.2 m on these legs (801.3 mm hip to ankle), more than 0.25 "
        "can be meant (every frame the ball is that low counts as near the floor): was it given in another unit? It "
        "was used as given; 0.04 (the default) is 32.1 mm on these legs"
    )


@pytest.mark.parametrize(
    ("rules", "named", "shown"),
    [
        (PlantRules(ContactRules(speed=40.0)), "Speed (contact_speed) 40 is in leg lengths a second", "0.4 (the"),
        (PlantRules(hips_speed=30.0), "Hips Speed (hips_speed) 30 is in leg lengths a second", "0.3 (the"),
        (PlantRules(tolerance=0.1), "tolerance 0.1 is in leg lengths: 80.1 mm on these legs", "0.0002 (the"),
    ],
)
def test_each_setting_in_leg_lengths_is_checked(rules: PlantRules, named: str, shown: str) -> None:
    (warning,) = wrong_unit(rules, LEG, MM)
    assert warning.startswith(named)
    assert shown in warning


def test_every_suspect_setting_gets_its_own_warning() -> None:
    rules = PlantRules(ContactRules(height=4.0, speed=40.0), hips_speed=30.0, tolerance=0.1)
    warnings = wrong_unit(rules, LEG, ("in", 0.0254))
    assert [w.split(" ", 1)[0] for w in warnings] == ["Height", "Speed", "Hips", "tolerance"]
    assert "(31.5 in hip to ankle)" in warnings[0]
