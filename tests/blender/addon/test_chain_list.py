"""The chain list's operators (fabrik.chain_add, chain_remove, chain_move) through bpy.ops: what they do to the
list and its selection, their polls' messages, and one undo step each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bpy
import pytest
from rigs import make_chain

from fabrik_addon.blender.properties import FABRIK_PG_settings, chain_label, settings_of

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
    activate(armature)  # in Object Mode the active bone is not a choice of the animator's: left empty
    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}
    assert settings_of(armature).chains[1].tip_bone == ""


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
