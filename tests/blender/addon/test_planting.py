"""Plant Feet and Detect Contacts from the sidebar: the armature's planting settings, one undo step each, the
report in the panel's words, errors that change nothing, and the panel drawn in every state."""

from __future__ import annotations

import bpy
import mocap
import pytest

from fabrik_addon.blender.planting import MARK, marks_fcurve
from fabrik_addon.blender.properties import settings_of
from fabrik_addon.blender.ui import planting

from ..oracle import file_summary
from .scenes import activate
from .test_panel import draw_panels
from .test_undo import settled


def _walk(hips: str = "Hips") -> bpy.types.Object:
    """The walk clip, active, with both feet and the hips in its Plant Feet settings."""
    armature = mocap.import_clip("walk")
    activate(armature)
    planting_settings = settings_of(armature).planting
    for leg in mocap.legs(armature).values():
        planting_settings.feet.add().bone = leg.foot
    planting_settings.hips_bone = hips
    return armature


def test_detect_contacts_marks_the_feet_and_plant_feet_plants_them_in_one_undo_step_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    armature = _walk()
    name = armature.name
    before = settled()
    bpy.ops.ed.undo_push(message="Before")
    assert bpy.ops.fabrik.detect_contacts("EXEC_DEFAULT", True) == {"FINISHED"}
    assert "Marked the contacts of 2 feet (LeftAnkle 5, RightAnkle 3)" in capsys.readouterr().out
    marked = settled()
    for foot in ("LeftAnkle", "RightAnkle"):
        assert marks_fcurve(armature, foot) is not None
    assert bpy.ops.fabrik.plant_feet("EXEC_DEFAULT", True) == {"FINISHED"}
    out = capsys.readouterr().out
    assert "Planted 2 feet in 8 contacts" in out
    assert "Hips 'Hips' lowered by up to" in out
    assert "LeftAnkle: 5 contacts (marked)" in out
    planted = settled()
    assert planted != marked
    bpy.ops.ed.undo()
    assert settled() == marked
    bpy.ops.ed.undo()
    assert settled() == before
    assert marks_fcurve(bpy.data.objects[name], "LeftAnkle") is None


def test_a_planting_that_cannot_be_done_is_reported_and_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    _walk(hips="Chest")
    before = file_summary()
    with pytest.raises(RuntimeError, match="Hips bone 'Chest' is not above the leg of 'LeftAnkle'"):
        bpy.ops.fabrik.plant_feet()
    assert file_summary() == before


def test_without_feet_plant_feet_finds_them_and_says_which_and_a_foot_with_no_bone_is_named() -> None:
    armature = mocap.import_clip("walk")
    activate(armature)
    assert (
        "Feet: found in the animation" in draw_panels(bpy.context, (planting.FABRIK_PT_planting,))["FABRIK_PT_planting"]
    )
    assert bpy.ops.fabrik.plant_feet() == {"FINISHED"}
    assert marks_fcurve(armature, "LeftAnkle") is None  # planted, not marked
    settings_of(armature).planting.feet.add()
    with pytest.raises(RuntimeError, match="Pick a bone for every foot"):
        bpy.ops.fabrik.detect_contacts()


def test_feet_are_added_and_removed_and_the_panel_draws_them() -> None:
    armature = _walk()
    feet = settings_of(armature).planting.feet
    assert bpy.ops.fabrik.foot_add() == {"FINISHED"}
    assert len(feet) == 3
    assert bpy.ops.fabrik.foot_remove(index=2) == {"FINISHED"}
    assert [foot.bone for foot in feet] == ["LeftAnkle", "RightAnkle"]
    with pytest.raises(RuntimeError, match="There is no foot 5: the list has 2"):
        bpy.ops.fabrik.foot_remove(index=4)
    drawn = draw_panels(bpy.context, (planting.FABRIK_PT_planting,))
    shown = drawn["FABRIK_PT_planting"]
    for item in ("Foot 1", "LeftAnkle", "Foot 2", "RightAnkle", "bpy.ops.fabrik.foot_remove(index=1)", "Hips"):
        assert item in shown
    assert "bpy.ops.fabrik.detect_contacts()" in shown
    assert "bpy.ops.fabrik.plant_feet()" in shown
    # The settings in leg lengths say so in their labels (and their tooltips).
    for label in ("Height (legs)", "Speed (legs/s)", "Soft Reach (legs)", "Hips Speed (legs/s)"):
        assert label in shown, shown
    properties = settings_of(armature).planting.bl_rna.properties
    for name in ("contact_height", "contact_speed", "soft_reach", "hips_speed"):
        assert "leg lengths" in properties[name].description, name
    assert armature.pose.bones["LeftAnkle"].get(MARK) is None
