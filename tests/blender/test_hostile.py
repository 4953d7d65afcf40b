"""Setups whose keys could not take effect, and the data-loss holes hostile input found: each is refused with
an error naming what is wrong, and the saved file is byte for byte what it was before."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import bpy
import numpy as np
import pytest
from rigs import keyed_empty, loop_path, make_chain

from fabrik_addon import api
from fabrik_addon.blender import compat
from fabrik_addon.blender.bake import bake
from fabrik_addon.settings import FRAME_MAX, BakeSettings, ChainSettings

from .addon.scenes import activate
from .oracle import data_snapshot, evaluated, fcurve_keys, file_digest, file_summary

FRAMES = range(1, 21)
TOLERANCE = 1e-3


@pytest.fixture
def rig() -> tuple[bpy.types.Object, list[str], bpy.types.Object]:
    """A 4-bone chain with keys on one bone (an Action to keep intact) and an Empty on a path within reach."""
    armature, names = make_chain(4)
    armature.pose.bones[names[1]].keyframe_insert("rotation_quaternion", frame=3)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 2.2), (1.0, 0.8, 0.6)))
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    return armature, names, target


def refused(
    message: str,
    bake: Callable[[], object],
    error: type[Exception] = ValueError,
    state: Callable[[], object] = file_digest,
) -> None:
    """``bake`` raises ``error`` matching ``message``, and the file (its ``state``) is as it was."""
    before = state()
    with pytest.raises(error, match=message):
        bake()
    assert state() == before


Rig = tuple[bpy.types.Object, list[str], bpy.types.Object]


def test_a_driver_on_a_chain_bones_rotation_is_refused(rig: Rig) -> None:
    armature, names, target = rig
    driver = armature.pose.bones[names[2]].driver_add("rotation_quaternion", 1).driver
    driver.type, driver.expression = "SCRIPTED", "0.1"
    refused(
        r"bone 'bone.002' has a driver on its rotation_quaternion\[1\], which would override the baked keys",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )


def test_an_ik_constraint_below_the_chain_that_reaches_into_it_is_refused(rig: Rig) -> None:
    armature, names, target = rig
    elsewhere = keyed_empty("Elsewhere", [(1, (2.0, 0.0, 1.0))])
    ik = armature.pose.bones[names[3]].constraints.new("IK")
    ik.target, ik.chain_count = elsewhere, 2
    refused(
        r"the IK constraint 'IK' of bone 'bone.003' turns the chain's bones 'bone.002' and would override",
        lambda: api.bake(armature, target, tip_bone=names[2], chain_length=3),
    )
    ik.use_tail = False  # then it turns bone.002 and bone.001: its chain starts at the owner's parent
    refused("turns the chain's bones 'bone.002', 'bone.001'", lambda: api.bake(armature, target, tip_bone=names[2]))
    ik.chain_count = 1
    ik.use_tail = True  # only its own bone, below the chain: the chain bakes
    report = api.bake(armature, target, tip_bone=names[2], chain_length=3)
    assert report.bones == tuple(names[:3])
    assert set(report.off_target_frames) <= set(report.unreachable_frames)


def test_a_constraint_whose_influence_is_animated_is_refused_even_when_off_now(rig: Rig) -> None:
    armature, names, target = rig
    constraint = armature.pose.bones[names[1]].constraints.new("COPY_ROTATION")
    constraint.target = keyed_empty("Turner", [(1, (0.0, 0.0, 0.0))])
    constraint.influence = 0.0
    constraint.keyframe_insert("influence", frame=1)
    constraint.influence = 1.0
    constraint.keyframe_insert("influence", frame=15)
    bpy.context.scene.frame_set(1)
    assert constraint.influence == 0.0
    refused(
        r"bone 'bone.001' has constraints switched on by animation or drivers on some frames \(Copy Rotation",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )


def test_an_ik_constraint_at_influence_0_is_refused_where_itasc_still_applies_it(rig: Rig) -> None:
    """iTaSC holds the chain of an IK constraint at Influence 0 near its rest pose, over the keys. (It keeps a
    state from one evaluation to the next, saved in the file: the file is compared value by value.)"""
    armature, names, target = rig
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count, ik.influence = keyed_empty("Elsewhere", [(1, (2.0, 0.0, 1.0))]), 2, 0.0
    muted = armature.pose.bones[names[-1]].constraints.new("IK")  # off with either solver
    muted.target, muted.influence, muted.mute = ik.target, 0.0, True
    assert api.bake(armature, target, tip_bone=names[-1], chain_length=3).bones == tuple(names[1:])
    armature.pose.ik_solver = "ITASC"
    refused(
        r"bone 'bone.003' has constraints that would override the baked rotation \(IK\) \(iTaSC, the armature's IK "
        r"Solver, applies IK even at Influence 0\); disable or remove them",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
        state=file_summary,
    )
    refused(
        r"the IK constraint 'IK' of bone 'bone.003' turns the chain's bones 'bone.002'",
        lambda: api.bake(armature, target, tip_bone=names[-2]),
        state=file_summary,
    )


def test_a_target_that_follows_a_chain_bone_through_a_constraint_or_a_driver_is_refused(rig: Rig) -> None:
    armature, names, target = rig
    child_of = target.constraints.new("CHILD_OF")
    child_of.target, child_of.subtarget = armature, names[1]
    refused(
        r"the target 'Target' has the constraint 'Child Of' on the bone 'bone.001', which the chain moves",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )
    target.constraints.remove(child_of)
    # Indirectly: the target is parented to an Empty whose X follows a bone below the chain's root.
    carrier = keyed_empty("Carrier", [(1, (0.0, 0.0, 0.0))])
    target.parent = carrier
    variable = carrier.driver_add("location", 0).driver.variables.new()
    variable.type = "TRANSFORMS"
    variable.targets[0].id, variable.targets[0].bone_target = armature, names[3]
    carrier.animation_data.drivers[0].driver.expression = variable.name
    refused(
        r"the target 'Target' is parented to 'Carrier', which has a driver reading the bone 'bone.003', which is "
        r"a child of the bone 'bone.002', which the chain moves",
        lambda: api.bake(armature, target, tip_bone=names[2], chain_length=2),
    )
    # A bone above the chain does not move with it: the same driver on the chain's root's parent is fine.
    variable.targets[0].bone_target = names[0]
    report = api.bake(armature, target, tip_bone=names[-1], chain_length=3, frame_start=1, frame_end=4)
    assert report.bones == tuple(names[1:])


def test_an_action_blended_over_nla_strips_is_refused(rig: Rig) -> None:
    armature, names, target = rig
    anim = armature.animation_data
    strip_action = bpy.data.actions.new("Walk")
    track = anim.nla_tracks.new()
    track.strips.new("Walk", 1, strip_action)
    anim.action_blend_type = "ADD"
    refused(
        r"armature 'Rig' blends its Action over its NLA strips \(Add, influence 1\)",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )
    anim.action_blend_type, anim.action_influence = "REPLACE", 0.5
    refused(r"\(Replace, influence 0.5\)", lambda: api.bake(armature, target, tip_bone=names[-1]))
    anim.action_influence = 1.0  # replacing in full, the keys decide the chain's pose over the strip
    assert api.bake(armature, target, tip_bone=names[-1]).on_target


def test_nan_in_a_chain_bones_keyed_scale_is_refused_naming_the_frame(rig: Rig) -> None:
    armature, names, target = rig
    bone = armature.pose.bones[names[2]]
    bone.keyframe_insert("scale", frame=1)
    bone.scale = (1.0, math.nan, 1.0)
    bone.keyframe_insert("scale", frame=7)
    for fcurve in compat.assigned_fcurves(armature):
        for key in fcurve.keyframe_points:
            key.interpolation = "CONSTANT"  # NaN from frame 7 on only
    refused(
        "bone 'bone.002' has a location, rotation or scale that is not a number on frame 7",
        lambda: api.bake(armature, target, tip_bone=names[-1], frame_start=5, frame_end=9),
    )


def test_frames_beyond_blenders_are_refused(rig: Rig) -> None:
    armature, names, target = rig
    refused(
        rf"End \(frame_end\) must be one of Blender's frames, -1048574 to {FRAME_MAX}, got 10000000",
        lambda: api.bake(armature, target, tip_bone=names[-1], frame_end=10_000_000),
    )
    frame_current = bpy.types.Scene.bl_rna.properties["frame_current"]
    assert (frame_current.hard_min, frame_current.hard_max) == (-FRAME_MAX, FRAME_MAX)


def test_a_new_action_that_would_stop_the_objects_own_keys_is_refused(rig: Rig) -> None:
    armature, names, target = rig
    armature.keyframe_insert("location", frame=1)  # the object's own keys, in the active Action
    refused(
        r"baking into the Action 'Baked' would make it active in place of 'RigAction', whose other channels "
        r"\(location, pose.bones\[\"bone.001\"\].rotation_quaternion\) would stop playing",
        lambda: api.bake(armature, target, tip_bone=names[-1], chain_length=2, action_name="Baked"),
    )
    refused("action_name must name an Action, got ''", lambda: api.bake(armature, target, tip_bone="x", action_name=""))


def test_an_action_whose_other_channels_would_start_playing_is_refused() -> None:
    armature, names = make_chain(3)
    target = keyed_empty("Target", [(1, (0.5, 0.0, 2.0))])
    armature.animation_data_create().action = bpy.data.actions.new("Other")
    armature.location.z = 0.5
    armature.keyframe_insert("location", frame=1)  # keys for this armature, in an Action it then lets go
    armature.animation_data.action = None
    refused(
        r"the Action 'Other' also animates location, which would start playing on armature 'Rig'",
        lambda: api.bake(armature, target, tip_bone=names[-1], action_name="Other"),
    )
    report = api.bake(armature, target, tip_bone=names[-1], action_name="Baked")  # a new one is fine
    assert report.action.name == "Baked"


@pytest.mark.parametrize("what", ["it", "its group"])
def test_a_locked_f_curve_takes_no_keys_and_loses_none(rig: Rig, what: str) -> None:
    """As with Blender's own keying: a bake, Key Current Frame's writer and Clear all refuse a locked F-curve
    of the chain (or one in a locked group), after writing nothing."""
    armature, names, target = rig
    fcurve = next(c for c in compat.assigned_fcurves(armature) if c.data_path.endswith("rotation_quaternion"))
    if fcurve.group is None:  # Blender 4.2 keys a pose bone's channels outside any group
        fcurve.group = armature.animation_data.action.groups.new(names[1])
    fcurve.lock = what == "it"
    fcurve.group.lock = what == "its group"
    message = re.escape(f"the F-curve {fcurve.data_path}[{fcurve.array_index}] of 'Rig' is locked: unlock {what} first")
    refused(message, lambda: api.bake(armature, target, tip_bone=names[-1]))
    refused(message, lambda: api.clear(armature, tip_bone=names[-1]))
    assert api.clear(armature, tip_bone=names[-1], frame_start=10) == 0  # no key of it to lose there
    fcurve.lock = fcurve.group.lock = False
    assert api.bake(armature, target, tip_bone=names[-1]).max_error <= TOLERANCE


def _keyed_fcurve(armature: bpy.types.Object) -> bpy.types.FCurve:
    """The F-curve of bone.001's rotation_quaternion[1], keyed by the ``rig`` fixture."""
    path = 'pose.bones["bone.001"].rotation_quaternion'
    return next(c for c in compat.assigned_fcurves(armature) if (c.data_path, c.array_index) == (path, 1))


def test_an_f_curve_modifier_or_mute_on_a_channel_the_keys_go_into_is_refused_naming_it(rig: Rig) -> None:
    """A Noise modifier would shake the baked keys, a Cycles one repeat them over other frames, and a muted
    F-curve would not play them; a muted modifier leaves the keys as they are (``test_cycles`` has more)."""
    armature, names, target = rig
    fcurve = _keyed_fcurve(armature)
    channel = re.escape("the F-curve pose.bones[\"bone.001\"].rotation_quaternion[1] of 'Rig'")
    cycles = fcurve.modifiers.new("CYCLES")  # Blender adds Cycles first or not at all
    refused(
        f"{channel} has a Cycles modifier, which repeats its keys",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )
    cycles.mute = True
    noise = fcurve.modifiers.new("NOISE")
    refused(
        f"{channel} has a Noise modifier, which changes the values its keys play: remove it, or mute it, before baking",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )
    noise.mute = True
    fcurve.mute = True
    refused(
        f"{channel} is muted, so its keys do not play: unmute it before baking",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )
    fcurve.mute = False
    assert api.bake(armature, target, tip_bone=names[-1]).on_target


def test_a_keyed_rotation_mode_is_refused_naming_the_bone(rig: Rig) -> None:
    """The keys go into the channels of each bone's rotation mode now; where keys switch the mode, they do
    not play."""
    armature, names, target = rig
    bone = armature.pose.bones[names[2]]
    bone.keyframe_insert("rotation_mode", frame=1)
    bone.rotation_mode = "XYZ"
    bone.keyframe_insert("rotation_mode", frame=10)
    bone.rotation_mode = "QUATERNION"
    refused(
        r"bone 'bone.002' has its Rotation Mode animated \(keys or NLA strips on rotation_mode\): the baked keys go "
        r"into the channels of the mode it has now, Quaternion \(WXYZ\), which do not play on frames in another mode; "
        r"remove the keys on its Rotation Mode before baking",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )


def test_a_scene_that_remaps_time_is_refused_naming_the_setting(rig: Rig) -> None:
    """Time Stretching plays the animation of frame f at another frame: keys solved for the targets at each
    frame would play elsewhere."""
    armature, names, target = rig
    render = bpy.context.scene.render
    render.frame_map_old, render.frame_map_new = 100, 200
    refused(
        r"the scene 'Scene' remaps time \(Time Stretching, in the Output properties' Frame Range: Old 100, New 200\), "
        r"so its animation plays at other frames than it is keyed on: set Old and New to the same value to bake",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )
    render.frame_map_old = render.frame_map_new = 50
    assert api.bake(armature, target, tip_bone=names[-1]).on_target


def test_a_goal_that_follows_another_chain_of_the_bake_is_refused() -> None:
    """Goals are read before any key is written: a target riding on another chain of the same bake would be
    solved toward where it was, and measured there."""
    carrier, carried = make_chain(3, name="Carrier")[0], make_chain(3, name="Carried")[0]
    carried.location.x = 2.0
    prop = keyed_empty("Prop", [(1, (0.0, 0.0, 0.0))])
    prop.parent, prop.parent_type, prop.parent_bone = carrier, "BONE", "bone.002"
    target = keyed_empty("Target", loop_path(FRAMES, (1.0, 0, 2.2), (0.5, 0.4, 0.3)))
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    chains = [
        ChainSettings(carrier, target, "bone.002", 0),
        ChainSettings(carried, prop, "bone.002", 0),
    ]
    refused(
        "the target 'Prop' is parented to the bone 'bone.002', which the chain of 'bone.002' of 'Carrier' "
        r"\(baked too\) moves: the target would move with the bake",
        lambda: api.bake_settings(BakeSettings(tuple(chains))),
    )
    assert len(api.bake(carried, prop, tip_bone="bone.002").frames) == len(FRAMES)  # alone, it may follow it


def test_a_chain_longer_than_the_armatures_is_refused_saying_how_long_it_may_be(rig: Rig) -> None:
    armature, names, target = rig
    refused(
        r"Chain Length \(chain_length\) 9 is longer than the chain from 'bone.003' up to its root bone 'bone.000' "
        r"\(4 bones\): set it to 4 or less \(0: up to the root\)",
        lambda: api.bake(armature, target, tip_bone=names[-1], chain_length=9),
    )


def test_two_chains_ending_at_one_bone_are_refused_naming_the_bone_and_their_targets(rig: Rig) -> None:
    armature, names, target = rig
    other = keyed_empty("Other", [(1, (-0.5, 0.0, 2.0))])
    chains = (
        ChainSettings(armature, target, names[-1], 3),
        ChainSettings(armature, other, names[-1], 2),
        ChainSettings(armature, armature, names[-1], 3, target_bone=names[0]),
    )
    refused(
        r"3 chains end at bone 'bone.003' of armature 'Rig', toward 'Target', 'Other' and 'Rig/bone.000': a bone's "
        r"tail follows one target; disable or remove all but one of them, or end them at other bones",
        lambda: api.bake_settings(BakeSettings(chains)),
    )


def test_a_library_override_beside_its_linked_original_of_the_same_name_is_baked_toward(
    rig: Rig, tmp_path: Path
) -> None:
    """Both are in the view layer under one name: each is told apart by what it is, not looked up by name."""
    armature, names, _ = rig
    library = tmp_path / "props.blend"
    bpy.data.libraries.write(str(library), {keyed_empty("Prop", loop_path(FRAMES, (0.4, 0, 2.2), (0.3, 0.2, 0.2)))})
    bpy.data.objects.remove(bpy.data.objects["Prop"])
    with bpy.data.libraries.load(str(library), link=True) as (_, into):
        into.objects = ["Prop"]
    linked = into.objects[0]
    override = linked.override_create(remap_local_usages=False)
    for obj in (linked, override):
        bpy.context.scene.collection.objects.link(obj)
    assert (linked.name, override.name, linked.library is not None, override.library) == ("Prop", "Prop", True, None)
    for goal in (override, linked):
        assert api.bake(armature, goal, tip_bone=names[-1]).on_target


def test_a_failed_bake_that_stepped_the_scene_puts_back_the_pose_set_by_hand() -> None:
    """Stepping the scene itself (here asked for; also the fallback for a Python driver) writes the new keys
    over the pose; a failure takes the keys back and must put the pose back too."""
    armature, names = make_chain(4)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 2.2), (1.0, 0.8, 0.6)))
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    by_hand = armature.pose.bones[names[2]]
    by_hand.rotation_quaternion = (0.9, 0.3, 0.2, 0.1)

    def cancel(fraction: float) -> None:
        if fraction > 0.8:  # while Blender checks the written keys
            raise KeyboardInterrupt

    settings = BakeSettings.from_keywords(armature, target, tip_bone=names[-1])
    with pytest.raises(KeyboardInterrupt):
        bake(settings, cancel, sandbox=False)
    bpy.context.view_layer.update()
    assert tuple(by_hand.rotation_quaternion) == pytest.approx((0.9, 0.3, 0.2, 0.1), abs=1e-6)
    assert armature.animation_data is None or not compat.assigned_fcurves(armature)


def test_a_cancelled_bake_puts_back_the_pose_set_by_hand(rig: Rig) -> None:
    armature, names, target = rig
    by_hand = armature.pose.bones[names[3]]  # not keyed: posed by hand
    by_hand.rotation_quaternion = (0.9, 0.3, 0.2, 0.1)
    elsewhere = make_chain(2, name="Other")[0].pose.bones["bone.001"]
    before = data_snapshot()

    def cancel(fraction: float) -> None:
        if fraction > 0.8:  # while Blender checks the written keys
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        api.bake(armature, target, tip_bone=names[-1], progress=cancel)
    # Not byte for byte: taking the keys back leaves Blender's update tags (not data) set on the Action.
    assert data_snapshot() == before
    assert tuple(by_hand.rotation_quaternion) == pytest.approx((0.9, 0.3, 0.2, 0.1), abs=1e-6)
    assert elsewhere.rotation_quaternion[0] == 1.0


def test_a_successful_bake_keeps_the_unkeyed_pose_of_the_other_bones() -> None:
    armature, names = make_chain(4)
    target = keyed_empty("Target", loop_path(FRAMES, (0.3, 0, 1.5), (0.4, 0.3, 0.3)))
    above = armature.pose.bones[names[0]]
    above.keyframe_insert("rotation_quaternion", frame=1)
    above.rotation_quaternion = (0.99, 0.1, 0.0, 0.0)  # a keyed bone turned by hand, not keyed again
    report = api.bake(armature, target, tip_bone=names[-1], chain_length=3, frame_start=1, frame_end=20)
    bpy.context.view_layer.update()  # as Blender does next (a redraw): the new keys are evaluated
    assert tuple(above.rotation_quaternion) == pytest.approx((0.99, 0.1, 0.0, 0.0), abs=1e-6)
    assert report.bones == tuple(names[1:])


def test_a_stepped_rebake_replaces_every_key_up_to_frame_end(rig: Rig) -> None:
    armature, names, target = rig
    api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=20)
    target.animation_data_clear()
    target.location = (-0.5, 0.5, 2.5)
    api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=20, frame_step=5)
    frames = {
        frame
        for key, keys in fcurve_keys(armature).items()
        if key[0].startswith('pose.bones["bone.003"]')
        for frame, _ in keys
    }
    assert frames == {1.0, 6.0, 11.0, 16.0, 20.0}  # the first bake's 17-19 gone; frame_end keyed anew
    tips = evaluated(armature, [16, 20], names)["tails"][:, -1]
    np.testing.assert_allclose(tips, [target.location] * 2, atol=TOLERANCE)


def test_bad_numbers_are_value_errors_and_write_nothing(rig: Rig) -> None:
    armature, _, target = rig
    refused(
        r"Chain Length \(chain_length\) must be a whole number",
        lambda: api.bake(armature, target, tip_bone="x", chain_length=math.inf),
    )
    refused(
        r"Tolerance \(tolerance\) must be a positive finite number",
        lambda: api.bake(armature, target, tip_bone="x", tolerance=math.inf),
    )


def test_an_object_linked_in_the_same_script_bakes_without_an_update() -> None:
    armature, names = make_chain(3)
    target = bpy.data.objects.new("Fresh", None)
    bpy.context.scene.collection.objects.link(target)  # no view_layer.update() in between
    target.location = (0.5, 0.0, 2.0)
    assert api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=2).on_target


def test_edit_mode_through_another_object_sharing_the_armature_is_refused(rig: Rig) -> None:
    armature, names, target = rig
    twin = bpy.data.objects.new("Twin", armature.data)
    bpy.context.scene.collection.objects.link(twin)
    activate(twin, "EDIT")
    with pytest.raises(ValueError, match=r"armature 'Rig' is in Edit Mode \(its Armature 'Rig' is edited through"):
        api.bake(armature, target, tip_bone=names[-1])
    activate(twin)
    assert armature.animation_data.action.name == "RigAction"


def test_float32_rounding_beyond_a_tiny_tolerance_is_reported_off_target() -> None:
    """The solver reaches in float64; Blender keys and evaluates in float32. A tolerance below what float32
    can hold is missed on Blender's evaluation, and the report says so: off target, though never out of reach."""
    armature, names = make_chain(6, length=0.5)
    target = keyed_empty("Target", loop_path(FRAMES, (0.4, 0.2, 1.8), (0.5, 0.4, 0.3)))
    report = api.bake(armature, target, tip_bone=names[-1], tolerance=1e-9)
    assert report.unreachable_frames == ()
    assert report.off_target_frames == tuple(int(f) for f in report.frames[report.error > 1e-9])
    assert report.off_target_frames
    assert report.off_target == {"the scene": report.off_target_frames}  # solved, but Blender plays it off
    assert not report.on_target


def test_an_action_shared_with_a_copy_is_refused_and_a_layer_bakes_the_armature_alone(rig: Rig) -> None:
    """``Object.copy`` shares the Action (from 4.4 on its slot too): keys for one would move both. Refused, the
    remedy a bake that works: as a layer, the copy stays where it was."""
    armature, names, target = rig
    twin = armature.copy()
    twin.location.x = 3.0
    bpy.context.scene.collection.objects.link(twin)
    how = "through the same slot 'OBRig'" if compat.SLOTTED_ACTIONS else "with all its channels"
    refused(
        rf"the action 'RigAction' also animates 'Rig.001' {how}, so keys for 'Rig' would move them too: make it "
        r"single-user first \(Object > Relations > Make Single User > Object Animation\), or bake as a layer",
        lambda: api.bake(armature, target, tip_bone=names[-1]),
    )
    twins_before = evaluated(twin, FRAMES, names)["tails"]
    report = api.bake(armature, target, tip_bone=names[-1], output="layer")
    assert report.error.max() < 2e-3  # within a tolerance of 1 mm but on frame 9: the layer's float32 Combine
    assert armature.animation_data.action is None  # pushed down into the armature's own track
    np.testing.assert_array_equal(evaluated(twin, FRAMES, names)["tails"], twins_before)
