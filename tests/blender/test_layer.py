"""The bake as a layer over the animation (``output="layer"``): one FABRIK layer per armature whose chains'
keys a bake replaces, reading the animation below it; each channel playing nothing outside its own keys; the
animation wherever it lives (an active Action, pushed down, or NLA strips) left as it was; Clear and Apply
Layer; refusals that leave the file as it was. Blender's evaluation is the oracle."""

from __future__ import annotations

import bpy
import edit_scenes
import mocap
import numpy as np
import pytest
from rigs import keyed_empty, make_chain, reach_loop

from fabrik_addon import api
from fabrik_addon.api import BakeSettings, ChainSettings, FrameRange, bake_settings
from fabrik_addon.blender import compat
from fabrik_addon.blender.layer import LAYER_NAME, find_layer

from .oracle import FloatArray, file_digest


@pytest.fixture(autouse=True)
def registered() -> None:
    api.armatures_with_chains()  # the chain list's settings, where the add-on is not enabled


def _walk() -> tuple[bpy.types.Object, dict[str, bpy.types.Object]]:
    """The committed walk with its four chains and targets made from its animation."""
    armature = edit_scenes.clip_with_chains("walk")
    return armature, api.targets_from_animation(armature).targets


def _points(armature: bpy.types.Object, frames: range | None = None) -> FloatArray:
    bones = edit_scenes.chain_bones(armature)
    assert bones, "the armature's chain list names the bones to measure"
    return edit_scenes.bone_points(armature, bones, frames or mocap.scene_frames())


def _layer_keys(armature: bpy.types.Object) -> dict[tuple[str, int], int]:
    layer = find_layer(armature)
    assert layer is not None
    return {(f.data_path, f.array_index): len(f.keyframe_points) for f in layer.fcurves()}


def test_baking_again_replaces_the_chains_keys_in_the_one_layer_and_reads_the_animation_below_it() -> None:
    """A second layer bake toward moved targets: still one layer with as many keys, its pose what one bake
    toward the moved targets makes (it read the animation, not the first layer)."""
    armature, targets = _walk()
    api.bake_chains(armature, output="layer")
    keys = _layer_keys(armature)
    hand = mocap.arms(armature)["Left"].forearm
    edit_scenes.offset_keys(targets[hand], range(50, 300), np.array([0.0, -2.0, 1.0]))
    api.bake_chains(armature, output="layer")
    assert _layer_keys(armature) == keys
    assert [track.name for track in armature.animation_data.nla_tracks] == ["cmu_131_01_walk", LAYER_NAME]
    twice = _points(armature)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    api.armatures_with_chains()
    armature, targets = _walk()
    edit_scenes.offset_keys(targets[hand], range(50, 300), np.array([0.0, -2.0, 1.0]))
    api.bake_chains(armature, output="layer")
    np.testing.assert_allclose(twice, _points(armature), rtol=0, atol=1e-5)


def test_chains_baked_apart_share_the_layer_and_each_plays_only_on_its_frames() -> None:
    """The left arm over the whole clip, then the right arm over frames 100-200 alone: the left arm's keys stay;
    the right arm's channels play nothing outside its frames (a key of their base value just outside them), so
    there the right arm is as animated; one layer."""
    armature, targets = _walk()
    frames = mocap.scene_frames()
    before = _points(armature)
    arms = mocap.arms(armature)
    moved = {side: targets[arms[side].forearm] for side in ("Left", "Right")}
    for empty in moved.values():
        edit_scenes.offset_keys(empty, frames, np.array([0.0, -1.0, 0.5]))

    def arm(side: str) -> ChainSettings[bpy.types.Object]:
        return ChainSettings(armature, moved[side], arms[side].forearm, 2)

    bake_settings(BakeSettings((arm("Left"),), output="layer"))
    left_keys = {key: n for key, n in _layer_keys(armature).items()}
    bake_settings(BakeSettings((arm("Right"),), FrameRange(100, 200), output="layer"))
    after = _layer_keys(armature)
    assert {key: after[key] for key in left_keys} == left_keys
    bones = edit_scenes.chain_bones(armature)
    right = [bones.index(name) for name in (arms["Right"].upper, arms["Right"].forearm)]
    outside = [i for i, frame in enumerate(frames) if not 100 <= frame <= 200]
    points = _points(armature)
    np.testing.assert_allclose(points[outside][:, right], before[outside][:, right], rtol=0, atol=1e-4)
    assert np.linalg.norm(points[100:150, right] - before[100:150, right], axis=-1).max() > 0.5  # moved within
    assert len(armature.animation_data.nla_tracks) == 2

    # Clear takes a chain's keys away on some frames: there it is as animated again, the other chain as baked.
    left = [bones.index(name) for name in (arms["Left"].upper, arms["Left"].forearm)]
    for first, last in ((140, 160), (190, 200)):  # inside its keys, and at their end
        assert (
            api.clear(
                armature,
                tip_bone=arms["Right"].forearm,
                chain_length=2,
                frame_start=first,
                frame_end=last,
                output="layer",
            )
            > 0
        )
        cleared = _points(armature)
        span = slice(first - frames.start, last - frames.start + 1)
        np.testing.assert_allclose(cleared[span][:, right], before[span][:, right], rtol=0, atol=1e-4)
        np.testing.assert_array_equal(cleared[:, left], points[:, left])


def test_clear_takes_the_layer_away_and_the_action_it_pushed_down_plays_again() -> None:
    armature, _ = _walk()
    action = armature.animation_data.action
    api.bake_chains(armature, output="layer")
    assert armature.animation_data.action is None
    removed = sum(api.clear(armature, tip_bone=c.tip_bone, chain_length=c.chain_length) for c in armature.fabrik.chains)
    assert removed == 0  # the Action has none of the chains' keys: they are in the layer
    chains = armature.fabrik.chains
    assert sum(api.clear(armature, tip_bone=c.tip_bone, chain_length=c.chain_length, output="layer") for c in chains)
    anim = armature.animation_data
    assert find_layer(armature) is None
    assert anim.action == action
    assert len(anim.nla_tracks) == 0
    assert not any(a.get("fabrik_layer") for a in bpy.data.actions)


def test_apply_layer_merges_it_into_the_action_below_and_the_armature_plays_as_it_did() -> None:
    armature, targets = _walk()
    hand = mocap.arms(armature)["Left"].forearm
    edit_scenes.offset_keys(targets[hand], range(100, 200), np.array([0.0, -1.5, 0.5]))
    action = armature.animation_data.action
    api.bake_chains(armature, output="layer")
    layered = _points(armature)
    applied = api.apply_layer(armature)
    assert applied.action == action
    assert applied.frames == (1, 360)
    assert find_layer(armature) is None
    anim = armature.animation_data
    assert anim.action == action
    assert len(anim.nla_tracks) == 0
    np.testing.assert_allclose(_points(armature), layered, rtol=0, atol=1e-4)
    with pytest.raises(ValueError, match="has no FABRIK layer to apply: bake with output 'layer' first"):
        api.apply_layer(armature)


def test_apply_layer_refuses_a_muted_layer_and_strips_it_cannot_merge_into() -> None:
    armature, _ = _walk()
    api.bake_chains(armature, output="layer")
    layer = find_layer(armature)
    assert layer is not None
    layer.track.mute = True
    before = file_digest()
    with pytest.raises(ValueError, match="is muted: unmute it to apply it"):
        api.apply_layer(armature)
    layer.track.mute = False
    below = armature.animation_data.nla_tracks[0].strips[0]
    below.scale = 2.0
    before = file_digest()
    with pytest.raises(ValueError, match="is scaled, so its Action does not play frame for frame"):
        api.apply_layer(armature)
    assert file_digest() == before


def test_animation_held_in_nla_strips_gets_a_layer_on_top_and_muted_plays_as_before() -> None:
    """No active Action: the clip pushed down already (and offset 20 frames), the layer goes on top; muted, or
    applied (merged into the strip's Action at the strip's time), the armature plays as it did."""
    armature = edit_scenes.clip_with_chains("hop")
    anim = armature.animation_data
    action = anim.action
    track = anim.nla_tracks.new()
    strip = track.strips.new(action.name, 1, action)
    strip.frame_start_ui = 21  # the whole strip moved 20 frames later
    anim.action = None
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 21, 320
    frames = mocap.scene_frames()
    before = _points(armature, frames)
    made = api.targets_from_animation(armature)
    edit_scenes.offset_keys(made.targets[mocap.arms(armature)["Right"].forearm], range(100, 150), np.array([1.0, 0, 0]))
    api.bake_chains(armature, output="layer")
    assert [t.name for t in anim.nla_tracks] == [track.name, LAYER_NAME]
    assert anim.action is None
    anim.nla_tracks[-1].mute = True
    np.testing.assert_array_equal(_points(armature, frames), before)
    anim.nla_tracks[-1].mute = False
    layered = _points(armature, frames)
    assert api.apply_layer(armature).action == action
    assert [t.name for t in anim.nla_tracks] == [track.name]  # the strip stays: it was not pushed down by us
    np.testing.assert_allclose(_points(armature, frames), layered, rtol=0, atol=1e-4)


@pytest.mark.parametrize(
    ("arrange", "message"),
    [
        ("solo", "plays only its soloed NLA track"),
        ("nla_off", "has its NLA tracks switched off"),
        ("keys_above", "has an active Action, 'Tweaks', which moves bones"),
    ],
)
def test_a_layer_that_would_not_play_as_baked_is_refused_and_nothing_changes(arrange: str, message: str) -> None:
    armature, _ = _walk()
    api.bake_chains(armature, output="layer")
    anim = armature.animation_data
    if arrange == "solo":
        anim.nla_tracks[0].is_solo = True
    elif arrange == "nla_off":
        anim.use_nla = False
    else:
        tweaks = bpy.data.actions.new("Tweaks")
        anim.action = tweaks
        bone = mocap.spine(armature)[1]
        armature.pose.bones[bone].keyframe_insert("location", frame=10)
    before = file_digest()
    with pytest.raises(ValueError, match=message):
        api.bake_chains(armature, output="layer")
    assert file_digest() == before


def test_an_action_named_for_a_layer_bake_is_refused_before_anything_is_read() -> None:
    with pytest.raises(ValueError, match="action_name names an Action to key, but Output \\(output\\) 'layer'"):
        BakeSettings.from_keywords("Rig", "Empty", tip_bone="b", action_name="Baked", output="layer")


def test_a_layer_bake_stopped_halfway_leaves_the_file_as_it_was() -> None:
    """A progress callback that raises while the keys are checked: the pushed-down Action active again, no layer,
    no Action of its own left, every pose and key as before."""
    armature, _ = _walk()
    before = file_digest()

    def stop(fraction: float) -> None:
        if fraction > 0.6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        api.bake_chains(armature, output="layer", progress=stop)
    assert file_digest() == before
    assert find_layer(armature) is None


def test_a_chain_nothing_animates_plays_its_bake_from_the_layer_alone() -> None:
    """A generated chain posed only by its bake (no animation below): the layer holds its whole rotation (over
    the identity) and the tip follows the target, as Blender evaluates it; muted, the layer leaves the chain
    where Blender last put it (nothing below animates it)."""
    armature, names = make_chain(3)
    frames = range(1, 31)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 30
    target = keyed_empty("Target", reach_loop(3.0, frames))
    report = api.bake(armature, target, tip_bone=names[-1], output="layer", tolerance=1e-3)
    assert report.max_error <= 2e-3  # Blender's Combine resolves quaternion turns to about 0.04 degrees
    layer = find_layer(armature)
    assert layer is not None
    assert armature.animation_data.action is None
    assert {f.data_path for f in layer.fcurves()} == {f'pose.bones["{n}"].rotation_quaternion' for n in names}


def test_plant_feet_into_a_layer_pins_as_into_the_action_and_muted_gives_the_capture_back() -> None:
    results = {}
    for output in ("action", "layer"):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        armature = mocap.import_clip("walk_30fps_m")
        frames = mocap.scene_frames()
        bones = ["LeftHip", "LeftKnee", "LeftAnkle", "RightHip", "RightKnee", "RightAnkle", "Hips"]
        before = edit_scenes.bone_points(armature, bones, frames)
        report = api.plant_feet(armature, ["LeftAnkle", "RightAnkle"], hips_bone="Hips", output=output)
        results[output] = (report, edit_scenes.bone_points(armature, bones, frames))
    (action_report, action_points), (layer_report, layer_points) = results["action"], results["layer"]
    assert [f.contacts for f in layer_report.feet] == [f.contacts for f in action_report.feet]
    np.testing.assert_allclose(layer_points, action_points, rtol=0, atol=1e-5)
    layer = find_layer(armature)
    assert layer is not None
    assert any(f.data_path == 'pose.bones["Hips"].location' for f in layer.fcurves())
    layer.track.mute = True
    np.testing.assert_array_equal(edit_scenes.bone_points(armature, bones, frames), before)


def test_ik_constraints_bake_into_a_layer() -> None:
    armature, _ = _walk()
    arm = mocap.arms(armature)["Left"]
    before = _points(armature)
    target = bpy.data.objects[f"{arm.forearm} Target"]
    ik = armature.pose.bones[arm.forearm].constraints.new("IK")
    ik.target, ik.chain_count = target, 2
    report = api.bake_ik_constraints(armature, output="layer")
    assert report.chains[0].on_target
    assert ik.mute
    layer = find_layer(armature)
    assert layer is not None
    assert {compat.slot_fcurves(layer.action, layer.slot)[0].data_path.split('"')[1]} <= {arm.upper, arm.forearm}
    np.testing.assert_allclose(_points(armature), before, rtol=0, atol=1e-4)  # toward the animated wrist


@pytest.mark.parametrize("keyed", ["X rotation only", "the root bone not at all"])
def test_baking_the_layer_again_unchanged_gives_the_same_pose_whatever_frame_the_scene_is_on(keyed: str) -> None:
    """Channels nothing below the layer animates (a bone keyed on its Euler X alone, or a bone not keyed) are
    read at their base values, not at the layer's value on the frame the scene was on: Bake pressed again with
    nothing changed leaves every bone where it was (1.7 units off before, on a 3-unit chain)."""
    armature, names = make_chain(3)
    frames = range(1, 31)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = frames.start, frames.stop - 1
    for i, name in enumerate(names):
        bone = armature.pose.bones[name]
        bone.rotation_mode = "XYZ"
        if keyed == "the root bone not at all" and i == 0:
            continue
        for frame in frames:
            bone.rotation_euler[0] = 0.5 * np.sin(frame / 6 + i)
            bone.keyframe_insert("rotation_euler", index=0, frame=frame)
    target = keyed_empty("Target", reach_loop(3.0, frames))
    api.bake(armature, target, tip_bone=names[-1], output="layer", tolerance=1e-4)
    first = edit_scenes.bone_points(armature, names, frames)
    for frame in (1, 15, 30):
        bpy.context.scene.frame_set(frame)
        api.bake(armature, target, tip_bone=names[-1], output="layer", tolerance=1e-4)
        np.testing.assert_allclose(edit_scenes.bone_points(armature, names, frames), first, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "arrange",
    ["influence 0.6", "manual frame range 50-300", "manual range 1-100, cyclic", "cycles past the scene's end"],
)
def test_the_action_pushed_down_plays_as_it_did_whatever_blender_ignores_of_it(arrange: str) -> None:
    """An Action alone plays in full over its keys whatever its influence and Manual Frame Range say (Blender
    ignores them without NLA strips), and a looped one plays on past the scene's end: pushed down below the layer
    it plays the same, so the layer muted gives the animation back (0.65-2.7 m off before) and the bake, reading
    it, is on target."""
    armature, _ = _walk()
    anim = armature.animation_data
    action = anim.action
    frames = mocap.scene_frames()
    if arrange == "influence 0.6":
        anim.action_influence = 0.6
    elif arrange.startswith("manual"):
        action.use_frame_range = True
        action.frame_start, action.frame_end = (50, 300) if "50" in arrange else (1, 100)
        action.use_cyclic = "cyclic" in arrange
    else:
        for fcurve in compat.action_fcurves(action):
            fcurve.modifiers.new("CYCLES")
        frames = range(frames.start, frames.stop + 100)
        api.targets_from_animation(armature, replace=True, frame_end=frames[-1])
    before = _points(armature, frames)
    report = api.bake_chains(armature, output="layer", frame_end=frames[-1])
    assert report.max_error < 2e-3
    layer = find_layer(armature)
    assert layer is not None
    layer.track.mute = True
    np.testing.assert_array_equal(_points(armature, frames), before)
