"""The chain list's operators (fabrik.chain_add, chain_remove, chain_move) through bpy.ops: what they do to the
list and its selection, their polls' messages, and one undo step each; the chain + makes for the active bone
(its limb) on Rigify's metarig, a simple chain and a motion-capture rig."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bpy
import mocap
import pytest
from rigs import make_chain, rigify_metarig

from fabrik_addon.blender.properties import FABRIK_PG_settings, chain_label, settings_of
from fabrik_addon.blender.rig import chain_bone_names
from fabrik_addon.blender.ui.chain_list import FABRIK_OT_chain_add

from .scenes import activate, add_chain, chain_scene


def names(settings: FABRIK_PG_settings) -> list[str]:
    """The chains of the list, as the list shows them."""
    return [chain_label(chain, index) for index, chain in enumerate(settings.chains)]


def test_add_remove_and_move_chains() -> None:
    armature, _ = make_chain(4)
    activate(armature)
    settings = settings_of(armature)

    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}
    assert names(settings) == ["Chain 1"]
    assert settings.active_chain == 0
    settings.chains[0].tip_bone = "bone.003"
    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}
    settings.chains[1].name = "Second"
    settings.active_chain = 0
    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}  # after the selected chain, and selected
    assert names(settings) == ["bone.003", "Chain 2", "Second"]
    assert settings.active_chain == 1
    assert all(chain.enabled for chain in settings.chains)  # a new chain is enabled

    settings.active_chain = 2
    assert bpy.ops.fabrik.chain_move(direction="UP") == {"FINISHED"}
    assert names(settings) == ["bone.003", "Second", "Chain 3"]
    assert settings.active_chain == 1  # the selection moves with the chain
    assert bpy.ops.fabrik.chain_move(direction="UP") == {"FINISHED"}
    assert bpy.ops.fabrik.chain_move(direction="UP") == {"CANCELLED"}  # already first
    assert names(settings) == ["Second", "bone.003", "Chain 3"]
    assert bpy.ops.fabrik.chain_move(direction="DOWN") == {"FINISHED"}
    assert names(settings) == ["bone.003", "Second", "Chain 3"]

    settings.active_chain = 2
    assert bpy.ops.fabrik.chain_move(direction="DOWN") == {"CANCELLED"}  # already last
    assert bpy.ops.fabrik.chain_remove() == {"FINISHED"}
    assert names(settings) == ["bone.003", "Second"]
    assert settings.active_chain == 1  # the last one left
    settings.active_chain = 0
    assert bpy.ops.fabrik.chain_remove() == {"FINISHED"}
    assert names(settings) == ["Second"]
    assert settings.active_chain == 0
    assert bpy.ops.fabrik.chain_remove() == {"FINISHED"}
    assert names(settings) == []


def test_a_chain_added_in_pose_mode_ends_at_the_active_bone() -> None:
    armature, bones = make_chain(3)
    activate(armature, "POSE")
    armature.data.bones.active = armature.data.bones[bones[1]]
    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}
    assert settings_of(armature).chains[0].tip_bone == bones[1]
    assert settings_of(armature).chains[0].chain_length == 2  # a simple chain: all of it, to the root
    activate(armature)  # in Object Mode the active bone is not a choice of the animator's: left empty
    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}
    assert settings_of(armature).chains[1].tip_bone == ""
    assert settings_of(armature).chains[1].chain_length == 0  # no bone: the property's default


def _added(armature: bpy.types.Object, tip: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Press + with ``tip`` the active bone in Pose Mode: the chain length it picked, its tooltip before, and
    what it reported."""
    activate(armature, "POSE")
    armature.data.bones.active = armature.data.bones[tip]
    tooltip = FABRIK_OT_chain_add.description(bpy.context, None)
    capsys.readouterr()
    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}
    settings = settings_of(armature)
    chain = settings.chains[settings.active_chain]
    assert chain.tip_bone == tip
    return chain.chain_length, tooltip, capsys.readouterr().out


# The active bone and the chain + makes, the bones up from it: on Rigify's human metarig (the demo's rig),
# whose arms and legs hang apart from their shoulders and from the hips, where the bones part.
RIGIFY_CHAINS = {
    "hand.L": ("hand.L", "forearm.L", "upper_arm.L"),
    "forearm.R": ("forearm.R", "upper_arm.R"),
    "foot.L": ("foot.L", "shin.L", "thigh.L"),
    "f_index.03.R": ("f_index.03.R", "f_index.02.R", "f_index.01.R"),
    "spine.006": ("spine.006", "spine.005", "spine.004"),
    "toe.L": ("toe.L", "foot.L"),  # the heel hangs from the foot too: the least chain that bends
}


@pytest.mark.parametrize("tip", RIGIFY_CHAINS)
def test_plus_picks_the_limb_of_the_active_bone_on_a_rigify_metarig(
    tip: str, capsys: pytest.CaptureFixture[str]
) -> None:
    armature = rigify_metarig("human")
    wanted = RIGIFY_CHAINS[tip]
    length, tooltip, reported = _added(armature, tip, capsys)
    assert length == len(wanted)
    assert chain_bone_names(armature, tip, length) == wanted[::-1]
    picked = f"{len(wanted)} bones ({', '.join(wanted)})"
    assert tooltip.startswith(f"Add a chain ending at the active bone '{tip}', {picked}: ")
    assert f"Info: Chain '{tip}': {picked}: " in reported
    assert "set Chain Length to change it" in reported


def test_plus_says_why_the_chain_stops_where_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    armature = rigify_metarig("human")
    assert _added(armature, "hand.L", capsys)[1] == (
        "Add a chain ending at the active bone 'hand.L', 3 bones (hand.L, forearm.L, upper_arm.L): up to "
        "'upper_arm.L', apart from its parent 'shoulder.L'"
    )
    assert _added(armature, "foot.R", capsys)[1].endswith(
        "3 bones (foot.R, shin.R, thigh.R): up to where the bones part at 'spine' (4 other bones hang from it)"
    )
    assert _added(armature, "toe.L", capsys)[1].endswith(
        "2 bones (toe.L, foot.L): the least chain that bends: 'toe.L' hangs from 'foot.L', where the bones part "
        "(1 other bone hangs from it)"
    )
    activate(armature)  # no active bone to end a chain at: the docstring (Blender shows it for "")
    assert FABRIK_OT_chain_add.description(bpy.context, None) == ""
    assert "ending at the active bone" in bpy.ops.fabrik.chain_add.get_rna_type().description


def test_plus_on_a_long_chain_takes_it_whole_and_on_motion_capture_a_limbs_three(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tentacle, bones = make_chain(12, name="Tentacle")
    length, tooltip, _ = _added(tentacle, bones[-1], capsys)
    assert length == 12
    assert tooltip.endswith(": the whole chain, up to the root bone")
    clip = mocap.import_clip("walk_30fps_m")  # CMU's rig: its legs hang from the hips by a short hip joint
    legs, arms = mocap.legs(clip), mocap.arms(clip)
    length, tooltip, _ = _added(clip, legs["Left"].foot, capsys)
    assert chain_bone_names(clip, legs["Left"].foot, length)[::-1] == (legs["Left"].foot, "LeftKnee", "LeftHip")
    assert "a limb's 3 of the 4 bones up to where the bones part at 'Hips'" in tooltip
    length, _, _ = _added(clip, arms["Right"].forearm, capsys)
    assert length == 3


def _poll_failure(operator: Any, **options: Any) -> str:
    assert not operator.poll()
    with pytest.raises(RuntimeError) as failure:
        operator(**options)
    return str(failure.value)


def test_polls_explain_why_the_list_cannot_change() -> None:
    armature, _, target, _ = chain_scene()
    add, remove, move = bpy.ops.fabrik.chain_add, bpy.ops.fabrik.chain_remove, bpy.ops.fabrik.chain_move
    assert add.poll()
    assert remove.poll()
    assert "The armature has only one chain" in _poll_failure(move, direction="UP")
    settings_of(armature).chains.clear()
    assert "The armature has no chain" in _poll_failure(remove)
    activate(target)
    for operator in (add, remove, move):
        assert "The active object 'Target' is not an armature" in _poll_failure(operator)
    activate(None)
    assert "No active object: select an armature" in _poll_failure(add)
    activate(armature, "EDIT")
    assert "Switch to Object or Pose Mode" in _poll_failure(add)


@pytest.mark.parametrize(
    ("operator", "options"),
    [("chain_add", {}), ("chain_remove", {}), ("chain_move", {"direction": "DOWN"})],
)
def test_each_change_to_the_list_is_one_undo_step(operator: str, options: dict[str, Any]) -> None:
    armature, _, target, _ = chain_scene()
    add_chain(armature, name="Second", target=target, tip_bone="bone.001")
    before = names(settings_of(armature))
    bpy.ops.ed.undo_push(message="Two chains")  # what the UI does after every change

    # As a button calls it: operators called from Python push an undo step only when asked to.
    assert getattr(bpy.ops.fabrik, operator)("EXEC_DEFAULT", True, **options) == {"FINISHED"}
    changed = names(settings_of(bpy.data.objects["Rig"]))
    assert changed != before
    bpy.ops.ed.undo()
    assert names(settings_of(bpy.data.objects["Rig"])) == before
    bpy.ops.ed.redo()
    assert names(settings_of(bpy.data.objects["Rig"])) == changed


def test_a_linked_armature_cannot_be_changed(tmp_path: Path) -> None:
    chain_scene()
    library = tmp_path / "rig.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_, linked):
        linked.objects = ["Rig"]
    armature = linked.objects[0]
    bpy.context.scene.collection.objects.link(armature)
    activate(armature)
    message = "The armature 'Rig' is linked from a library: make it local or a library override first"
    for operator in (bpy.ops.fabrik.chain_add, bpy.ops.fabrik.chain_remove, bpy.ops.fabrik.bake, bpy.ops.fabrik.clear):
        assert message in _poll_failure(operator)
    assert len(settings_of(armature).chains) == 1


def test_the_readmes_quick_start_bakes_on_target(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's Quick start as written: Rigify's human metarig, the left hand active, +, an Empty keyed at
    the README's places on frames 1 and 125 (Blender's default keys), Bake over the scene's frames 1-250."""
    armature = rigify_metarig("human")
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 250
    assert _added(armature, "hand.L", capsys)[0] == 3
    activate(armature, "OBJECT")
    target = bpy.data.objects.new("Empty", None)
    bpy.context.scene.collection.objects.link(target)
    for frame, location in ((1, (0.6, -0.1, 1.5)), (125, (0.45, -0.35, 1.25))):
        target.location = location
        target.keyframe_insert("location", frame=frame)
    chain = settings_of(armature).chains[0]
    chain.target = target
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    assert (chain.last_bake.frames, chain.last_bake.bones, chain.last_bake.unreachable) == (250, 3, 0)
    assert "on target on every frame" in capsys.readouterr().out
