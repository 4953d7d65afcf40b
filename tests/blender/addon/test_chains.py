"""fabrik.bake and fabrik.clear on several chains of one armature: one call bakes every enabled chain (one walk
through the frames, one undo step, all or nothing) and reports a line per chain; a disabled chain is left
alone."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from rigs import keyed_empty, limited_y, loop_path, posed_targets, rigify_metarig, y_rig
from rigs import world_location as target_path

from fabrik_addon.blender.properties import settings_of
from fabrik_addon.blender.rig import read_limits
from fabrik_addon.blender.ui.messages import bake_text

from ..oracle import FloatArray, data_snapshot, evaluated, fcurve_keys
from .scenes import activate, add_chain, summary_values, two_chain_scene

TOLERANCE = 1e-3
FRAMES = range(1, 21)


def keyed_bones(armature: bpy.types.Object) -> set[str]:
    """The bones that the armature's active Action keys."""
    return {path.split('"')[1] for path, _ in fcurve_keys(armature) if path.startswith("pose.bones[")}


def tip_errors(armature: bpy.types.Object, bones: list[str], target: bpy.types.Object) -> FloatArray:
    tails = evaluated(armature, FRAMES, bones)["tails"][:, -1]
    return np.asarray(np.linalg.norm(tails - target_path(target, FRAMES), axis=1))


def test_both_arms_of_a_rigify_metarig_bake_in_one_call(capsys: pytest.CaptureFixture[str]) -> None:
    armature = rigify_metarig("human")
    bpy.ops.object.mode_set(mode="OBJECT")
    arms = {side: [f"upper_arm.{side}", f"forearm.{side}"] for side in ("L", "R")}
    targets = {}
    for side, bones in arms.items():
        root = np.array(armature.matrix_world @ armature.data.bones[bones[0]].head_local)
        tip = np.array(armature.matrix_world @ armature.data.bones[bones[-1]].tail_local)
        reach = sum(armature.data.bones[b].length for b in bones)
        path = loop_path(FRAMES, tuple(root + 0.6 * (tip - root)), (0.2 * reach,) * 3)
        targets[side] = keyed_empty(f"Hand.{side}", path)
        add_chain(armature, target=targets[side], tip_bone=bones[-1], chain_length=2, name=f"Arm {side}")
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    activate(armature, "POSE")

    assert bpy.ops.fabrik.bake() == {"FINISHED"}

    assert keyed_bones(armature) == {*arms["L"], *arms["R"]}
    chains = settings_of(armature).chains
    for chain, (side, bones) in zip(chains, arms.items(), strict=True):
        errors = tip_errors(armature, bones, targets[side])
        assert errors.max() <= TOLERANCE, side
        assert (chain.last_bake.frames, chain.last_bake.bones) == (20, 2)
        assert chain.last_bake.max_error == pytest.approx(errors.max(), abs=1e-7)
    out = capsys.readouterr().out
    lines = out[out.index("Info: Baked 2 chains") :].splitlines()
    assert lines[0].startswith("Info: Baked 2 chains in ")
    assert lines[0].endswith("; on target on every frame")
    assert lines[1].startswith("Arm L: Baked frames 1-20 (20 keyed) of 2 bones")
    assert lines[2].startswith("Arm R: Baked frames 1-20 (20 keyed) of 2 bones")


def test_a_disabled_chain_keeps_its_keys_and_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    armature, _, _, (left, right) = two_chain_scene()
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    right_keys = {key: keys for key, keys in fcurve_keys(armature).items() if '"right.' in key[0]}
    right_summary = summary_values(right)
    right.enabled = False
    left.chain_length = 2
    capsys.readouterr()

    assert bpy.ops.fabrik.bake() == {"FINISHED"}

    assert {key: keys for key, keys in fcurve_keys(armature).items() if '"right.' in key[0]} == right_keys
    assert summary_values(right) == right_summary
    assert left.last_bake.bones == 2
    out = capsys.readouterr().out
    assert "Info: Baked frames 1-20 (20 keyed) of 2 bones" in out  # one chain: its line alone
    assert "right" not in out


def test_an_error_in_one_chain_writes_nothing_for_any() -> None:
    armature, names, _, chains = two_chain_scene()
    armature.pose.bones[names["right"][1]].constraints.new("COPY_ROTATION")
    before = data_snapshot()
    with pytest.raises(RuntimeError, match=r"Error: Bone 'right.001' has constraints .*Copy Rotation"):
        bpy.ops.fabrik.bake()
    assert data_snapshot() == before
    assert [chain.last_bake.frames for chain in chains] == [0, 0]

    # Found once the frames are read, after the checks: still nothing is written.
    constrained = armature.pose.bones[names["right"][1]]
    constrained.constraints.remove(constrained.constraints[0])
    broken = keyed_empty("Broken", [(1, (2.0, 0.5, 2.0)), (10, (float("nan"), 0.5, 2.0)), (20, (2.0, 0.5, 2.0))])
    chains[1].target = broken
    with pytest.raises(RuntimeError, match=r"Error: The target's location is not a number on frame \d+"):
        bpy.ops.fabrik.bake()
    assert armature.animation_data is None
    assert [chain.last_bake.frames for chain in chains] == [0, 0]


@pytest.mark.parametrize("build", [y_rig, limited_y], ids=["free Y", "Y of cones"])
def test_chains_that_share_bones_bake_and_preview_as_one_tree(build: object) -> None:
    """The chain list's chains that share a trunk bake, and preview, as one tree: every tip on its target
    and, with IK limits (targets from poses within them), every bone within its limits."""
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature, tips, bones = build()
    limits = read_limits([armature.pose.bones[name] for name in bones])
    targets = posed_targets(armature, tips, bones, FRAMES, clamp=limits.clamp)
    for tip, target in zip(tips, targets, strict=True):
        add_chain(armature, target=target, tip_bone=tip, chain_length=10, name=tip)
    activate(armature, "POSE")
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    for tip, target in zip(tips, targets, strict=True):
        branch = [b for b in bones if b.startswith(("trunk", tip.rsplit(".", 1)[0]))]
        assert tip_errors(armature, branch, target).max() <= TOLERANCE, tip
    assert keyed_bones(armature) == set(bones)
    assert limits.excess(evaluated(armature, FRAMES, bones)["quats"]).max() <= 1e-6

    bpy.ops.fabrik.clear()
    settings_of(armature).live_preview = True
    for frame in (5, 17):
        bpy.context.scene.frame_set(frame)
        bpy.context.view_layer.update()
        for tip, target in zip(tips, targets, strict=True):
            tail = armature.matrix_world @ armature.pose.bones[tip].tail
            assert (tail - target.matrix_world.translation).length <= TOLERANCE, (frame, tip)
        posed = np.array([armature.pose.bones[name].matrix_basis.to_quaternion() for name in bones])
        assert limits.excess(posed).max() <= 1e-6, frame


def test_one_undo_step_takes_back_every_chain() -> None:
    two_chain_scene()
    before = data_snapshot()
    bpy.ops.ed.undo_push(message="Two chains")

    assert bpy.ops.fabrik.bake("EXEC_DEFAULT", True) == {"FINISHED"}
    baked = data_snapshot()
    assert keyed_bones(bpy.data.objects["Rig"]) == {f"{side}.{i:03d}" for side in ("left", "right") for i in range(3)}
    bpy.ops.ed.undo()
    assert data_snapshot() == before
    bpy.ops.ed.redo()
    assert data_snapshot() == baked


def test_the_report_is_off_target_when_any_chain_is(capsys: pytest.CaptureFixture[str]) -> None:
    *_, (left, right) = two_chain_scene()
    far = keyed_empty("Far", [(1, (2.0, 1.0, 2.0)), (11, (2.0, 4.0, 2.0)), (20, (2.0, 1.0, 2.0))])
    right.target, right.name = far, "Reaching"

    assert bpy.ops.fabrik.bake() == {"FINISHED"}

    assert left.last_bake.off_target == 0
    assert right.last_bake.unreachable > 0
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if line.startswith("Info: Baked 2 chains"))
    assert head.endswith("; off target in 1 of them (Reaching)")
    assert "on target" not in head.replace("off target", "")
    assert "Reaching: Baked frames 1-20 (20 keyed) of 3 bones" in out
    assert f"off target on {right.last_bake.off_target} frames: out of reach on " in out
    summaries = [("left.002", left.last_bake), ("Reaching", right.last_bake)]
    assert bake_text(summaries, bpy.context.scene).splitlines()[0] == head.removeprefix("Info: ")


def test_clear_takes_the_keys_of_every_enabled_chain(capsys: pytest.CaptureFixture[str]) -> None:
    armature, _, _, (left, right) = two_chain_scene()
    third = add_chain(armature, target=left.target, tip_bone="left.001", enabled=False)  # never baked
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    assert third.last_bake.frames == 0
    assert keyed_bones(armature) == {f"{side}.{i:03d}" for side in ("left", "right") for i in range(3)}

    assert bpy.ops.fabrik.clear() == {"FINISHED"}
    assert keyed_bones(armature) == set()
    assert "Removed 480 rotation keys of the 2 chains in frames 1-20" in capsys.readouterr().out

    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    right.enabled = False
    assert bpy.ops.fabrik.clear() == {"FINISHED"}
    assert keyed_bones(armature) == {f"right.{i:03d}" for i in range(3)}
    assert bpy.ops.fabrik.clear() == {"CANCELLED"}
    assert "The chain has no rotation keys in frames 1-20" in capsys.readouterr().out


def test_the_list_numbers_the_trees_and_the_weight_reaches_the_bake() -> None:
    from fabrik_addon.blender.properties import chain_settings
    from fabrik_addon.blender.ui.chain_list import tree_numbers

    armature, tips, _ = y_rig()
    far = keyed_empty("Far", [(1, (3.0, 0.0, 1.0))])
    for tip in tips:
        add_chain(armature, target=far, tip_bone=tip, chain_length=10, name=tip)
    add_chain(armature, target=far, tip_bone="trunk.001", chain_length=1, name="alone")  # shares trunk.001
    chains = settings_of(armature).chains
    assert tree_numbers(armature) == {0: 1, 1: 1, 2: 1}
    chains[2].chain_length, chains[2].tip_bone = 1, tips[0]  # the tip bone alone: still inside the left branch
    assert tree_numbers(armature) == {0: 1, 1: 1, 2: 1}
    chains[2].enabled = False
    assert tree_numbers(armature) == {0: 1, 1: 1}
    chains[0].weight = 3.0
    assert chain_settings(armature, chains[0]).weight == 3.0


def test_bake_ik_constraints_from_the_panel(capsys: pytest.CaptureFixture[str]) -> None:
    armature, names, targets, _ = two_chain_scene()
    settings_of(armature).chains.clear()
    for side in ("left", "right"):
        ik = armature.pose.bones[names[side][-1]].constraints.new("IK")
        ik.target, ik.chain_count = targets[side], 3
    activate(armature, "POSE")
    assert bpy.ops.fabrik.bake_ik_constraints() == {"FINISHED"}
    out = capsys.readouterr().out
    assert "Baked 2 IK constraints in" in out
    assert "on target on every frame" in out
    for side in ("left", "right"):
        assert tip_errors(armature, names[side], targets[side]).max() <= TOLERANCE
        assert armature.pose.bones[names[side][-1]].constraints[0].mute
    with pytest.raises(RuntimeError, match="has no IK constraint that is on to bake"):
        bpy.ops.fabrik.bake_ik_constraints()  # all muted now
    armature.pose.bones[names["right"][-1]].constraints[0].mute = False
    assert bpy.ops.fabrik.bake_ik_constraints() == {"FINISHED"}
    assert "Baked 1 IK constraint in" in capsys.readouterr().out  # one constraint, in the singular
