"""Every report's ``repr`` is a short line of counts and maxima with the scene's unit, not its arrays: a bake's,
a planting's, targets made from the animation, a layer applied and keys reduced, on a committed clip."""

from __future__ import annotations

import re

import bpy
import edit_scenes
import mocap
import pytest

from fabrik_addon import api
from fabrik_addon.words import length_words

CLIP = "walk_30fps_m"
MM = ("mm", 0.001)


@pytest.fixture(autouse=True)
def registered() -> None:
    api.armatures_with_chains()  # the chain list is the add-on's settings: registered where it is not enabled


def _short(report: object) -> str:
    """The report's repr, checked to be one short line without arrays."""
    text = repr(report)
    assert "\n" not in text
    assert len(text) < 400, text
    assert "array" not in text
    assert text == str(report)
    return text


def test_a_chain_list_bake_and_what_editing_through_ik_made_say_counts_and_maxima_in_millimetres() -> None:
    armature = edit_scenes.clip_with_chains(CLIP)
    made = api.targets_from_animation(armature, key_error=0.001)
    assert _short(made) == (
        f"TargetsReport(targets for 4 chains (4 poles) in {made.collection.name!r}, frames "
        f"{made.frames[0]}-{made.frames[1]}, {made.keys.words() if made.keys else ''}; {made.seconds:.2f} s)"
    )
    assert made.keys is not None
    assert re.search(r", kept \d+% of the keys \(\d+ of \d+\), largest error 0\.\d+ mm;", repr(made))

    rig = api.bake_chains(armature, output="layer", key_error=0.0005)
    chain = rig.chains[0]
    assert chain.length_unit == MM
    text = _short(chain)
    assert text.startswith(
        f"BakeReport({chain.tip_bone!r} of {armature.name!r}: 2 bones, frames {chain.frames[0]}-{chain.frames[-1]} "
        f"({len(chain.frames)} keyed), max error {length_words(chain.max_error, MM)}, "
    )
    assert re.search(r", kept \d+% of the keys \(\d+ of \d+\), largest error \d\.\d+ mm; \d+\.\d\d s\)$", text)
    assert re.fullmatch(
        r"RigBakeReport\(4 chains \(\w+, \w+, \w+, \w+\): max error \d+\.?\d* mm, (on|off) target.*"
        r", kept \d+% of the keys \(\d+ of \d+\), largest error \d\.\d+ mm; \d+\.\d\d s\)",
        _short(rig),
    )
    assert f"max error {length_words(rig.max_error, MM)}" in repr(rig)

    applied = api.apply_layer(armature)
    assert _short(applied) == (
        f"AppliedLayer({applied.channels} channels merged into Action {applied.action.name!r}, frames "
        f"{applied.frames[0]}-{applied.frames[1]})"
    )
    reduced = api.reduce_keys(armature, key_error=0.001)
    assert _short(reduced) == (
        f"KeysReport(kept {100 * reduced.kept:.0f}% of the keys ({reduced.keys} of {reduced.dense_keys}), largest "
        f"error {length_words(reduced.max_error, MM)}, key error 1.0 mm)"
    )
    bpy.data.actions.remove(applied.action)
    assert "merged into Action (removed)" in repr(applied)  # a report outlives what it names


def test_a_planting_says_its_feet_contacts_skate_and_error_in_the_scenes_unit() -> None:
    armature = mocap.import_clip(CLIP)
    feet = [leg.foot for leg in mocap.legs(armature).values()]
    report = api.plant_feet(armature, feet)
    before = max(s for foot in report.feet for s in foot.skate_before)
    after = max(s for foot in report.feet for s in foot.skate_after)
    contacts = sum(len(foot.contacts) for foot in report.feet)
    text = _short(report)
    assert text.startswith(
        f"PlantReport({feet[0]!r}, {feet[1]!r}, frames {report.frames[0]}-{report.frames[1]}: {contacts} contacts, "
        f"skate up to {before / 0.001:.1f} -> {after / 0.001:.2g} mm, max error {length_words(report.max_error, MM)}"
    )
    assert text.endswith(f"; {report.seconds:.2f} s)")
    foot = report.feet[0]
    assert _short(foot).startswith(f"FootReport({foot.foot!r}: {len(foot.contacts)} contacts (found), skate up to ")
    assert f", leg {length_words(foot.leg_length, MM)}" in repr(foot)

    units = bpy.context.scene.unit_settings  # a scene in centimetres: its reports in centimetres
    units.length_unit = "CENTIMETERS"
    again = api.plant_feet(armature, feet)
    assert f"max error {length_words(again.max_error, ('cm', 0.01))}" in _short(again)
    assert " cm, leg " in _short(again.feet[0])
