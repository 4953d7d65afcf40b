"""What the live preview keeps between updates and what it solves: its plan of an armature (the chains checked,
grouped and ordered) is made once and made again when a setting or the rig changes, or after an undo, so that
what it poses then equals what a plan made afresh poses; an update that touches nothing a chain reads solves
nothing, and a frame change solves each unit once."""

from __future__ import annotations

from collections.abc import Callable

import bpy
import numpy as np
import pytest
from numpy.typing import NDArray
from rigs import keyed_empty, link, loop_path

from fabrik_addon.blender import setting_changes
from fabrik_addon.blender.bake import Unit
from fabrik_addon.blender.live import LIVE, preview
from fabrik_addon.blender.live.rig_plan import settings_key
from fabrik_addon.blender.properties import FABRIK_PG_chain, FABRIK_PG_settings, settings_of
from fabrik_addon.blender.rig import PoseSnapshot

from .scenes import activate, add_chain, chain_scene, two_chain_scene

TOLERANCE = 1e-3
SPOTS = [(1.0, 0.5, 1.5), (0.5, 1.0, 2.0), (-1.2, 0.3, 1.0), (0.2, -0.8, 2.5)]


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The bones of every unit solved (``Unit.solve``), in order."""
    calls: list[tuple[str, ...]] = []
    original = Unit.solve

    def counted(self: Unit, *args: object) -> object:
        calls.append(self.bone_names)
        return original(self, *args)

    monkeypatch.setattr(Unit, "solve", counted)
    return calls


@pytest.fixture
def plans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The armatures the preview made a plan for, one name per plan made."""
    made: list[str] = []
    original = preview.make_plan

    def counted(armature: bpy.types.Object) -> object:
        made.append(armature.name)
        return original(armature)

    monkeypatch.setattr(preview, "make_plan", counted)
    return made


def still_chain(bones: int = 3) -> tuple[bpy.types.Object, list[str], bpy.types.Object]:
    armature, names, target, _ = chain_scene(bones)
    target.animation_data_clear()
    return armature, names, target


def pose_values(armature: bpy.types.Object) -> dict[str, NDArray[np.float32]]:
    """Every pose bone's own transform values, as Blender keeps them (float32)."""
    values = {}
    bones = armature.pose.bones
    for name, width in (("location", 3), ("rotation_quaternion", 4), ("rotation_euler", 3), ("scale", 3)):
        buffer = np.empty(len(bones) * width, dtype=np.float32)
        bones.foreach_get(name, buffer)
        values[name] = buffer
    return values


def assert_as_fresh(armature: bpy.types.Object, edit: Callable[[], None], move: Callable[[], None]) -> None:
    """Make ``edit`` (a change of the settings or the rig), then ``move`` (a goal) and update: the pose the preview
    gives then is the pose a plan made afresh gives from the same start (the preview's own plan, had it kept an
    old one, would give another). The start is taken after the edit, which may change the pose itself (a new
    rotation mode converts the rotation)."""
    edit()
    before = PoseSnapshot.take(armature)
    move()
    bpy.context.view_layer.update()
    posed = pose_values(armature)
    uid = armature.session_uid
    preview.pause(uid, True)
    try:
        before.restore()
        armature.update_tag()
        bpy.context.view_layer.update()
        fresh = preview.pose_chains(armature, bpy.context.scene.frame_current)
        assert not fresh.problems
        assert fresh.changed
    finally:
        preview.pause(uid, False)
    again = pose_values(armature)
    for name, values in posed.items():
        np.testing.assert_array_equal(values, again[name], err_msg=name)


def test_an_update_that_touches_nothing_the_chains_read_solves_nothing(solves: list[tuple[str, ...]]) -> None:
    armature, names, target = still_chain()
    settings_of(armature).live_preview = True  # (turning it on poses the chain at once)
    solves.clear()
    target.location = SPOTS[0]
    bpy.context.view_layer.update()
    assert len(solves) == 1
    solves.clear()
    other = link(bpy.data.objects.new("Other", None))
    for x in range(5):
        other.location = (x, 0.0, 0.0)
        bpy.context.view_layer.update()
    for frame in (3, 9, 4):  # nothing is animated
        bpy.context.scene.frame_set(frame)
    assert solves == []
    assert not preview.follow(armature, 4)  # asked outright, it finds the chain's inputs as it left them
    assert solves == []
    for spot in SPOTS[1:]:
        target.location = spot
        bpy.context.view_layer.update()
    assert solves == [tuple(names)] * 3


def test_each_frame_change_solves_each_unit_once(solves: list[tuple[str, ...]]) -> None:
    armature, names, _, _ = two_chain_scene()
    add_chain(armature, target=keyed_empty("Other", loop_path(range(1, 21), (2.5, 0.3, 1.8), (0.3, 0.2, 0.2))))
    settings_of(armature).chains[2].tip_bone = "right.001"  # shares bones with the right chain: one tree
    settings_of(armature).live_preview = True
    for frame in range(2, 12):
        solves.clear()
        bpy.context.scene.frame_set(frame)
        assert sorted(solves) == sorted([tuple(names["left"]), ("right.000", "right.001", "right.002")]), frame
    assert preview.problems(armature) == {}


def test_a_unit_whose_inputs_did_not_change_is_not_solved_again(solves: list[tuple[str, ...]]) -> None:
    """A chain with a pole is never taken as settled (the pole may turn it): it is solved again only when
    something it reads changes, not when another chain of its armature moves."""
    armature, names, targets, chains = two_chain_scene()
    for target in targets.values():
        target.animation_data_clear()
    pole = link(bpy.data.objects.new("Pole", None))
    pole.location = (-4.0, 0.0, 1.0)
    chains[0].pole_target = pole
    settings_of(armature).live_preview = True
    bpy.context.view_layer.update()  # the pole's place evaluated: the left chain turns to it
    solves.clear()
    for spot in SPOTS:
        targets["right"].location = (spot[0] + 2.0, *spot[1:])
        bpy.context.view_layer.update()
    assert solves == [tuple(names["right"])] * len(SPOTS)
    pole.location = (-4.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    assert solves[-1] == tuple(names["left"])


def test_the_plan_is_kept_between_updates_and_frames(plans: list[str]) -> None:
    armature, _, target, _ = chain_scene()
    settings_of(armature).live_preview = True
    for frame in range(2, 8):
        bpy.context.scene.frame_set(frame)
    for spot in SPOTS:  # (its animation puts it back on the next frame change)
        target.location = spot
        bpy.context.view_layer.update()
    assert plans == ["Rig"]


def test_every_setting_shown_is_part_of_what_the_plan_was_made_from() -> None:
    """A setting the preview is not told about (animated, or added to the settings later) still makes a new
    plan: the plan's key holds every setting the panel can show, of the armature and of each chain."""
    armature, *_ = chain_scene()
    settings = settings_of(armature)
    for group, cls in ((settings, FABRIK_PG_settings), (settings.chains[0], FABRIK_PG_chain)):
        for prop in cls.bl_rna.properties:
            if prop.is_hidden or prop.identifier in {"rna_type", "name", "chains"} or prop.is_readonly:
                continue
            before = settings_key(armature)
            value = getattr(group, prop.identifier)
            if prop.type == "BOOLEAN":
                setattr(group, prop.identifier, not value)
            elif prop.type == "ENUM":
                setattr(group, prop.identifier, next(i.identifier for i in prop.enum_items if i.identifier != value))
            elif prop.type == "POINTER":
                setattr(group, prop.identifier, None if value is not None else armature)
            elif prop.type == "STRING":
                setattr(group, prop.identifier, value + "x")
            else:
                step = 1 if prop.type == "INT" else 0.01
                setattr(group, prop.identifier, value + step if value + step <= prop.hard_max else value - step)
            assert settings_key(armature) != before, prop.identifier


def test_a_setting_changed_unannounced_is_solved_with(plans: list[str]) -> None:
    """With the settings' listener away (as when a setting is animated), a changed pole angle still makes a
    new plan at the next update, and the pose is the one a fresh plan gives."""
    armature, _, target = still_chain()
    pole = link(bpy.data.objects.new("Pole", None))
    pole.location = (2.0, 0.0, 1.0)
    chain = settings_of(armature).chains[0]
    chain.pole_target = pole
    settings_of(armature).live_preview = True
    target.location = (0.2, 0.1, 2.2)
    bpy.context.view_layer.update()
    setting_changes.unsubscribe(preview._setting_changed)
    try:

        def edit() -> None:
            chain.pole_angle = 1.2

        def move() -> None:
            target.location = (0.3, 0.1, 2.1)

        assert_as_fresh(armature, edit, move)
    finally:
        setting_changes.subscribe(preview._setting_changed)
    assert len(plans) >= 2


@pytest.mark.parametrize("edit", ["IK limit", "rotation mode", "IK stretch", "Edit Mode"])
def test_a_rig_edit_is_solved_with_at_once(edit: str) -> None:
    armature, names, target = still_chain(4)
    chain = settings_of(armature).chains[0]
    settings_of(armature).live_preview = True
    target.location = SPOTS[0]
    bpy.context.view_layer.update()
    bone = armature.pose.bones[names[1]]

    def change() -> None:
        if edit == "IK limit":
            bone.use_ik_limit_x = bone.use_ik_limit_z = True
            bone.ik_min_x, bone.ik_max_x, bone.ik_min_z, bone.ik_max_z = -0.2, 0.2, -0.2, 0.2
        elif edit == "rotation mode":
            bone.rotation_mode = "ZXY"
        elif edit == "IK stretch":
            chain.use_stretch = True  # (the listener makes a new plan: the shares are what is new)
            for name in names:
                armature.pose.bones[name].ik_stretch = 0.4
        else:
            activate(armature, "EDIT")
            armature.data.edit_bones[names[2]].tail.z += 0.5
            activate(armature)

    def move() -> None:
        target.location = (0.0, 5.0, 2.0) if edit == "IK stretch" else SPOTS[1]

    assert_as_fresh(armature, change, move)
    assert preview.problems(armature) == {}


def test_a_constraint_added_to_a_chain_bone_is_refused_at_once() -> None:
    armature, names, target = still_chain()
    settings_of(armature).live_preview = True
    target.location = SPOTS[0]
    bpy.context.view_layer.update()
    armature.pose.bones[names[1]].constraints.new("COPY_ROTATION")
    target.location = SPOTS[1]
    bpy.context.view_layer.update()
    assert "constraints that would override" in preview.problems(armature)[0]


def test_a_chain_bone_renamed_is_named_at_once() -> None:
    armature, names, target = still_chain()
    settings_of(armature).live_preview = True
    target.location = SPOTS[0]
    bpy.context.view_layer.update()
    armature.data.bones[names[-1]].name = "renamed"
    target.location = SPOTS[1]
    bpy.context.view_layer.update()
    assert preview.problems(armature)[0].startswith(f"armature 'Rig' has no bone '{names[-1]}'")


def test_after_an_undo_the_preview_solves_as_a_fresh_plan() -> None:
    armature, names, target = still_chain(4)
    settings_of(armature).live_preview = True
    target.location = SPOTS[0]
    bpy.context.view_layer.update()
    bpy.ops.ed.undo_push(message="Preview on")
    bone = armature.pose.bones[names[1]]
    bone.use_ik_limit_x, bone.ik_min_x, bone.ik_max_x = True, -0.1, 0.1
    target.location = SPOTS[1]
    bpy.context.view_layer.update()
    bpy.ops.ed.undo_push(message="Limited")
    assert LIVE.plans
    bpy.ops.ed.undo()
    assert not any(plan.armature == armature for plan in LIVE.plans.values())  # the old armature's is gone
    armature, target = bpy.data.objects["Rig"], bpy.data.objects["Target"]
    assert not armature.pose.bones[names[1]].use_ik_limit_x

    def move() -> None:
        target.location = SPOTS[2]

    assert_as_fresh(armature, lambda: None, move)


def test_a_target_made_to_follow_the_chain_is_refused_at_once() -> None:
    """Parenting the target to a chain bone changes the scene's relations, not the rig: the plan is made again,
    and the bake's check refuses the chain (the target would run away from the tip following it)."""
    armature, names, target = still_chain()
    other = link(bpy.data.objects.new("Other", None))  # moved with the target: every object is touched
    settings_of(armature).live_preview = True
    target.location = SPOTS[0]
    bpy.context.view_layer.update()
    assert preview.problems(armature) == {}
    target.parent, target.parent_type, target.parent_bone = armature, "BONE", names[1]
    target.location = SPOTS[1]
    other.location = SPOTS[1]
    bpy.context.view_layer.update()
    assert "which the chain moves" in preview.problems(armature)[0]


def test_soft_reach_turned_on_eases_a_chain_already_on_its_target() -> None:
    """A tip on its target near full reach is not left there when soft reach is turned on: the chain is solved
    again at once and eases in, as a plan made afresh from that pose has it."""
    armature, names, target = still_chain()
    settings_of(armature).live_preview = True
    target.location = (0.0, 0.3, 2.95)  # 2.97 from the root of a chain 3 long
    bpy.context.view_layer.update()
    tip = np.array(armature.matrix_world @ armature.pose.bones[names[-1]].tail)
    assert np.linalg.norm(tip - np.array(target.location)) <= TOLERANCE
    on_target = PoseSnapshot.take(armature)
    settings_of(armature).chains[0].soft_reach = 0.5  # the preview solves at once (the settings' listener)
    bpy.context.view_layer.update()
    tip = np.array(armature.matrix_world @ armature.pose.bones[names[-1]].tail)
    assert np.linalg.norm(tip - np.array(target.location)) > 0.01  # eased in
    posed = pose_values(armature)
    preview.pause(armature.session_uid, True)
    on_target.restore()
    armature.update_tag()
    bpy.context.view_layer.update()
    assert preview.pose_chains(armature, 1).changed
    preview.pause(armature.session_uid, False)
    for name, values in pose_values(armature).items():
        np.testing.assert_array_equal(values, posed[name], err_msg=name)
