"""fabrik.bake and fabrik.clear through bpy.ops, in background mode, on Rigify limbs and generated chains."""

from __future__ import annotations

import math
from typing import Any

import bpy
import numpy as np
import pytest
from rigs import keyed_empty, loop_path, make_chain, rigify_metarig
from rigs import world_location as target_path

from fabrik_addon import api
from fabrik_addon.blender import compat
from fabrik_addon.blender.chain_list import frame_runs
from fabrik_addon.blender.properties import settings_of
from fabrik_addon.blender.ui.messages import sentence, summary_text, target_text
from fabrik_addon.words import counted

from ..oracle import data_snapshot, evaluated, fcurve_keys
from .scenes import activate, add_chain, chain_scene, summary_values

TOLERANCE = 1e-3


def _bone(data_path: str) -> str | None:
    """The bone a pose bone's F-curve animates, or None for other F-curves."""
    return data_path.split('"')[1] if data_path.startswith("pose.bones[") else None


def test_bake_a_rigify_arm_in_pose_mode(capsys: pytest.CaptureFixture[str]) -> None:
    armature = rigify_metarig("human")
    bpy.ops.object.mode_set(mode="OBJECT")
    bones = ["upper_arm.L", "forearm.L"]
    root = np.array(armature.matrix_world @ armature.data.bones[bones[0]].head_local)
    tip = np.array(armature.matrix_world @ armature.data.bones[bones[-1]].tail_local)
    reach = sum(armature.data.bones[b].length for b in bones)
    frames = range(1, 21)
    target = keyed_empty("Target", loop_path(frames, tuple(root + 0.6 * (tip - root)), (0.2 * reach,) * 3))
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 20
    chain = add_chain(armature, target=target, tip_bone="forearm.L", chain_length=2)
    activate(armature, "POSE")
    others = {pb.name: np.array(pb.matrix_basis) for pb in armature.pose.bones if pb.name not in bones}

    assert bpy.ops.fabrik.bake() == {"FINISHED"}

    error = np.linalg.norm(evaluated(armature, frames, bones)["tails"][:, -1] - target_path(target, frames), axis=1)
    assert error.max() <= TOLERANCE
    summary = chain.last_bake
    assert (summary.frames, summary.frame_start, summary.frame_end, summary.bones) == (20, 1, 20, 2)
    assert summary.max_error == pytest.approx(error.max(), abs=1e-7)
    assert summary.unreachable == 0
    assert armature.mode == "POSE"
    keyed_bones = {_bone(path) for path, _ in fcurve_keys(armature)}
    assert keyed_bones == set(bones)
    assert all(np.array_equal(np.array(armature.pose.bones[n].matrix_basis), m) for n, m in others.items())
    out = capsys.readouterr().out
    assert "Info: Baked frames 1-20 (20 keyed) of 2 bones" in out
    assert "on target on every frame" in out


OPTIONS = [
    pytest.param({}, id="defaults"),
    pytest.param(
        {
            "method": "CCD",
            "warm_start": False,
            "tolerance": 0.01,
            "max_iterations": 5,
            "chain_length": 2,
            "use_custom_range": True,
            "frame_start": 4,
            "frame_end": 17,
            "frame_step": 3,
        },
        id="every-setting",
    ),
]


@pytest.mark.parametrize("options", OPTIONS)
def test_the_operator_bakes_what_the_settings_say(options: dict[str, Any]) -> None:
    """The operator and api.bake with the arguments the settings stand for write the same keys."""
    armature, names, target, chain = chain_scene(bones=3)
    settings = settings_of(armature)
    for name, value in options.items():
        setattr(chain if name in chain.bl_rna.properties else settings, name, value)
    twin, _ = make_chain(3, name="Twin")
    activate(armature)

    assert bpy.ops.fabrik.bake() == {"FINISHED"}

    report = api.bake(
        twin,
        target,
        tip_bone=names[-1],
        chain_length=chain.chain_length,
        frame_start=settings.frame_start if settings.use_custom_range else None,
        frame_end=settings.frame_end if settings.use_custom_range else None,
        frame_step=settings.frame_step,
        tolerance=settings.tolerance,
        max_iterations=settings.max_iterations,
        method=settings.method.lower(),
        warm_start=settings.warm_start,
    )
    ours, theirs = fcurve_keys(armature), fcurve_keys(twin)
    assert ours.keys() == theirs.keys()
    for channel, keys in ours.items():
        np.testing.assert_allclose(keys, theirs[channel], atol=1e-6)
    assert [frame for frame, _ in next(iter(ours.values()))] == report.frames.tolist()
    assert report.frames[-1] == (settings.frame_end if settings.use_custom_range else bpy.context.scene.frame_end)
    assert chain.last_bake.max_error == pytest.approx(report.max_error, abs=1e-6)
    assert chain.last_bake.frames == len(report.frames)


def test_frames_out_of_reach_are_summarised(capsys: pytest.CaptureFixture[str]) -> None:
    armature, _, _, chain = chain_scene(bones=3)
    target = keyed_empty("Far", [(1, (0, 1.0, 2.0)), (11, (0, 4.0, 2.0)), (21, (0, 1.0, 2.0))])
    chain.target = target
    settings = settings_of(armature)
    settings.use_custom_range, settings.frame_start, settings.frame_end, settings.frame_step = True, 1, 21, 2
    activate(armature, "POSE")

    assert bpy.ops.fabrik.bake() == {"FINISHED"}

    frames = range(1, 22, 2)
    far = [f for f, d in zip(frames, np.linalg.norm(target_path(target, frames), axis=1), strict=True) if d > 3.0]
    assert len(far) > 1
    summary = chain.last_bake
    assert summary.unreachable == len(far)
    assert summary.unreachable_frames == frame_runs(far, frames) == f"{far[0]}-{far[-1]}"
    assert summary.off_target_causes == f"out of reach on {far[0]}-{far[-1]}"
    out = capsys.readouterr().out
    assert f"off target on {len(far)} frames: out of reach on {far[0]}-{far[-1]}" in out


def test_the_summary_says_on_target_only_when_every_frame_is() -> None:
    *_, chain = chain_scene(bones=3)
    summary = chain.last_bake
    summary.frames, summary.frame_start, summary.frame_end, summary.bones = 20, 1, 20, 3
    assert summary_text(summary, bpy.context.scene).endswith("; on target on every frame")
    summary.off_target, summary.off_target_frames = 2, "4, 9"  # missed, one out of reach, one the scene's doing
    summary.off_target_causes = "out of reach on 9; the scene on 4"
    assert target_text(summary) == "off target on 2 frames: out of reach on 9; the scene on 4"
    summary.off_target, summary.off_target_frames, summary.off_target_causes = 0, "", ""
    summary.unreachable, summary.unreachable_frames = 1, "9"  # the solve fell short, within the tolerance
    assert target_text(summary) == "out of reach on 1 frame: 9"
    assert "on target" not in summary_text(summary, bpy.context.scene)


def test_messages_count_in_words_and_name_settings_as_the_panel_labels_them() -> None:
    assert [counted(n, "frame") for n in (0, 1, 2)] == ["0 frames", "1 frame", "2 frames"]
    assert counted(1, "IK constraint") == "1 IK constraint"
    # The panel shows a setting's label alone; the API's keyword stays for a name the panel does not show.
    assert (
        sentence("Chain Length (chain_length) 10 is longer than the chain")
        == "Chain Length 10 is longer than the chain"
    )
    assert sentence("the frames end before they start: End (frame_end) 5, Start (frame_start) 10") == (
        "The frames end before they start: End 5, Start 10"
    )
    assert sentence("action_name must be a string, got int") == "action_name must be a string, got int"
    assert sentence("the target 'Empty' is an empty object") == "The target 'Empty' is an empty object"


def test_frame_runs() -> None:
    assert frame_runs([]) == ""
    assert frame_runs([3, 4, 5, 9, 11, 12]) == "3-5, 9, 11-12"
    assert frame_runs([1, 3, 5, 9], keyed=range(1, 12, 2)) == "1-5, 9"
    assert frame_runs([41, 46, 50], keyed=[*range(1, 50, 5), 50]) == "41-50"  # the end frame follows 46
    assert frame_runs(list(range(0, 40, 3))) == "0, 3, 6, 9, 12, 15, ..."


def _poll_failure(operator: Any) -> str:
    assert not operator.poll()
    with pytest.raises(RuntimeError) as failure:
        operator()
    return str(failure.value)


@pytest.mark.parametrize(
    ("state", "bake_message", "clear_message"),
    [
        ("no active object", "No active object: select an armature", "No active object: select an armature"),
        ("an empty is active", "The active object 'Target' is not an armature", "is not an armature"),
        ("edit mode", "Switch to Object or Pose Mode", "Switch to Object or Pose Mode"),
        ("no chain", "Armature 'Rig' has no chain: add one", "Armature 'Rig' has no chain: add one"),
        ("no chain enabled", "No chain of armature 'Rig' is enabled", "No chain of armature 'Rig' is enabled"),
        ("no target", "Pick a target object for 'bone.002' in the FABRIK panel", None),
        ("no tip bone", "Pick a tip bone for 'Chain 1' in the FABRIK panel", "Pick a tip bone for 'Chain 1'"),
        ("tip bone missing", "Armature 'Rig' has no bone 'hand.R'", "Armature 'Rig' has no bone 'hand.R'"),
        ("ready", None, None),
        ("ready in pose mode", None, None),
    ],
)
def test_poll_explains_why_the_operators_are_unavailable(
    state: str, bake_message: str | None, clear_message: str | None
) -> None:
    armature, _, target, chain = chain_scene()
    if state == "no active object":
        activate(None)
    elif state == "an empty is active":
        activate(target)
    elif state == "edit mode":
        activate(armature, "EDIT")
    elif state == "no chain":
        settings_of(armature).chains.clear()
    elif state == "no chain enabled":
        chain.enabled = False
    elif state == "no target":
        chain.target = None
    elif state == "no tip bone":
        chain.tip_bone = ""
    elif state == "tip bone missing":
        chain.tip_bone = "hand.R"
    elif state == "ready in pose mode":
        activate(armature, "POSE")
    for operator, message in ((bpy.ops.fabrik.bake, bake_message), (bpy.ops.fabrik.clear, clear_message)):
        if message is None:
            assert operator.poll()
        else:
            assert message in _poll_failure(operator)


def _parent_target_to_tip(armature: bpy.types.Object, names: list[str], target: bpy.types.Object) -> None:
    target.parent, target.parent_type, target.parent_bone = armature, "BONE", names[-1]


def _constrain_a_chain_bone(armature: bpy.types.Object, names: list[str], target: bpy.types.Object) -> None:
    armature.pose.bones[names[1]].constraints.new("COPY_ROTATION")


BAD_SETTINGS = [
    ("fabrik.bake", {"chain_length": 5}, r"Error: Chain Length 5 is longer than the chain"),
    ("fabrik.clear", {"chain_length": 5}, r"Error: Chain Length 5 is longer than the chain"),
    (
        "fabrik.bake",
        {"use_custom_range": True, "frame_start": 10, "frame_end": 5},
        r"Error: The frames end before they start: End 5, Start 10",
    ),
    (
        "fabrik.clear",
        {"use_custom_range": True, "frame_start": 10, "frame_end": 5},
        r"Error: The frames end before they start: End 5, Start 10",
    ),
    ("fabrik.bake", _parent_target_to_tip, r"Error: The target 'Target' is parented to the bone 'bone.002'"),
    ("fabrik.bake", _constrain_a_chain_bone, r"Error: Bone 'bone.001' has constraints .*Copy Rotation"),
]


@pytest.mark.parametrize(("operator", "change", "message"), BAD_SETTINGS)
def test_bad_settings_cancel_with_an_error_and_write_nothing(operator: str, change: Any, message: str) -> None:
    armature, names, target, chain = chain_scene()
    bpy.ops.fabrik.bake()  # keys for Clear to find, and a summary that must stay as it is
    summary = summary_values(chain)
    assert summary["frames"] == 20
    if callable(change):
        change(armature, names, target)
    else:
        for name, value in change.items():
            setattr(chain if name in chain.bl_rna.properties else settings_of(armature), name, value)
    before = data_snapshot()
    group, name = operator.split(".")
    with pytest.raises(RuntimeError, match=message):
        getattr(getattr(bpy.ops, group), name)()
    assert data_snapshot() == before
    assert summary_values(chain) == summary


def test_undo_brings_back_the_previous_animation() -> None:
    armature, names, _, _ = chain_scene()
    middle = armature.pose.bones[names[1]]
    middle.rotation_quaternion = (math.cos(0.3), math.sin(0.3), 0.0, 0.0)
    middle.keyframe_insert("rotation_quaternion", frame=5)
    before = data_snapshot()
    bpy.ops.ed.undo_push(message="Key the middle bone")  # what the UI does after every change

    # As a button calls it: operators called from Python push an undo step only when asked to.
    assert bpy.ops.fabrik.bake("EXEC_DEFAULT", True) == {"FINISHED"}
    baked = data_snapshot()
    assert baked != before
    bpy.ops.ed.undo()
    assert data_snapshot() == before
    assert settings_of(bpy.data.objects["Rig"]).chains[0].last_bake.frames == 0  # the old reference died with the undo
    bpy.ops.ed.redo()
    assert data_snapshot() == baked


def test_clear_removes_the_chain_rotation_keys_in_the_range_only(capsys: pytest.CaptureFixture[str]) -> None:
    armature, names, _, chain = chain_scene(bones=3)
    chain.chain_length = 2
    settings = settings_of(armature)
    root = armature.pose.bones[names[0]]  # not in the chain: its keys stay
    root.keyframe_insert("rotation_quaternion", frame=8)
    armature.keyframe_insert("location", frame=8)
    euler = armature.pose.bones[names[1]]
    euler.keyframe_insert("rotation_quaternion", frame=7)  # keys of a mode the bone no longer uses go too
    euler.rotation_mode = "XYZ"
    bpy.ops.fabrik.bake()
    before = fcurve_keys(armature)
    settings.use_custom_range, settings.frame_start, settings.frame_end = True, 5, 10

    assert bpy.ops.fabrik.clear() == {"FINISHED"}

    after = fcurve_keys(armature)
    chain_paths = {path for path, _ in before if _bone(path) in names[1:]}
    for (path, index), keys in before.items():
        if path in chain_paths:
            assert [f for f, _ in after.get((path, index), [])] == [f for f, _ in keys if not 5 <= f <= 10]
        else:
            assert after[(path, index)] == keys
    removed = sum(len(keys) for keys in before.values()) - sum(len(keys) for keys in after.values())
    assert f"Removed {removed} rotation keys of the chain in frames 5-10" in capsys.readouterr().out

    assert bpy.ops.fabrik.clear() == {"CANCELLED"}
    assert "The chain has no rotation keys in frames 5-10" in capsys.readouterr().out
    settings.use_custom_range = False
    assert bpy.ops.fabrik.clear() == {"FINISHED"}
    assert {path for path, _ in fcurve_keys(armature)} == {path for path, _ in before} - chain_paths


def test_clear_on_an_action_another_object_uses() -> None:
    armature, names, _, _ = chain_scene(bones=3)
    bpy.ops.fabrik.bake()
    other = bpy.data.objects.new("Other", None)
    bpy.context.scene.collection.objects.link(other)
    other.animation_data_create().action = armature.animation_data.action
    if compat.SLOTTED_ACTIONS:  # the other object gets a slot of its own: clearing the armature's keys is safe
        other.location = (1.0, 2.0, 3.0)
        other.keyframe_insert("location", frame=3)
        others_keys = fcurve_keys(other)
        assert bpy.ops.fabrik.clear() == {"FINISHED"}
        assert fcurve_keys(other) == others_keys
        assert not any(_bone(path) in names for path, _ in fcurve_keys(armature))
        return
    before = fcurve_keys(armature)  # 4.2: the keys would vanish from the other object too
    with pytest.raises(RuntimeError, match=r"also animates 'Other'.*make it single-user first"):
        bpy.ops.fabrik.clear()
    assert fcurve_keys(armature) == before


def test_a_chain_below_another_is_baked_from_where_the_upper_chain_puts_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27, case 2, from the sidebar: a 2-bone arm hanging from the tip of a 3-bone spine, both in the
    armature's list (the arm first). The spine's tip follows a target that sweeps it far from its rest place,
    and the arm's target stays within the arm's reach of that target: reachable only from where the solved
    spine puts the arm. Every frame of both is on target as Blender evaluates the keys, and none is reported
    out of reach (from the spine's rest pose the arm's target is beyond its reach of 2 on 12 of the 20 frames,
    by up to 0.72)."""
    frames = range(1, 21)
    armature, names = make_chain(5)
    spine, arm = names[:3], names[3:]
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = frames.start, frames.stop - 1
    sweep = loop_path(frames, (1.2, 0.0, 2.0), (0.6, 0.5, 0.4))
    spine_target = keyed_empty("Spine target", sweep)
    arm_target = keyed_empty("Arm target", [(f, (p[0] + 0.8, p[1] + 0.3, p[2] + 0.9)) for f, p in sweep])
    activate(armature)
    add_chain(armature, name="Arm", target=arm_target, tip_bone=arm[-1], chain_length=2)
    add_chain(armature, name="Spine", target=spine_target, tip_bone=spine[-1], chain_length=3)
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    out = capsys.readouterr().out
    assert "out of reach" not in out
    for chain in settings_of(armature).chains:
        assert chain.last_bake.unreachable == 0
        assert chain.last_bake.off_target == 0
    for tip, target in ((spine[-1], spine_target), (arm[-1], arm_target)):
        state = evaluated(armature, frames, [tip])
        errors = np.linalg.norm(state["tails"][:, 0] - target_path(target, frames), axis=1)
        assert errors.max() <= 1e-3
