"""Editing through IK in the sidebar: Output is Layer by default, so Bake keys a layer over the animation and
loses nothing of it; Targets from Animation under the chain list; Apply Layer (their undo steps: ``test_undo``)."""

from __future__ import annotations

import bpy
import edit_scenes
import mocap
import numpy as np
import pytest

from fabrik_addon.blender import compat
from fabrik_addon.blender.layer import find_layer
from fabrik_addon.blender.properties import settings_of

from .scenes import activate
from .test_panel import draw_panels


def walk() -> bpy.types.Object:
    """The committed walk with its four chains in the list, as the sidebar leaves a new armature (Output Layer),
    active in Pose Mode."""
    armature = edit_scenes.clip_with_chains("walk")
    activate(armature, "POSE")
    return armature


def _keys(action: bpy.types.Action) -> dict[tuple[str, int], list[tuple[float, ...]]]:
    return {
        (f.data_path, f.array_index): [tuple(k.co) for k in f.keyframe_points] for f in compat.action_fcurves(action)
    }


def test_the_sidebar_bakes_into_a_layer_by_default_and_the_action_keeps_every_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    armature = walk()
    assert settings_of(armature).output == "LAYER"
    action = armature.animation_data.action
    keys = _keys(action)
    assert bpy.ops.fabrik.targets_from_animation() == {"FINISHED"}
    assert "Made 4 targets and 4 poles from the animation, keyed on frames 1-360" in capsys.readouterr().out
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    out = capsys.readouterr().out
    assert "(into the FABRIK layer: mute it for the animation as it was)" in out
    assert find_layer(armature) is not None
    anim = armature.animation_data
    assert anim.action is None
    assert anim.nla_tracks[0].strips[0].action == action
    assert _keys(action) == keys
    assert bpy.ops.fabrik.clear() == {"FINISHED"}
    assert "in the FABRIK layer" in capsys.readouterr().out
    assert find_layer(armature) is None
    assert anim.action == action


def test_targets_from_animation_sits_under_the_chain_list_and_says_why_it_cannot_run() -> None:
    armature = walk()
    drawn = draw_panels(bpy.context)["FABRIK_PT_main"]
    assert drawn.index("bpy.ops.fabrik.targets_from_animation()") < drawn.index("bpy.ops.fabrik.bake()")
    assert drawn.index("bpy.ops.fabrik.chain_add()") < drawn.index("bpy.ops.fabrik.targets_from_animation()")
    assert "bpy.ops.fabrik.apply_layer()" not in drawn  # no layer yet
    settings_of(armature).chains.clear()
    assert not bpy.ops.fabrik.targets_from_animation.poll()
    with pytest.raises(RuntimeError, match="Armature 'cmu_131_01_walk' has no chain: add one in the FABRIK panel"):
        bpy.ops.fabrik.targets_from_animation()


def test_a_chain_with_a_target_is_refused_in_the_panel_s_words_unless_replace_is_ticked() -> None:
    walk()
    assert bpy.ops.fabrik.targets_from_animation() == {"FINISHED"}
    with pytest.raises(RuntimeError, match="Chain 'LeftElbow' has a target 'LeftElbow Target' and a pole"):
        bpy.ops.fabrik.targets_from_animation()
    assert bpy.ops.fabrik.targets_from_animation(replace=True) == {"FINISHED"}
    assert len([o for o in bpy.data.objects if o.type == "EMPTY"]) == 8


def test_apply_layer_merges_the_layer_and_is_drawn_only_with_one() -> None:
    armature = walk()
    assert bpy.ops.fabrik.targets_from_animation() == {"FINISHED"}
    edit_scenes.offset_keys(bpy.data.objects["LeftElbow Target"], range(100, 150), (0.0, -1.0, 0.0))
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    assert "bpy.ops.fabrik.apply_layer()" in draw_panels(bpy.context)["FABRIK_PT_main"]
    points = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), mocap.scene_frames())
    assert bpy.ops.fabrik.apply_layer() == {"FINISHED"}
    assert find_layer(armature) is None
    merged = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), mocap.scene_frames())
    np.testing.assert_allclose(merged, points, rtol=0, atol=1e-4)
    assert not bpy.ops.fabrik.apply_layer.poll()
