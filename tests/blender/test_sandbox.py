"""The evaluation sandbox gives the scene's answer: the same setups baked through the sandbox and through the
whole scene write the same keys and the same report, bit for bit; where it cannot, the bake steps the scene
and says so; and it leaves no datablock behind, whatever happens."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import bpy
import mocap
import numpy as np
import pytest
from mathutils import Vector
from rigs import keyed_empty, loop_path, make_chain, skinned_grid

from fabrik_addon import api
from fabrik_addon.blender import compat
from fabrik_addon.blender.bake import SANDBOX_NAME, RigBakeReport, bake, run
from fabrik_addon.blender.bake.sandbox import Evaluation, only_what_is_read
from fabrik_addon.blender.layer import find_layer
from fabrik_addon.blender.rig import Node
from fabrik_addon.settings import BakeSettings

from .oracle import fcurve_keys

FRAMES = range(1, 16)

#: A scene to bake: returns the armature, the target and the keyword arguments of the bake.
Setup = Callable[[], tuple[bpy.types.Object, bpy.types.Object, dict[str, Any]]]


def chain_and_target(**chain: Any) -> tuple[bpy.types.Object, list[str], bpy.types.Object]:
    armature, names = make_chain(3, **chain)
    target = keyed_empty("Target", loop_path(FRAMES, (0.6, 0.3, 1.9), (0.5, 0.4, 0.3)))
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    return armature, names, target


def animated_armature() -> tuple[bpy.types.Object, bpy.types.Object, dict[str, Any]]:
    armature, names, target = chain_and_target()
    for frame, (x, turn) in ((1, (0.0, 0.0)), (15, (0.4, 0.5))):
        armature.location.x, armature.rotation_euler.z = x, turn
        armature.keyframe_insert("location", frame=frame)
        armature.keyframe_insert("rotation_euler", frame=frame)
    return armature, target, {"tip_bone": names[-1]}


def animated_parent_bone_and_a_target_on_it() -> tuple[bpy.types.Object, bpy.types.Object, dict[str, Any]]:
    armature, names, _ = chain_and_target(parent_bone=True)
    parent = armature.pose.bones["parent"]
    for frame, angle in ((1, 0.0), (15, 0.3)):
        parent.rotation_mode = "XYZ"
        parent.rotation_euler.x = angle
        parent.keyframe_insert("rotation_euler", frame=frame)
    riding = keyed_empty("Riding", [(1, (0.3, 0.2, 0.0))])
    riding.parent, riding.parent_type, riding.parent_bone = armature, "BONE", "parent"
    return armature, riding, {"tip_bone": names[-1], "chain_length": 3}


def target_constrained_outside_the_sandbox() -> tuple[bpy.types.Object, bpy.types.Object, dict[str, Any]]:
    armature, names, target = chain_and_target()
    mover = keyed_empty("Mover", [(1, (0.0, 0.0, 0.0)), (15, (0.3, -0.2, 0.4))])
    offstage = bpy.data.objects.new("Offstage", None)  # in no scene at all
    offstage.location = (0.1, 0.1, 0.0)
    for source in (mover, offstage):
        constraint = target.constraints.new("CHILD_OF")
        constraint.target = source
        constraint.influence = 0.5
    return armature, target, {"tip_bone": names[-1]}


def driver_on_the_roots_parent_and_nla_strips() -> tuple[bpy.types.Object, bpy.types.Object, dict[str, Any]]:
    armature, names, target = chain_and_target(parent_bone=True)
    reader = keyed_empty("Dial", [(1, (0.0, 0.0, 0.0)), (15, (0.6, 0.0, 0.0))])
    fcurve = armature.pose.bones["parent"].driver_add("rotation_quaternion", 1)
    variable = fcurve.driver.variables.new()
    variable.type = "TRANSFORMS"
    variable.targets[0].id, variable.targets[0].transform_type = reader, "LOC_X"
    fcurve.driver.expression = f"{variable.name} * 0.5"
    strip_action = bpy.data.actions.new("Sway")
    armature.animation_data.action = strip_action  # keys on the middle bone, pushed into a strip
    armature.pose.bones[names[1]].keyframe_insert("rotation_quaternion", frame=1)
    armature.pose.bones[names[1]].rotation_quaternion = (0.98, 0.2, 0.0, 0.0)
    armature.pose.bones[names[1]].keyframe_insert("rotation_quaternion", frame=15)
    armature.animation_data.action = None
    armature.animation_data.nla_tracks.new().strips.new("Sway", 1, strip_action)
    return armature, target, {"tip_bone": names[-1], "chain_length": 3}


def every_rotation_mode() -> tuple[bpy.types.Object, bpy.types.Object, dict[str, Any]]:
    armature, names = make_chain(8, length=0.4)
    target = keyed_empty("Target", loop_path(FRAMES, (0.8, 0.3, 2.0), (0.5, 0.4, 0.3)))
    modes = ("QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "AXIS_ANGLE")
    for name, mode in zip(names, modes, strict=True):
        armature.pose.bones[name].rotation_mode = mode
    return armature, target, {"tip_bone": names[-1], "frame_start": 1, "frame_end": 15}


SETUPS: dict[str, Setup] = {
    "animated armature": animated_armature,
    "animated parent, target on a bone": animated_parent_bone_and_a_target_on_it,
    "constraints to objects outside": target_constrained_outside_the_sandbox,
    "driver on the root's parent, NLA": driver_on_the_roots_parent_and_nla_strips,
    "every rotation mode": every_rotation_mode,
}


def baked(setup: Setup, *, sandbox: bool) -> tuple[RigBakeReport, dict[tuple[str, int], list[tuple[float, float]]]]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature, target, keywords = setup()
    report = bake(BakeSettings.from_keywords(armature, target, **keywords), sandbox=sandbox)
    return report, fcurve_keys(armature)


@pytest.mark.parametrize("setup", SETUPS.values(), ids=SETUPS.keys())
def test_the_sandbox_bakes_what_the_whole_scene_bakes_bit_for_bit(setup: Setup) -> None:
    whole, whole_keys = baked(setup, sandbox=False)
    boxed, boxed_keys = baked(setup, sandbox=True)
    assert (whole.evaluation, boxed.evaluation) == ("scene: asked for", "sandbox")
    assert boxed_keys == whole_keys
    for ours, theirs in zip(boxed.chains, whole.chains, strict=True):
        np.testing.assert_array_equal(ours.error, theirs.error)
        np.testing.assert_array_equal(ours.iterations, theirs.iterations)
        assert (ours.unreachable_frames, ours.off_target_frames) == (
            theirs.unreachable_frames,
            theirs.off_target_frames,
        )
    assert boxed.max_error < 1e-3


def test_a_driver_reading_the_scene_makes_the_bake_step_the_scene_and_say_so() -> None:
    def reads_the_scene() -> tuple[bpy.types.Object, bpy.types.Object, dict[str, Any]]:
        armature, names, target = chain_and_target()
        fcurve = target.driver_add("location", 2)
        variable = fcurve.driver.variables.new()
        variable.targets[0].id_type = "SCENE"
        variable.targets[0].id = bpy.context.scene
        variable.targets[0].data_path = "frame_current"
        fcurve.driver.expression = f"1.6 + 0.02 * {variable.name}"
        return armature, target, {"tip_bone": names[-1]}

    _, whole_keys = baked(reads_the_scene, sandbox=False)
    fallen_back, keys = baked(reads_the_scene, sandbox=True)
    assert fallen_back.evaluation == "scene: a driver on 'Target' (location) reads a scene"
    assert keys == whole_keys
    assert fallen_back.max_error < 1e-3


def datablock_counts() -> dict[str, int]:
    return {
        name: len(getattr(bpy.data, name))
        for name in dir(bpy.data)
        if isinstance(getattr(bpy.data, name, None), bpy.types.bpy_prop_collection)
    }


def test_the_sandbox_leaves_nothing_behind_after_a_bake_an_error_or_a_cancel() -> None:
    armature, names, target = chain_and_target()
    before = datablock_counts()
    scenes = [scene.name for scene in bpy.data.scenes]
    settings = BakeSettings.from_keywords(armature, target, tip_bone=names[-1])
    bake(settings)

    def cancel(fraction: float) -> None:
        if fraction > 0.2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bake(settings, cancel)
    target.location.x = float("nan")
    target.animation_data_clear()
    with pytest.raises(ValueError, match="not a number"):
        bake(settings)
    counts = datablock_counts()
    counts["actions"] -= 1  # the first bake's Action, the one thing a bake adds
    assert counts == before
    assert [scene.name for scene in bpy.data.scenes] == scenes
    assert not any(scene.name.startswith(SANDBOX_NAME) for scene in bpy.data.scenes)


def test_a_bake_of_a_chain_alone_leaves_the_shot_to_blender() -> None:
    """Nothing but the chain is animated, so no pose set by hand can be lost: the bake evaluates no frame of
    the shot (the mesh skinned to the chain costs it nothing), and Blender shows the keys when it next
    evaluates the scene."""
    armature, names, target = chain_and_target()
    skinned_grid(armature, names, side=20)
    scene = bpy.context.scene
    scene.frame_set(7)
    evaluated: list[str] = []

    def seen(evaluated_scene: bpy.types.Scene, _: bpy.types.Depsgraph) -> None:
        evaluated.append(evaluated_scene.name)

    bpy.app.handlers.depsgraph_update_post.append(seen)
    try:
        report = bake(BakeSettings.from_keywords(armature, target, tip_bone=names[-1]))
        assert scene.name not in evaluated
        bpy.context.view_layer.update()  # what Blender does next (a redraw)
        assert scene.name in evaluated
    finally:
        bpy.app.handlers.depsgraph_update_post.remove(seen)
    tip = armature.matrix_world @ armature.pose.bones[names[-1]].tail
    assert (tip - target.matrix_world.translation).length == pytest.approx(report.chains[0].error[6], abs=1e-7)


def _walk_with_a_target_on_the_right_hand() -> tuple[bpy.types.Object, bpy.types.Object]:
    """The committed CMU walk and an Empty riding its right hand."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature = mocap.import_clip("walk")
    target = keyed_empty("Riding", [(1, (0.0, -4.0, -12.0))])
    target.parent, target.parent_type, target.parent_bone = armature, "BONE", "rhand"
    return armature, target


def _target_of_a_copy_sharing_the_action() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    """The copy plays the armature's Action (through its slot, 4.4+): keys into it would move the copy too
    (refused), so this one bakes into a layer, and the Action pushed down still animates the copy's hand."""
    armature, _ = _walk_with_a_target_on_the_right_hand()
    other = armature.copy()  # the same Action (and slot)
    other.location.x += 0.3
    bpy.context.scene.collection.objects.link(other)
    return armature, other, "rhand"


def _a_child_of_turned_on_later() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    armature, _ = _walk_with_a_target_on_the_right_hand()
    target = keyed_empty("Later", [(1, (0.0, 0.0, 0.0))])
    constraint = target.constraints.new("CHILD_OF")
    constraint.target, constraint.subtarget, constraint.set_inverse_pending = armature, "rhand", False
    for frame, mute in ((1, True), (20, False)):
        constraint.mute = mute
        target.keyframe_insert('constraints["Child Of"].mute', frame=frame)
    bpy.context.scene.frame_set(1)
    return armature, target, ""


def _a_copy_location_in_the_hands_space() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    armature, _ = _walk_with_a_target_on_the_right_hand()
    fixed = keyed_empty("Fixed", [(1, (0.0, 0.0, 0.2))])
    target = keyed_empty("Spaced", [(1, (0.0, 0.0, 0.0))])
    constraint = target.constraints.new("COPY_LOCATION")
    constraint.target, constraint.target_space = fixed, "CUSTOM"
    constraint.space_object, constraint.space_subtarget = armature, "rhand"
    return armature, target, ""


def _a_vertex_of_a_mesh_the_hand_deforms() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    armature, _ = _walk_with_a_target_on_the_right_hand()
    head = armature.matrix_world @ armature.data.bones["rhand"].head_local
    mesh = bpy.data.meshes.new("Skin")
    mesh.from_pydata(
        [tuple(head + Vector(offset)) for offset in ((0, 0, 0), (0.1, 0, 0), (0, 0.1, 0))], [], [(0, 1, 2)]
    )
    skin = bpy.data.objects.new("Skin", mesh)
    bpy.context.scene.collection.objects.link(skin)
    skin.vertex_groups.new(name="rhand").add([0, 1, 2], 1.0, "REPLACE")
    skin.modifiers.new("Armature", "ARMATURE").object = armature
    target = keyed_empty("OnTheSkin", [(1, (0.0, 0.0, 0.0))])
    constraint = target.constraints.new("COPY_LOCATION")
    constraint.target, constraint.subtarget = skin, "rhand"
    return armature, target, ""


def _on_a_b_bone_curve(armature: bpy.types.Object, bone: str) -> bpy.types.Object:
    """An Empty on the middle of the B-Bone curve of ``bone`` (8 segments)."""
    armature.data.bones[bone].bbone_segments = 8
    target = keyed_empty("OnTheCurve", [(1, (0.0, 0.0, 0.0))])
    constraint = target.constraints.new("COPY_LOCATION")
    constraint.target, constraint.subtarget = armature, bone
    constraint.head_tail, constraint.use_bbone_shape = 0.5, True
    return target


def _the_hands_b_bone_curve_bent_by_the_other_wrist() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    armature, _ = _walk_with_a_target_on_the_right_hand()
    hand = armature.data.bones["rhand"]
    hand.bbone_handle_type_end, hand.bbone_custom_handle_end = "ABSOLUTE", armature.data.bones["LeftWrist"]
    return armature, _on_a_b_bone_curve(armature, "rhand"), ""


def _the_collars_b_bone_curve_bent_by_its_child() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    armature, _ = _walk_with_a_target_on_the_right_hand()  # automatic handles: its connected child bends it
    return armature, _on_a_b_bone_curve(armature, "RightCollar"), ""


def _a_bone_property_driven_by_the_hand() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    armature, _ = _walk_with_a_target_on_the_right_hand()
    armature.pose.bones["Head"]["dial"] = 0.0
    dial = armature.driver_add('pose.bones["Head"]["dial"]').driver
    hand = dial.variables.new()
    hand.type, dial.expression = "TRANSFORMS", hand.name
    hand.targets[0].id, hand.targets[0].bone_target = armature, "rhand"
    hand.targets[0].transform_type, hand.targets[0].transform_space = "LOC_X", "WORLD_SPACE"
    target = keyed_empty("Dialled", [(1, (0.0, 0.0, 0.0))])
    moved = target.driver_add("location", 0).driver
    reading = moved.variables.new()
    moved.expression = reading.name
    reading.targets[0].id, reading.targets[0].data_path = armature, 'pose.bones["Head"]["dial"]'
    return armature, target, ""


def _a_bone_setting_of_the_arm_driven_by_the_other_wrist() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    armature, target = _walk_with_a_target_on_the_right_hand()
    inherit = armature.data.driver_add('bones["RightCollar"].use_inherit_rotation').driver
    wrist = inherit.variables.new()
    wrist.type, inherit.expression = "TRANSFORMS", f"{wrist.name} > 9"
    wrist.targets[0].id, wrist.targets[0].bone_target = armature, "LeftWrist"
    wrist.targets[0].transform_type, wrist.targets[0].transform_space = "LOC_X", "WORLD_SPACE"
    return armature, target, ""


#: Goals that follow the right hand in ways its links alone do not say.
HIDDEN_LINKS: dict[str, Callable[[], tuple[bpy.types.Object, bpy.types.Object, str]]] = {
    "another armature sharing the Action": _target_of_a_copy_sharing_the_action,
    "a constraint turned on later": _a_child_of_turned_on_later,
    "a constraint in the hand's space": _a_copy_location_in_the_hands_space,
    "a vertex of a mesh the hand deforms": _a_vertex_of_a_mesh_the_hand_deforms,
    "the hand's B-Bone curve bent by the other wrist": _the_hands_b_bone_curve_bent_by_the_other_wrist,
    "the collar's B-Bone curve bent by its child": _the_collars_b_bone_curve_bent_by_its_child,
    "a bone's property driven by the hand": _a_bone_property_driven_by_the_hand,
    "a bone setting of the arm driven by the other wrist": _a_bone_setting_of_the_arm_driven_by_the_other_wrist,
}


def _baked_walk(
    setup: Callable[[], tuple[bpy.types.Object, bpy.types.Object, str]],
    *,
    muting: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[tuple[str, int], list[tuple[float, float]]]:
    armature, target, target_bone = setup()
    if not muting:
        monkeypatch.setattr(run, "only_what_is_read", lambda _evaluation, _reads: nullcontext())
    legs = mocap.legs(armature)
    foot = legs["Left"].foot
    output = "layer" if setup is _target_of_a_copy_sharing_the_action else "action"
    settings = BakeSettings.from_keywords(
        armature, target, tip_bone=foot, chain_length=3, target_bone=target_bone, output=output
    )
    bake(settings)
    if setup is _riding_the_hand:
        api.plant_feet(armature, [legs["Right"].foot], hips_bone="Hips")
    monkeypatch.undo()
    fcurves = [f for action in bpy.data.actions for f in compat.action_fcurves(action)]
    assert not any(fcurve.mute for fcurve in fcurves), "nothing is left muted"
    layer = find_layer(armature)
    if layer is None:
        return fcurve_keys(armature)
    return {(f.data_path, f.array_index): [tuple(k.co) for k in f.keyframe_points] for f in layer.fcurves()}


def _riding_the_hand() -> tuple[bpy.types.Object, bpy.types.Object, str]:
    return (*_walk_with_a_target_on_the_right_hand(), "")


def test_evaluating_only_the_animation_read_writes_the_same_keys_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bake of the left leg toward a target riding the right hand, then Plant Feet on the right foot with the
    hips: the walks evaluate only the bones what they read follows (the left arm, the head... muted meanwhile),
    and every key is what evaluating the whole Action gives."""
    muted = _baked_walk(_riding_the_hand, muting=True, monkeypatch=monkeypatch)
    assert muted == _baked_walk(_riding_the_hand, muting=False, monkeypatch=monkeypatch)


@pytest.mark.parametrize("setup", HIDDEN_LINKS.values(), ids=HIDDEN_LINKS.keys())
def test_a_goal_following_a_bone_unseen_keeps_its_animation_evaluated(
    setup: Callable[[], tuple[bpy.types.Object, bpy.types.Object, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a goal follows the right hand in a way its links do not say, the hand is not muted: the keys are
    those of evaluating the whole Action (each of these baked other keys when the hand was muted)."""
    muted = _baked_walk(setup, muting=True, monkeypatch=monkeypatch)
    assert muted == _baked_walk(setup, muting=False, monkeypatch=monkeypatch)


def _with_ancestors(armature: bpy.types.Object, *names: str) -> set[str]:
    found = set()
    for name in names:
        bone = armature.pose.bones[name]
        while bone is not None:
            found.add(bone.name)
            bone = bone.parent
    return found


def test_only_the_bones_nothing_read_follows_are_muted_and_only_meanwhile() -> None:
    armature, target = _walk_with_a_target_on_the_right_hand()
    fcurves = {fcurve.data_path: fcurve for fcurve in compat.assigned_fcurves(armature)}
    fcurves['pose.bones["Head"].rotation_euler'].mute = True  # by the user
    with only_what_is_read(Evaluation(bpy.context.scene, "sandbox"), [Node(armature, "LeftKnee"), Node(target, "")]):
        muted = {path.split('"')[1] for path, fcurve in fcurves.items() if fcurve.mute}
    followed = _with_ancestors(armature, "LeftKnee", "rhand")  # the target rides rhand
    assert {"Hips", "LeftHip", "RightCollar", "rhand"} <= followed
    assert "LeftWrist" in muted
    assert muted == {path.split('"')[1] for path in fcurves} - followed
    assert [path for path, fcurve in fcurves.items() if fcurve.mute] == ['pose.bones["Head"].rotation_euler']


def test_an_armature_with_an_ik_constraint_evaluates_all_its_animation() -> None:
    """An IK constraint moves the bones above its own, which their links do not say: nothing is muted."""
    armature, _ = _walk_with_a_target_on_the_right_hand()
    armature.pose.bones["LeftWrist"].constraints.new("IK")
    with only_what_is_read(Evaluation(bpy.context.scene, "sandbox"), [Node(armature, "LeftKnee")]):
        assert not any(fcurve.mute for fcurve in compat.assigned_fcurves(armature))
