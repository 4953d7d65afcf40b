"""Animation that lives in NLA strips (pushed down, no active Action, or beneath one): a bake keys its frames
and every other frame plays as before, whatever holds the animation; keys into an Action that would play over
the strips on other frames are refused, naming the channel or the frames and the remedy. Blender's evaluation
is the oracle."""

from __future__ import annotations

from collections.abc import Callable

import bpy
import edit_scenes
import mocap
import numpy as np
import pytest

from fabrik_addon import api

from .oracle import FloatArray, file_digest

FIRST, LAST = 1, 120


@pytest.fixture(autouse=True)
def registered() -> None:
    api.armatures_with_chains()  # the chain list's settings, where the add-on is not enabled


def _pushed_down() -> bpy.types.Object:
    """The committed walk with its chain list, its Action moved into an NLA strip: no active Action."""
    armature = edit_scenes.clip_with_chains("walk")
    anim = armature.animation_data
    action = anim.action
    anim.nla_tracks.new().strips.new(action.name, 1, action)
    anim.action = None
    return armature


def _points(armature: bpy.types.Object) -> FloatArray:
    return edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), mocap.scene_frames())


def _left_foot_moved(armature: bpy.types.Object) -> tuple[bpy.types.Object, str]:
    """Targets from the animation, the left foot's moved 30 units up and forward on every frame."""
    foot = mocap.legs(armature)["Left"].foot
    target = api.targets_from_animation(armature).targets[foot]
    edit_scenes.offset_keys(target, mocap.scene_frames(), np.array([0.0, 3.0, 2.0]))
    return target, foot


def _bake_leg(armature: bpy.types.Object) -> bool:
    target, foot = _left_foot_moved(armature)
    return api.bake(armature, target, tip_bone=foot, chain_length=3, frame_start=FIRST, frame_end=LAST).on_target


BAKES: dict[str, Callable[[bpy.types.Object], bool]] = {
    "bake": _bake_leg,
    "plant feet": lambda armature: bool(api.plant_feet(armature, frame_start=FIRST, frame_end=LAST).feet),
}


@pytest.mark.parametrize("kind", BAKES)
def test_a_bake_of_animation_held_in_strips_plays_the_strips_on_every_other_frame(kind: str) -> None:
    armature = _pushed_down()
    before = _points(armature)
    assert BAKES[kind](armature)
    anim = armature.animation_data
    assert anim.action is not None
    assert anim.action_extrapolation == "NOTHING"
    after = _points(armature)
    outside = [i for i, frame in enumerate(mocap.scene_frames()) if not FIRST <= frame <= LAST]
    np.testing.assert_array_equal(after[outside], before[outside])
    assert np.abs(after - before).max() > 0.1  # the bake did change its own frames


def test_keys_an_action_would_hold_over_the_strips_are_refused_and_a_layer_keeps_them() -> None:
    """An active Action beneath which the walk's strip plays, keying the hips only (Extrapolation Hold): keys for
    the leg's bones there would hold over the strip on every frame; refused, nothing changed. As a layer, the
    frames outside the bake's play as before."""
    armature = _pushed_down()
    anim = armature.animation_data
    anim.action = bpy.data.actions.new("Hips")
    hips = armature.pose.bones["Hips"]
    for frame in (1, 360):
        hips.keyframe_insert("location", index=2, frame=frame)
    target, foot = _left_foot_moved(armature)
    before, digest = _points(armature), file_digest()
    with pytest.raises(
        ValueError,
        match=r"armature '\w+' plays NLA strips beneath its Action 'Hips' \(Extrapolation Hold, keys on frames "
        r"1-360\): it has no keys for pose.bones\[\"\w+\"\].rotation_\w+\[\d\], which the strips animate, and the "
        r"baked ones would hold over the strips outside frames 1-120; bake as a layer \(Output 'layer'\)",
    ):
        api.bake(armature, target, tip_bone=foot, chain_length=3, frame_start=FIRST, frame_end=LAST)
    assert file_digest() == digest
    report = api.bake(
        armature, target, tip_bone=foot, chain_length=3, frame_start=FIRST, frame_end=LAST, output="layer"
    )
    assert report.on_target
    after = _points(armature)
    np.testing.assert_allclose(after[LAST:], before[LAST:], rtol=0, atol=1e-5)


def test_keys_that_would_stretch_an_action_over_the_strips_between_are_refused_naming_the_frames() -> None:
    """An Action playing on its keys' frames only (Extrapolation Nothing), keyed on 200-250: keys on 1-120 would
    have it play over the strip on 121-199 too."""
    armature = _pushed_down()
    anim = armature.animation_data
    anim.action, anim.action_extrapolation = bpy.data.actions.new("Late"), "NOTHING"
    hips = armature.pose.bones["Hips"]
    for frame in (200, 250):
        hips.keyframe_insert("location", index=2, frame=frame)
    target, foot = _left_foot_moved(armature)
    digest = file_digest()
    with pytest.raises(
        ValueError, match=r"keys on frames 1-120 would make it play over the strips on frames 121-199 too"
    ):
        api.bake(armature, target, tip_bone=foot, chain_length=3, frame_start=FIRST, frame_end=LAST)
    assert file_digest() == digest
