"""The live preview: the chain follows the target as Blender updates the scene, without keys, and stops when
turned off. Blender's evaluation is the oracle: move the Empty, update the depsgraph, read the tip."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import bpy
import numpy as np
import pytest
from rigs import keyed_empty, loop_path, y_rig

from fabrik_addon import api
from fabrik_addon.blender.live import preview
from fabrik_addon.blender.properties import settings_of

from ..oracle import FloatArray, data_snapshot, fcurve_keys
from .scenes import add_chain, chain_scene, two_chain_scene

TOLERANCE = 1e-3
SPOTS = [(1.0, 0.5, 1.5), (0.5, 1.0, 2.0), (-1.2, 0.3, 1.0), (0.2, -0.8, 2.5)]


def tip_and_target(armature: bpy.types.Object, tip_bone: str) -> tuple[FloatArray, FloatArray]:
    """World positions of the tip bone's tail and of the target of the chain ending there, as Blender evaluated
    them last."""
    tip = armature.matrix_world @ armature.pose.bones[tip_bone].tail
    chain = next(chain for chain in settings_of(armature).chains if chain.tip_bone == tip_bone)
    return np.array(tip), np.array(chain.target.matrix_world.translation)


def still_target() -> tuple[bpy.types.Object, list[str], bpy.types.Object]:
    """A 3-bone chain and an unanimated Empty, with the preview's settings filled in."""
    armature, names, target, _ = chain_scene()
    target.animation_data_clear()
    return armature, names, target


@pytest.fixture
def updates() -> Iterator[list[int]]:
    """Counts depsgraph_update_post calls: a pose the preview writes is evaluated without another one."""
    calls: list[int] = []

    def count(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
        calls.append(1)

    bpy.app.handlers.depsgraph_update_post.append(count)
    yield calls
    bpy.app.handlers.depsgraph_update_post.remove(count)


def test_the_chain_follows_a_moving_target_and_stops_when_turned_off(updates: list[int]) -> None:
    armature, names, target = still_target()
    view_layer = bpy.context.view_layer
    before = data_snapshot()
    settings_of(armature).live_preview = True
    for spot in SPOTS:
        target.location = spot
        updates.clear()
        view_layer.update()
        tip, goal = tip_and_target(armature, names[-1])
        assert np.linalg.norm(tip - goal) <= TOLERANCE, spot
        # Blender evaluated the pose written in the handler in the same update, without calling the handlers
        # again, and left nothing to update: no ping-pong between the preview and the depsgraph.
        assert len(updates) == 1
        view_layer.update()
        assert len(updates) == 1
        assert not preview.follow(armature, 1)  # settled: solving again writes nothing
    assert data_snapshot() == before  # no keys, no Action

    settings_of(armature).live_preview = False
    held = tip_and_target(armature, names[-1])[0]
    target.location = SPOTS[0]
    view_layer.update()
    np.testing.assert_array_equal(tip_and_target(armature, names[-1])[0], held)


def test_the_chain_follows_on_every_frame_without_keys() -> None:
    armature, names, _, _ = chain_scene()
    settings_of(armature).live_preview = True
    before = fcurve_keys(armature)
    for frame in (1, 7, 13, 20, 4):
        bpy.context.scene.frame_set(frame)
        tip, goal = tip_and_target(armature, names[-1])
        assert np.linalg.norm(tip - goal) <= TOLERANCE, frame
    assert fcurve_keys(armature) == before == {}


def test_an_unreachable_target_points_the_chain_at_it_and_settles() -> None:
    armature, names, target = still_target()
    target.location = (0.0, 4.0, 2.0)
    settings_of(armature).live_preview = True
    bpy.context.view_layer.update()
    tip, goal = tip_and_target(armature, names[-1])
    root = np.array(armature.matrix_world @ armature.pose.bones[names[0]].head)
    assert np.linalg.norm(tip - root) == pytest.approx(3.0, abs=1e-4)  # stretched out
    np.testing.assert_allclose((tip - root) / 3.0, (goal - root) / np.linalg.norm(goal - root), atol=1e-4)
    assert not preview.follow(armature, 1)  # solving again gives the same pose, so nothing is written
    settings_of(armature).live_preview = False  # from here on, pose by hand
    target.location = (0.0, 4.0, 2.5)
    bpy.context.view_layer.update()
    assert preview.follow(armature, 1)


def test_with_stretch_the_chain_lengthens_to_a_target_beyond_it_and_gets_its_length_back() -> None:
    armature, names, target = still_target()
    for name in names:
        armature.pose.bones[name].ik_stretch = 0.5
    settings, chain = settings_of(armature), settings_of(armature).chains[0]
    chain.use_stretch = True
    before = data_snapshot()
    beyond = (0.0, 3.0, 2.0)  # 3.6 from the root; the chain is 3 long
    target.location = beyond
    settings.live_preview = True
    bpy.context.view_layer.update()

    def lengths() -> FloatArray:
        """Each bone's posed length (1 at rest), as Blender evaluates it: the children inherit the stretch."""
        bones = [armature.pose.bones[name] for name in names]
        return np.array([(bone.tail - bone.head).length for bone in bones])

    tip, goal = tip_and_target(armature, names[-1])
    assert np.linalg.norm(tip - goal) <= TOLERANCE
    assert (lengths() > 1.05).all()
    assert data_snapshot() == before  # posed, not keyed
    target.location = SPOTS[0]  # within reach: no stretch needed
    bpy.context.view_layer.update()
    np.testing.assert_allclose(lengths(), 1.0, atol=1e-6)
    assert np.linalg.norm(np.subtract(*tip_and_target(armature, names[-1]))) <= TOLERANCE

    target.location = beyond
    bpy.context.view_layer.update()
    assert (lengths() > 1.05).all()
    chain.use_stretch = False  # the bones get their length back, and the chain points at the target
    bpy.context.view_layer.update()
    assert preview.problems(armature) == {}
    np.testing.assert_allclose(lengths(), 1.0, atol=1e-6)
    tip, goal = tip_and_target(armature, names[-1])
    root = np.array(armature.matrix_world @ armature.pose.bones[names[0]].head)
    assert np.linalg.norm(tip - root) == pytest.approx(3.0, abs=1e-4)
    assert np.linalg.norm(tip - goal) == pytest.approx(np.linalg.norm(goal - root) - 3.0, abs=1e-3)


def test_a_problem_is_shown_instead_of_raised_and_clears_when_fixed() -> None:
    armature, names, target = still_target()
    settings, chain = settings_of(armature), settings_of(armature).chains[0]
    chain.tip_bone = "bone.9"
    settings.live_preview = True
    target.location = SPOTS[1]
    bpy.context.view_layer.update()  # a handler that raised would print a traceback and carry on
    assert preview.problems(armature).keys() == {0}
    assert preview.problems(armature)[0].startswith("armature 'Rig' has no bone 'bone.9'")
    chain.tip_bone = names[-1]
    bpy.context.view_layer.update()
    assert preview.problems(armature) == {}
    tip, goal = tip_and_target(armature, names[-1])
    assert np.linalg.norm(tip - goal) <= TOLERANCE
    chain.target = None
    bpy.context.view_layer.update()
    assert preview.problems(armature) == {0: "pick a target object"}
    settings.live_preview = False
    assert preview.problems(armature) == {}


def test_the_preview_follows_the_bakes_rules_ccd_is_refused_on_a_limited_chain() -> None:
    """The preview checks its settings as a bake does: CCD cannot honour IK limits, so the preview shows the
    bake's error instead of solving the chain some other way, and leaves the pose as it was."""
    armature, names, target = still_target()
    armature.pose.bones[names[1]].use_ik_limit_x = True
    settings = settings_of(armature)
    settings.method = "CCD"
    with pytest.raises(ValueError, match=r"Method \(method\) 'ccd' does not support joint limits") as refused:
        api.bake(armature, target, tip_bone=names[-1], method="ccd", frame_start=1, frame_end=1)
    pose = {name: tuple(armature.pose.bones[name].rotation_quaternion) for name in names}
    settings.live_preview = True
    target.location = SPOTS[0]
    bpy.context.view_layer.update()
    assert preview.problems(armature) == {0: str(refused.value)}
    assert {name: tuple(armature.pose.bones[name].rotation_quaternion) for name in names} == pose
    settings.method = "FABRIK"  # the same chain with FABRIK follows
    bpy.context.view_layer.update()
    tip, goal = tip_and_target(armature, names[-1])
    assert np.linalg.norm(tip - goal) <= TOLERANCE
    assert preview.problems(armature) == {}


def test_the_preview_leaves_a_bake_alone() -> None:
    """While a bake steps through frames the preview does not pose the chain: the bake reads and checks the
    chain's own animation. Handlers first and last in frame_change_post see whether the pose changed between."""
    armature, names, target, chain = chain_scene(bones=4)
    api.bake(armature, target, tip_bone=names[-1])
    chain.target = keyed_empty("Other", loop_path(range(1, 21), (0.5, -0.5, 2.0), (1.2, 1.0, 0.8)))
    settings_of(armature).live_preview = True
    bones = [armature.pose.bones[name] for name in names]
    seen: list[list[tuple[float, ...]]] = []
    posed: list[bool] = []

    def first(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
        seen.append([tuple(pb.rotation_quaternion) for pb in bones])

    def last(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
        posed.append([tuple(pb.rotation_quaternion) for pb in bones] != seen[-1])

    bpy.app.handlers.frame_change_post.insert(0, first)
    bpy.app.handlers.frame_change_post.append(last)
    try:
        bpy.context.scene.frame_set(5)
        assert posed == [True]  # the probe sees the preview pose the chain away from its keys
        posed.clear()
        assert bpy.ops.fabrik.bake() == {"FINISHED"}
    finally:
        bpy.app.handlers.frame_change_post.remove(first)
        bpy.app.handlers.frame_change_post.remove(last)
    assert len(posed) >= 2 * 20  # reading the scene, then checking the keys
    assert not any(posed)


def test_the_preview_survives_loading_a_file(tmp_path: Path) -> None:
    armature, names, target = still_target()
    settings_of(armature).live_preview = True
    path = tmp_path / "preview.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)  # another file, without a preview, in between
    empty = bpy.data.objects.new("Empty", None)
    bpy.context.scene.collection.objects.link(empty)
    bpy.context.view_layer.update()
    bpy.ops.wm.open_mainfile(filepath=str(path))

    armature, target = bpy.data.objects["Rig"], bpy.data.objects["Target"]
    assert settings_of(armature).live_preview
    for spot in SPOTS[2:]:
        target.location = spot
        bpy.context.view_layer.update()
        tip, goal = tip_and_target(armature, names[-1])
        assert np.linalg.norm(tip - goal) <= TOLERANCE, spot


def test_an_animated_chain_is_posed_over_its_keys() -> None:
    """On a frame change the chain's keys set the pose first; the preview then poses it onto the target."""
    armature, names, _, chain = chain_scene()
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    chain.target = keyed_empty("Other", loop_path(range(1, 21), (0.5, 0.5, 1.5), (0.8, 0.6, 0.4)))
    settings_of(armature).live_preview = True
    for frame in (3, 11, 17):
        bpy.context.scene.frame_set(frame)
        tip, goal = tip_and_target(armature, names[-1])
        assert np.linalg.norm(tip - goal) <= TOLERANCE, frame


def test_every_enabled_chain_follows_its_target_and_a_disabled_one_stays() -> None:
    armature, names, targets, chains = two_chain_scene()
    for target in targets.values():
        target.animation_data_clear()
    third = add_chain(armature, target=targets["left"], tip_bone=names["right"][1], chain_length=1, enabled=False)
    assert third.tip_bone == "right.001"  # inside the right chain, and disabled: it plays no part
    rest = {name: tuple(armature.pose.bones[name].rotation_quaternion) for side in names.values() for name in side}
    settings_of(armature).live_preview = True
    for left, right in zip(SPOTS, reversed(SPOTS), strict=True):
        targets["left"].location = (left[0] - 2.0, *left[1:])
        targets["right"].location = (right[0] + 2.0, *right[1:])
        bpy.context.view_layer.update()
        for side in ("left", "right"):
            tip, goal = tip_and_target(armature, names[side][-1])
            assert np.linalg.norm(tip - goal) <= TOLERANCE, (side, left, right)
    assert preview.problems(armature) == {}
    assert fcurve_keys(armature) == {}

    chains[1].enabled = False  # the right chain stays where it is now
    held = tip_and_target(armature, names["right"][-1])[0]
    targets["right"].location = (2.5, 0.5, 1.5)
    targets["left"].location = (-1.5, -0.5, 1.5)
    bpy.context.view_layer.update()
    np.testing.assert_array_equal(tip_and_target(armature, names["right"][-1])[0], held)
    tip, goal = tip_and_target(armature, names["left"][-1])
    assert np.linalg.norm(tip - goal) <= TOLERANCE
    assert rest != {name: tuple(armature.pose.bones[name].rotation_quaternion) for name in rest}


def test_a_chain_that_cannot_be_solved_leaves_the_others_posed() -> None:
    armature, names, targets, chains = two_chain_scene()
    for target in targets.values():
        target.animation_data_clear()
    chains[0].target = None
    settings = settings_of(armature)
    settings.live_preview = True
    targets["right"].location = (2.5, 0.5, 1.5)
    bpy.context.view_layer.update()
    assert preview.problems(armature) == {0: "pick a target object"}
    tip, goal = tip_and_target(armature, names["right"][-1])
    assert np.linalg.norm(tip - goal) <= TOLERANCE

    # Chains that share bones are solved together, as one tree; a tree's problem is each of its chains'.
    chains[0].target = targets["left"]
    add_chain(armature, target=targets["left"], tip_bone="right.001")
    settings.method = "CCD"  # a tree is solved with FABRIK only
    targets["left"].location = (-1.5, -0.5, 2.0)
    bpy.context.view_layer.update()
    found = preview.problems(armature)
    assert found.keys() == {1, 2}
    assert found[1] == found[2]
    assert found[1].startswith("Method (method) 'ccd' does not support")
    assert "nor chains that share bones" in found[1]
    tip, goal = tip_and_target(armature, names["left"][-1])
    assert np.linalg.norm(tip - goal) <= TOLERANCE  # the other chain still follows its target
    settings.active_chain = 2
    assert bpy.ops.fabrik.chain_remove() == {"FINISHED"}  # the list changed: the preview looks again
    assert preview.problems(armature) == {}


def test_moving_only_the_pole_swings_the_chain() -> None:
    """The tip stays on target when only the pole moves, but the chain must turn to the pole: a chain with a
    pole is solved on every update, and written only where its pose changes."""
    armature, names, target = still_target()
    target.location = (0.0, 0.0, 2.2)  # straight above, well within reach: the chain is free to swing about it
    pole = bpy.data.objects.new("Pole", None)
    bpy.context.scene.collection.objects.link(pole)
    chain = settings_of(armature).chains[0]
    chain.pole_target = pole
    settings_of(armature).live_preview = True

    def knee() -> FloatArray:
        return np.array(armature.matrix_world @ armature.pose.bones[names[1]].head)

    sides = []
    for side in (1.0, -1.0):
        pole.location = (3.0 * side, 0.0, 1.0)
        bpy.context.view_layer.update()
        tip, goal = tip_and_target(armature, names[-1])
        assert np.linalg.norm(tip - goal) <= TOLERANCE, side
        sides.append(knee()[0])
    assert preview.problems(armature) == {}
    assert sides[0] * sides[1] < 0  # the knee swung over to the other side with the pole
    assert min(abs(x) for x in sides) > 0.1


def test_a_chain_hanging_below_another_follows_it_in_the_same_update() -> None:
    """A Y's trunk is one chain and a branch hanging from its top another: when the trunk's target moves, the
    branch is solved from where the trunk's new pose puts it, in the same update (it used to be solved against
    the trunk's old pose, and catch up only at the next change)."""
    armature, tips, _ = y_rig(trunk=3, branch=3)
    trunk_target, branch_target = bpy.data.objects.new("Trunk", None), bpy.data.objects.new("Branch", None)
    for empty, spot in ((trunk_target, (0.0, 0.0, 1.5)), (branch_target, (0.8, 0.0, 2.3))):
        bpy.context.scene.collection.objects.link(empty)
        empty.location = spot
    add_chain(armature, target=trunk_target, tip_bone="trunk.002", chain_length=3)
    add_chain(armature, target=branch_target, tip_bone=tips[0], chain_length=3)
    settings_of(armature).live_preview = True
    bpy.context.view_layer.update()
    for spot in ((0.5, 0.2, 1.35), (0.2, -0.2, 1.4)):  # the branch target within reach of either
        trunk_target.location = spot
        bpy.context.view_layer.update()  # one update: the preview poses both chains, Blender evaluates them
        for tip in ("trunk.002", tips[0]):
            tip_point, goal = tip_and_target(armature, tip)
            assert np.linalg.norm(tip_point - goal) <= TOLERANCE
