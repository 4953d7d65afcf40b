"""The words every report puts its numbers in (``fabrik_addon.words``): lengths with their unit, counts, frames
off target by cause, keys kept; and a reduction's report (``KeysReport``) as ``repr`` shows it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from fabrik_addon.reduction import keys_report
from fabrik_addon.words import (
    SCENE_UNITS,
    block_name,
    causes_words,
    counted,
    digits,
    frames_words,
    kept_words,
    length_words,
    missed_words,
    skate_words,
)

MM = ("mm", 0.001)


def test_a_length_is_given_in_the_unit_with_its_symbol() -> None:
    assert length_words(0.016, MM) == "16.0 mm"
    assert length_words(0.0016, MM) == "1.6 mm"
    assert length_words(2.1e-5, MM) == "0.021 mm"
    assert length_words(0.025, ("cm", 1.0)) == "0.025 cm"  # a Unit Scale of 0.01: one scene unit is one cm
    assert length_words(0.0016) == "0.0016 units"  # no scene known: Blender units
    assert SCENE_UNITS == ("units", 1.0)
    assert [digits(v) for v in (27.44, 1.0, 0.07123, 1.2e-5, -3.25)] == ["27.4", "1.0", "0.071", "1.2e-05", "-3.2"]


def test_counts_frames_and_causes() -> None:
    assert [counted(n, "chain") for n in (0, 1, 2)] == ["0 chains", "1 chain", "2 chains"]
    assert frames_words([1, 3, 5]) == "frames 1-5 (3 keyed)"
    assert frames_words([]) == "no frames"
    assert missed_words({}) == "on target on every frame"
    assert missed_words({"out of reach": ()}) == "on target on every frame"
    causes = {"out of reach": (3, 4), "the scene": (9,)}
    assert missed_words(causes) == "off target on 3 frames (2 out of reach, 1 the scene)"
    assert causes_words([causes, {"the scene": (2, 3)}, {}]) == " (2 out of reach, 3 the scene)"
    assert causes_words([]) == ""


def test_keys_kept_and_skate_in_words() -> None:
    assert kept_words(1234, 15360, 0.00048, MM) == "kept 8% of the keys (1234 of 15360), largest error 0.48 mm"
    assert kept_words(0, 0, 0.0, MM) == "kept 100% of the keys (0 of 0), largest error 0 mm"
    assert skate_words([0.02, 0.0274], [7.1e-5, 1e-5], MM) == "skate up to 27.4 -> 0.071 mm"
    assert skate_words([], [], MM) == "skate up to 0 -> 0 mm"


def test_a_removed_data_blocks_name_does_not_break_a_repr() -> None:
    class Removed:
        @property
        def name(self) -> str:
            raise ReferenceError("StructRNA of type Action has been removed")

    class Action:
        name = "Walk"

    assert block_name(Action()) == "'Walk'"
    assert block_name(Removed()) == "(removed)"


def test_a_keys_report_shows_counts_and_maxima_in_its_unit_not_its_arrays() -> None:
    rng = np.random.default_rng(7)
    report = keys_report(np.arange(1, 5001), rng.uniform(0, 4.8e-4, (5000, 30)), 1234, 15360, 5e-4)
    assert repr(report).startswith("KeysReport(kept 8% of the keys (1234 of 15360), largest error 0.00048 units, ")
    shown = repr(replace(report, length_unit=MM))
    assert shown == "KeysReport(kept 8% of the keys (1234 of 15360), largest error 0.48 mm, key error 0.5 mm)"
    assert "array" not in shown


def test_a_length_of_a_metre_or_more_is_given_in_metres_and_of_100_inches_in_feet() -> None:
    assert length_words(3.2053, MM) == "3.2 m"
    assert length_words(0.8013, MM) == "801.3 mm"
    assert length_words(-1.5, MM) == "-1.5 m"
    inch = ("in", 0.0254)
    assert length_words(99 * 0.0254, inch) == "99.0 in"
    assert length_words(120 * 0.0254, inch) == "10.0 ft"
    assert length_words(2000.0, ("cm", 1.0)) == "2000.0 cm"  # a chosen unit other than mm or in stays
