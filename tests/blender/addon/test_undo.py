"""Undo: each operator that changes the file pushes one undo step (its ``bl_options``), and one undo takes back
all it did, the file value by value as it was; Step Through Iterations pushes none (leaving puts back the pose
the last step holds), and an undo while stepping ends the session before Blender reads the file anew.

Bake, Solve Now, the chain list's operators and Plant Feet's have their own undo tests beside their other tests."""

from __future__ import annotations

import math
from collections.abc import Callable

import bpy
import pytest
from rigs import keyed_empty

from fabrik_addon.blender.live import LIVE

from ..oracle import file_summary
from .scenes import chain_scene
from .test_editing import walk

#: Whether each operator pushes an undo step: all but those of Step Through Iterations, which write nothing
#: that the last undo step does not hold once left.
UNDO = {
    "apply_layer": True,
    "bake": True,
    "bake_ik_constraints": True,
    "chain_add": True,
    "chain_move": True,
    "chain_remove": True,
    "clear": True,
    "detect_contacts": True,
    "foot_add": True,
    "foot_remove": True,
    "key_current_frame": True,
    "plant_feet": True,
    "reduce_keys": True,
    "solve_now": True,
    "step_leave": False,
    "step_play": False,
    "step_through": False,
    "targets_from_animation": True,
}


def test_the_operators_that_change_the_file_push_an_undo_step() -> None:
    options = {name: getattr(bpy.ops.fabrik, name).bl_options for name in dir(bpy.ops.fabrik)}
    assert {name: "UNDO" in flags for name, flags in options.items()} == UNDO


def _baked() -> None:
    chain_scene()
    assert bpy.ops.fabrik.bake() == {"FINISHED"}


def _ik_constraint() -> None:
    armature, names, target, _ = chain_scene()
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count = target, 3


def _solved() -> None:
    armature, names, _, _ = chain_scene()
    bpy.context.scene.frame_set(7)
    armature.pose.bones[names[1]].rotation_quaternion = (math.cos(0.3), math.sin(0.3), 0.0, 0.0)
    assert bpy.ops.fabrik.solve_now() == {"FINISHED"}


def _walked() -> None:
    walk()


def _layered() -> None:
    walk()
    assert bpy.ops.fabrik.targets_from_animation() == {"FINISHED"}
    assert bpy.ops.fabrik.bake() == {"FINISHED"}


def _baked_with_a_key_error() -> None:
    armature, *_ = chain_scene()
    armature.fabrik.output = "ACTION"  # Reduce Keys thins the Action's keys
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    armature.fabrik.keys.key_error = 0.01


#: Operators without an undo test of their own, each with a scene in which it changes the file.
SCENES: dict[str, Callable[[], None]] = {
    "clear": _baked,
    "bake_ik_constraints": _ik_constraint,
    "key_current_frame": _solved,
    "targets_from_animation": _walked,
    "apply_layer": _layered,
    "reduce_keys": _baked_with_a_key_error,
}


def settled() -> dict[str, object]:
    """``file_summary`` once the scene is evaluated at its frame, as Blender does after an undo when it next
    draws: an animated value left by the last frame evaluated is that frame's again."""
    scene = bpy.context.scene
    scene.frame_set(scene.frame_current)
    return file_summary()


@pytest.mark.parametrize("operator", SCENES.keys())
def test_one_undo_takes_back_all_an_operator_did(operator: str) -> None:
    SCENES[operator]()
    before = settled()
    bpy.ops.ed.undo_push(message="Before")  # what the UI does after every change
    # As a button calls it: operators called from Python push an undo step only when asked to.
    assert getattr(bpy.ops.fabrik, operator)("EXEC_DEFAULT", True) == {"FINISHED"}
    after = settled()
    assert after != before
    bpy.ops.ed.undo()
    assert settled() == before
    bpy.ops.ed.redo()
    assert settled() == after


def test_an_undo_while_stepping_ends_the_session_before_the_file_is_read_anew() -> None:
    """Undo reads the armature anew from the undo step: the session's armature would be a stale reference,
    which Blender does not guard. The undo takes back the last change (the turn), as it would without
    stepping."""
    armature, names, _, _ = chain_scene()
    bpy.context.scene.frame_set(7)
    bpy.ops.ed.undo_push(message="Frame 7")
    unturned = file_summary()
    armature.pose.bones[names[1]].rotation_quaternion = (math.cos(0.3), math.sin(0.3), 0.0, 0.0)
    bpy.ops.ed.undo_push(message="Turn the middle bone")
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    bpy.context.window_manager.fabrik_playback.step = 1
    bpy.ops.ed.undo()
    assert LIVE.session is None
    assert file_summary() == unturned
    keyed_empty("Elsewhere", [(1, (1.0, 0.0, 0.0))])  # the file goes on as usual
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    assert bpy.ops.fabrik.step_leave() == {"FINISHED"}
    assert file_summary()["Rig/bone.001"] == unturned["Rig/bone.001"]
