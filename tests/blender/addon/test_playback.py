"""Solve Now, Key Current Frame and Step Through Iterations in real Blender: poses read back from Blender's
evaluation, no keys but Key Current Frame's, one undo step, the pose put back on leaving and on unregistering,
the overlay's draw handler added and removed without a screen."""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import numpy as np
import pytest

import fabrik_addon
from fabrik_addon.blender import compat
from fabrik_addon.blender.live import LIVE, player, preview
from fabrik_addon.blender.properties import settings_of
from fabrik_addon.blender.rig import KeyWriter
from fabrik_addon.solver import soften_reach

from ..oracle import FloatArray, data_snapshot, fcurve_keys
from .scenes import activate, chain_scene

TOLERANCE = 1e-3


def world_joints(armature: bpy.types.Object, names: list[str]) -> FloatArray:
    """The chain's bone heads and its tip's tail in world space, as Blender evaluated them last."""
    bones = [armature.pose.bones[name] for name in names]
    points = [armature.matrix_world @ bone.head for bone in bones] + [armature.matrix_world @ bones[-1].tail]
    return np.array(points)


def pose_values(armature: bpy.types.Object) -> list[tuple[float, ...]]:
    return [
        (*bone.location, *bone.rotation_quaternion, *bone.rotation_euler, *bone.scale) for bone in armature.pose.bones
    ]


def bent_scene(frame: int = 7) -> tuple[bpy.types.Object, list[str], bpy.types.Object]:
    """``chain_scene`` at ``frame`` with the middle bone turned by hand (not keyed)."""
    armature, names, target, _ = chain_scene()
    bpy.context.scene.frame_set(frame)
    armature.pose.bones[names[1]].rotation_quaternion = (math.cos(0.3), math.sin(0.3), 0.0, 0.0)
    bpy.context.view_layer.update()
    return armature, names, target


def test_solve_now_poses_the_chain_at_the_current_frame_without_keys(capsys: pytest.CaptureFixture[str]) -> None:
    armature, names, target = bent_scene()
    before = data_snapshot()
    assert bpy.ops.fabrik.solve_now() == {"FINISHED"}
    bpy.context.view_layer.update()
    tip = world_joints(armature, names)[-1]
    assert np.linalg.norm(tip - np.array(target.matrix_world.translation)) <= TOLERANCE
    assert data_snapshot() == before  # no keys, no Action
    out = capsys.readouterr().out
    assert "Solved at frame 7:" in out
    assert "iterations, error" in out
    assert "(on target)" in out


def test_solve_now_is_one_undo_step() -> None:
    armature, names, _ = bent_scene()
    bpy.ops.ed.undo_push(message="Turn the middle bone")  # what the UI does after every change
    before = world_joints(armature, names)
    # As a button calls it: operators called from Python push an undo step only when asked to.
    assert bpy.ops.fabrik.solve_now("EXEC_DEFAULT", True) == {"FINISHED"}
    bpy.context.view_layer.update()
    solved = world_joints(armature, names)
    assert np.abs(solved - before).max() > 0.01
    bpy.ops.ed.undo()
    armature = bpy.data.objects["Rig"]
    bpy.context.view_layer.update()
    np.testing.assert_allclose(world_joints(armature, names), before, atol=1e-6)


def test_solve_now_names_a_chain_it_cannot_solve_and_changes_nothing() -> None:
    armature, names, _ = bent_scene()
    settings_of(armature).chains[0].tip_bone = "missing"
    with pytest.raises(RuntimeError, match="Armature 'Rig' has no bone 'missing'"):
        bpy.ops.fabrik.solve_now()
    settings_of(armature).chains[0].tip_bone = names[-1]
    settings_of(armature).chains[0].chain_length = 9
    before = pose_values(armature)
    with pytest.raises(RuntimeError, match=r"bone\.002: Chain Length 9 is longer than the chain"):  # the panel's words
        bpy.ops.fabrik.solve_now()
    assert pose_values(armature) == before


def test_key_current_frame_keys_the_pose_solve_now_made() -> None:
    armature, names, target = bent_scene()
    assert bpy.ops.fabrik.solve_now() == {"FINISHED"}
    assert fcurve_keys(armature) == {}
    assert bpy.ops.fabrik.key_current_frame() == {"FINISHED"}
    keys = fcurve_keys(armature)
    assert {path for path, _ in keys} == {f'pose.bones["{name}"].rotation_quaternion' for name in names}
    assert all([frame for frame, _ in frames] == [7.0] for frames in keys.values())
    armature.pose.bones[names[1]].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)  # the keys pose it again
    bpy.context.scene.frame_set(7)
    tip = world_joints(armature, names)[-1]
    assert np.linalg.norm(tip - np.array(target.matrix_world.translation)) <= TOLERANCE


def test_key_current_frame_keys_all_the_chains_bones_or_none(monkeypatch: pytest.MonkeyPatch) -> None:
    armature, _, _ = bent_scene()
    bpy.ops.fabrik.solve_now()
    replace = KeyWriter.replace
    calls = []

    def failing_late(self: KeyWriter, *args: object, **kwargs: object) -> None:
        calls.append(args[0])
        if len(calls) == 6:  # the second bone's second channel
            raise RuntimeError("F-Curve is locked")
        replace(self, *args, **kwargs)

    monkeypatch.setattr(KeyWriter, "replace", failing_late)
    with pytest.raises(RuntimeError, match="Nothing keyed: F-Curve is locked"):
        bpy.ops.fabrik.key_current_frame()
    assert fcurve_keys(armature) == {}
    assert armature.animation_data is None or armature.animation_data.action is None


def test_key_current_frame_keys_nothing_into_a_locked_f_curve() -> None:
    armature, names, _ = bent_scene()
    bpy.ops.fabrik.solve_now()
    bpy.ops.fabrik.key_current_frame()
    keys = fcurve_keys(armature)
    locked = next(c for c in compat.assigned_fcurves(armature) if c.data_path.startswith(f'pose.bones["{names[2]}"]'))
    locked.lock = True
    bpy.context.scene.frame_set(9)
    bpy.ops.fabrik.solve_now()
    with pytest.raises(RuntimeError, match=r"Nothing keyed: .* is locked: unlock it first"):
        bpy.ops.fabrik.key_current_frame()
    assert fcurve_keys(armature) == keys


def test_step_through_says_how_many_steps_or_that_the_tip_is_on_target_already(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bent_scene()
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    steps = len(LIVE.session.steps.names) - 1 if LIVE.session else 0
    assert steps > 1
    assert f"Info: {steps} steps to step through at frame 7" in capsys.readouterr().out
    bpy.ops.fabrik.step_leave()
    assert bpy.ops.fabrik.solve_now() == {"FINISHED"}  # the tip on the target, unkeyed
    capsys.readouterr()
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    out = capsys.readouterr().out
    assert "The tip is on target at frame 7 already (within the tolerance): no step to take" in out
    assert "0 steps" not in out


@pytest.mark.parametrize("method", ["fabrik", "ccd"])
def test_each_step_poses_the_chain_where_the_history_has_it(method: str) -> None:
    armature, names, target = bent_scene()
    settings_of(armature).method = method.upper()
    before, keys = pose_values(armature), data_snapshot()
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    session = LIVE.session
    assert session is not None
    steps = session.steps
    np.testing.assert_allclose(steps.target, np.array(target.matrix_world.translation), atol=1e-6)
    first = {"fabrik": "toward the target", "ccd": "turn about joint 2"}[method]
    assert steps.names[:2] == ("start", first)
    state = bpy.context.window_manager.fabrik_playback
    for step in range(len(steps.names)):
        state.step = step
        assert state.step == step
        bpy.context.view_layer.update()
        np.testing.assert_allclose(world_joints(armature, names), steps.world[step], atol=1e-5)
    assert steps.distances[-1] <= TOLERANCE  # the last step of this solve is on target (the best pose)
    if method == "fabrik":  # the pass toward the target moves the root off its place, by its Location
        assert np.linalg.norm(steps.world[1, 0] - steps.world[0, 0]) > 1e-3
    state.step = 10_000
    assert state.step == len(steps.names) - 1  # clamped
    assert data_snapshot() == keys  # stepping keys nothing
    with pytest.raises(RuntimeError, match="Leave Step Through Iterations first"):
        bpy.ops.fabrik.key_current_frame()
    assert bpy.ops.fabrik.step_leave() == {"FINISHED"}
    assert LIVE.session is None
    assert pose_values(armature) == before


def test_a_limited_chain_steps_through_solve_pose_passes() -> None:
    armature, names, _ = bent_scene()
    for name in names[1:]:
        bone = armature.pose.bones[name]
        bone.use_ik_limit_x, bone.ik_min_x, bone.ik_max_x = True, -1.2, 1.2
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    session = LIVE.session
    assert session is not None
    assert session.steps.names[-1] == "solved"
    assert "toward the target" in session.steps.names
    for step in range(len(session.steps.names)):
        bpy.context.window_manager.fabrik_playback.step = step
        bpy.context.view_layer.update()
        np.testing.assert_allclose(world_joints(armature, names), session.steps.world[step], atol=1e-5)
    bpy.ops.fabrik.step_leave()


def test_fabrik_takes_fewer_steps_of_the_slider_than_ccd_here() -> None:
    armature, _, _ = bent_scene()
    counts = {}
    for method in ("fabrik", "ccd"):
        settings_of(armature).method = method.upper()
        assert bpy.ops.fabrik.step_through() == {"FINISHED"}
        session = LIVE.session
        assert session is not None
        counts[method] = len(session.steps.names)
    bpy.ops.fabrik.step_leave()
    assert counts["fabrik"] < counts["ccd"]


def test_play_steps_on_a_timer_to_the_last_step() -> None:
    armature, names, _ = bent_scene()
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    session = LIVE.session
    assert session is not None
    assert bpy.ops.fabrik.step_play() == {"FINISHED"}
    assert player.playing()
    bpy.context.window_manager.fabrik_playback.seconds_per_step = 0.25
    waits = []
    while (wait := player.advance()) is not None:  # what the timer calls (no event loop headless)
        waits.append(wait)
    assert waits == [0.25] * (len(session.steps.names) - 2)
    assert LIVE.step == len(session.steps.names) - 1
    bpy.context.view_layer.update()
    np.testing.assert_allclose(world_joints(armature, names), session.steps.world[-1], atol=1e-5)
    assert bpy.ops.fabrik.step_play() == {"FINISHED"}  # pauses
    assert not player.playing()


def test_the_overlay_is_drawn_only_with_a_screen_and_removed_without_error() -> None:
    bent_scene()
    assert bpy.app.background  # no screen is drawn
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    assert not player.overlay_shown()  # headless: stepping only poses
    player.show_overlay(True)
    player.show_overlay(True)  # once only
    assert player.overlay_shown()
    bpy.ops.fabrik.step_leave()
    assert not player.overlay_shown()


def test_the_live_preview_leaves_a_stepped_pose_alone() -> None:
    armature, names, target = bent_scene()
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    session = LIVE.session
    assert session is not None
    bpy.context.window_manager.fabrik_playback.step = 1
    settings_of(armature).live_preview = True  # (turning it on poses the previewed chains at once)
    target.location.x += 0.1
    bpy.context.view_layer.update()
    np.testing.assert_allclose(world_joints(armature, names), session.steps.world[1], atol=1e-5)
    bpy.ops.fabrik.step_leave()
    bpy.context.view_layer.update()
    assert not preview.follow(armature, 7)  # previewed again: the update after leaving posed it


def test_a_chain_without_target_is_named_and_nothing_changes() -> None:
    armature, _, _ = bent_scene()
    settings_of(armature).chains[0].target = None
    before = pose_values(armature)
    with pytest.raises(RuntimeError, match="Pick a target object"):
        bpy.ops.fabrik.step_through()
    assert LIVE.session is None
    assert pose_values(armature) == before


def test_unregistering_while_stepping_leaves_nothing_behind() -> None:
    armature, _, _ = bent_scene()
    before = pose_values(armature)
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    bpy.context.window_manager.fabrik_playback.step = 2
    bpy.ops.fabrik.step_play()
    player.show_overlay(True)
    assert pose_values(armature) != before
    fabrik_addon.unregister()
    assert pose_values(armature) == before
    assert LIVE.session is None
    assert not player.overlay_shown()
    assert not bpy.app.timers.is_registered(player.advance)
    assert not hasattr(bpy.context.window_manager, "fabrik_playback")
    for handlers in ("load_pre", "undo_pre", "redo_pre", "frame_change_pre", "save_pre", "save_post"):
        assert not any(
            getattr(h, "__module__", "").startswith("fabrik_addon") for h in getattr(bpy.app.handlers, handlers)
        )


def test_a_new_frame_ends_stepping_with_the_pose_put_back_first() -> None:
    armature, _, _ = bent_scene()
    before = pose_values(armature)
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    bpy.context.window_manager.fabrik_playback.step = 1
    assert pose_values(armature) != before
    bpy.context.scene.frame_set(8)
    assert LIVE.session is None
    assert pose_values(armature) == before  # the bones are not keyed: the pose found stays
    assert bpy.ops.fabrik.bake.poll()  # and the bake may run again


def test_bake_clear_and_key_wait_until_stepping_ends() -> None:
    bent_scene()
    keys = data_snapshot()
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    for operator in (bpy.ops.fabrik.bake, bpy.ops.fabrik.clear, bpy.ops.fabrik.bake_ik_constraints):
        with pytest.raises(RuntimeError, match="Leave Step Through Iterations first"):
            operator()
    assert data_snapshot() == keys
    bpy.ops.fabrik.step_leave()
    assert bpy.ops.fabrik.bake() == {"FINISHED"}


def test_leaving_puts_back_only_the_chains_bones() -> None:
    armature, names, _ = bent_scene()
    settings_of(armature).chains[0].chain_length = 2  # names[0] is not in the chain
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    bpy.context.window_manager.fabrik_playback.step = 2
    turned = (math.cos(0.2), 0.0, math.sin(0.2), 0.0)
    armature.pose.bones[names[0]].rotation_quaternion = turned  # posed by hand meanwhile
    found = [tuple(armature.pose.bones[name].rotation_quaternion) for name in names[1:]]
    bpy.ops.fabrik.step_leave()
    assert tuple(armature.pose.bones[names[0]].rotation_quaternion) == pytest.approx(turned)
    after = [tuple(armature.pose.bones[name].rotation_quaternion) for name in names[1:]]
    assert after != found  # the chain's bones are back at the pose found before stepping


def test_deleting_the_armature_while_stepping_ends_the_session() -> None:
    armature, _, _ = bent_scene()
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    assert bpy.ops.fabrik.step_play() == {"FINISHED"}
    player.show_overlay(True)
    bpy.data.objects.remove(armature)
    assert player.advance() is None  # the timer's next call ends it
    assert LIVE.session is None
    assert not player.overlay_shown()
    assert not bpy.app.timers.is_registered(player.advance)
    assert not bpy.ops.fabrik.step_leave.poll()
    player.leave()  # and leaving again is harmless


@pytest.mark.parametrize("change", ["rename a chain bone", "add a bone in Edit Mode"])
def test_a_chain_edited_while_stepping_gets_the_pose_found_back(change: str) -> None:
    """Renaming a chain bone ends the session at the slider's next move; a bone added in Edit Mode changes the
    pose's bones: either way the chain's bones get back the pose found (the root's Location too), and the
    new bone keeps its own."""
    armature, names, _ = bent_scene()
    before = pose_values(armature)
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    playback = bpy.context.window_manager.fabrik_playback
    playback.step = 1
    assert pose_values(armature) != before
    if change == "rename a chain bone":
        armature.data.bones[names[0]].name = "renamed"
    else:
        activate(armature, "EDIT")
        extra = armature.data.edit_bones.new("extra")
        extra.head, extra.tail = (1.0, 0.0, 0.0), (1.0, 0.0, 1.0)
        activate(armature)
        armature.pose.bones["extra"].location = (0.0, 0.5, 0.0)
    playback.step = 2
    if LIVE.session is not None:
        assert bpy.ops.fabrik.step_leave() == {"FINISHED"}
    assert LIVE.session is None
    after = pose_values(armature)
    assert after[: len(before)] == before
    assert after[len(before) :] == (
        [] if change == "rename a chain bone" else [(0.0, 0.5, 0.0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1)]
    )


def test_a_file_saved_while_stepping_holds_the_pose_found(tmp_path: Path) -> None:
    armature, _, _ = bent_scene()
    before = pose_values(armature)
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    bpy.context.window_manager.fabrik_playback.step = 1
    stepped = pose_values(armature)
    path = tmp_path / "stepping.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    assert pose_values(armature) == stepped  # still stepping, at the same step
    assert LIVE.session is not None
    with bpy.data.libraries.load(str(path)) as (_, into):
        into.objects = ["Rig"]
    saved = into.objects[0]
    assert saved is not armature
    assert pose_values(saved) == before
    bpy.ops.fabrik.step_leave()


def test_soft_reach_eases_solve_now_and_the_last_step_alike() -> None:
    """With the target inside the chain's soft reach, Solve Now leaves the tip short of it, on the line to it,
    where ``soften_reach`` puts the goal; Step Through Iterations ends on the same pose."""
    armature, names, target = bent_scene()
    root = world_joints(armature, names)[0]
    goal = np.array(target.matrix_world.translation)
    distance = float(np.linalg.norm(goal - root))
    chain = settings_of(armature).chains[0]
    chain.soft_reach = 3.0 - distance + 0.2  # the chain is 3 long: the goal 0.2 into the easing
    assert bpy.ops.fabrik.solve_now() == {"FINISHED"}
    bpy.context.view_layer.update()
    solved = world_joints(armature, names)
    eased = soften_reach(goal - root, 3.0, chain.soft_reach) + root
    np.testing.assert_allclose(solved[-1], eased, atol=2 * TOLERANCE)
    assert np.linalg.norm(solved[-1] - goal) > 10 * TOLERANCE
    bpy.context.scene.frame_set(bpy.context.scene.frame_current)  # back to the animation's pose
    assert bpy.ops.fabrik.step_through() == {"FINISHED"}
    session = LIVE.session
    assert session is not None
    np.testing.assert_allclose(session.steps.world[-1], solved, atol=1e-4)
    bpy.ops.fabrik.step_leave()
