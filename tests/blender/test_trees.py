"""Chains that share bones, solved as one tree (several end effectors): IK constraints sharing a trunk, a hand
of five fingers, a Rigify torso reaching with both arms; IK limits, poles and stretch in a tree; conflicting
targets and weights. Blender's evaluation of the keys is the oracle; targets come from poses the rig itself
takes (within its limits), so all can be reached."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import bpy
import numpy as np
import pytest
from mathutils import Matrix, Vector
from rigs import cone, hand_rig, hinge, keyed_empty, limited_hand, limited_y, link, posed_targets, rigify_metarig, y_rig

from fabrik_addon import api
from fabrik_addon.blender import compat
from fabrik_addon.blender.rig import read_limits
from fabrik_addon.settings import BakeSettings, ChainSettings, FrameRange

from .oracle import FloatArray, evaluated, fcurve_keys, file_digest

FRAMES = range(1, 31)
TOLERANCE = 1e-3
DEG = math.pi / 180
#: Blender stores rotations in float32: a limit is kept to this (radians) beyond the solver's.
FLOAT32_SLACK = 1e-6


def with_ik(armature: bpy.types.Object, tips: list[str], targets: list[bpy.types.Object], count: int) -> None:
    for tip, target in zip(tips, targets, strict=True):
        ik = armature.pose.bones[tip].constraints.new("IK")
        ik.target, ik.chain_count = target, count


def tips_on_targets(armature: bpy.types.Object, tips: list[str], targets: list[bpy.types.Object]) -> FloatArray:
    """Per frame and tip, the distance from the tip's tail to its target, as Blender evaluates the scene."""
    scene = bpy.context.scene
    errors = np.empty((len(FRAMES), len(tips)))
    for i, frame in enumerate(FRAMES):
        scene.frame_set(frame)
        for k, (tip, target) in enumerate(zip(tips, targets, strict=True)):
            tail = armature.matrix_world @ armature.pose.bones[tip].tail
            errors[i, k] = (tail - target.matrix_world.translation).length
    return errors


@pytest.mark.parametrize(("build", "count"), [(y_rig, 10), (hand_rig, 6)], ids=["Y", "hand"])
def test_ik_constraints_sharing_bones_bake_as_one_tree(build: object, count: int) -> None:
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature, tips, bones = build()
    targets = posed_targets(armature, tips, bones, FRAMES)
    with_ik(armature, tips, targets, count)
    report = api.bake_ik_constraints(armature)
    errors = tips_on_targets(armature, tips, targets)
    np.testing.assert_allclose(errors, np.array([c.error for c in report.chains]).T, atol=1e-6)
    assert (errors <= TOLERANCE).all(axis=1).mean() >= 0.99  # every tip on target together
    assert report.evaluation == "sandbox"


def conflicting(weights: tuple[float, float]) -> tuple[FloatArray, dict[tuple[str, int], list[tuple[float, float]]]]:
    """A Y in a fresh file whose two tips pull toward targets farther apart than the branches allow: each
    chain's errors (2, F) and the keys."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature, tips, _ = y_rig()
    far = [keyed_empty("FarL", [(1, (4.0, 0.0, 3.0))]), keyed_empty("FarR", [(1, (-4.0, 0.0, 3.0))])]
    chains = tuple(
        ChainSettings(armature, target, tip, 10, weight=weight)
        for tip, target, weight in zip(tips, far, weights, strict=True)
    )
    report = api.bake_settings(BakeSettings(chains, FrameRange(1, 3)))
    return np.array([chain.error for chain in report.chains]), fcurve_keys(armature)


def test_conflicting_targets_give_a_deterministic_compromise_shifted_by_the_weights() -> None:
    even, keys = conflicting((1.0, 1.0))
    again, keys_again = conflicting((1.0, 1.0))
    assert keys_again == keys  # deterministic, to the bit
    assert np.array_equal(again, even)
    assert np.isfinite(even).all()
    assert (even > 0.5).all()  # both miss: no pose reaches both
    np.testing.assert_allclose(even[0], even[1], rtol=1e-3)  # a mirrored Y misses both alike
    heavy, _ = conflicting((4.0, 1.0))
    assert heavy[0].max() < even[0].min()  # the heavier misses less
    assert heavy[1].min() > even[1].max()


@pytest.mark.parametrize("limited", [False, True], ids=["free", "limited"])
def test_a_rigify_torso_reaches_with_both_arms(limited: bool) -> None:
    """Rigify's human metarig, a chain from each forearm through the spine: baked as one tree, every hand on
    target; limited, with each elbow a hinge bending 0 to 150 degrees and each spine bone a cone of 15
    degrees (targets from poses within them), every bone within its limits too."""
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    rig = rigify_metarig("human")
    bpy.ops.object.mode_set(mode="OBJECT")
    arms = [f"forearm.{side}" for side in ("L", "R")]
    torso = ["spine", "spine.001", "spine.002", "spine.003"]
    bones = [*torso, *(f"{part}.{side}" for side in ("L", "R") for part in ("shoulder", "upper_arm", "forearm"))]
    if limited:
        for name in arms:
            hinge(rig.pose.bones[name], 0.0, 150.0 * DEG)
        for name in torso:
            cone(rig.pose.bones[name], 15.0 * DEG)
    limits = read_limits([rig.pose.bones[name] for name in bones])
    targets = posed_targets(rig, arms, bones, FRAMES, spread=0.3, clamp=limits.clamp if limited else None)
    chains = tuple(ChainSettings(rig, target, tip, 7) for tip, target in zip(arms, targets, strict=True))
    report = api.bake_settings(BakeSettings(chains))
    errors = tips_on_targets(rig, arms, targets)
    assert (errors <= TOLERANCE).all(axis=1).mean() >= 0.99
    assert set(report.chains[0].bones) & set(report.chains[1].bones) == set(torso)
    assert limits.excess(evaluated(rig, FRAMES, bones)["quats"]).max() <= FLOAT32_SLACK


def limited_targets(
    armature: bpy.types.Object, tips: list[str], bones: list[str], spread: float = 0.6, reach: float = 1.0
) -> list[bpy.types.Object]:
    """``posed_targets`` in poses within the bones' IK limits, pushed out from the armature's origin by
    ``reach``."""
    limits = read_limits([armature.pose.bones[name] for name in bones])
    return posed_targets(armature, tips, bones, FRAMES, spread=spread, clamp=limits.clamp, reach=reach)


def excess(armature: bpy.types.Object, bones: list[str], quats: FloatArray) -> float:
    """How far, in radians, the evaluated local rotations (F, m, 4) break the bones' IK limits at most."""
    return float(read_limits([armature.pose.bones[name] for name in bones]).excess(quats).max())


@pytest.mark.parametrize(("build", "count"), [(limited_y, 10), (limited_hand, 6)], ids=["Y of cones", "hinged hand"])
def test_ik_constraints_sharing_bones_with_limits_bake_as_one_tree_within_them(build: object, count: int) -> None:
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature, tips, bones = build()
    targets = limited_targets(armature, tips, bones)
    with_ik(armature, tips, targets, count)
    report = api.bake_ik_constraints(armature)
    errors = tips_on_targets(armature, tips, targets)
    np.testing.assert_allclose(errors, np.array([c.error for c in report.chains]).T, atol=1e-6)
    assert (errors <= TOLERANCE).all(axis=1).mean() >= 0.99  # every tip on target together
    assert excess(armature, bones, evaluated(armature, FRAMES, bones)["quats"]) <= FLOAT32_SLACK


def seen_by_blender(
    armature: bpy.types.Object, tips: list[str], targets: list[bpy.types.Object], bones: list[str]
) -> tuple[FloatArray, FloatArray]:
    """Per frame, as Blender evaluates the scene (with any IK constraint on): each tip's distance to its target
    (F, E), and each bone's rotation relative to its parent and rest, what visual keying would key (F, m, 4)."""
    errors = tips_on_targets(armature, tips, targets)
    pose, quats = armature.pose, []
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        frame_quats = []
        for name in bones:
            bone = pose.bones[name]
            above = bone.parent.matrix @ bone.parent.bone.matrix_local.inverted() if bone.parent else Matrix()
            frame_quats.append(
                tuple((bone.bone.matrix_local.inverted() @ above.inverted() @ bone.matrix).to_quaternion())
            )
        quats.append(frame_quats)
    return errors, np.array(quats)


@pytest.mark.parametrize("build", [limited_y, limited_hand], ids=["Y of cones", "hinged hand"])
def test_a_limited_tree_reaches_wherever_blenders_tree_ik_does_with_the_same_limits(build: object) -> None:
    """The same limited tree under Blender's own tree IK (its IK constraints live) and baked by FABRIK, both
    measured by Blender's evaluation: FABRIK's keys put every tip on target on every frame where Blender's
    tree IK does (and on 99 % of all), both within the limits."""
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature, tips, bones = build()
    targets = limited_targets(armature, tips, bones)
    with_ik(armature, tips, targets, 0)
    theirs, their_quats = seen_by_blender(armature, tips, targets, bones)
    api.bake_ik_constraints(armature)
    ours, our_quats = seen_by_blender(armature, tips, targets, bones)
    summary = f"max error FABRIK {ours.max():.1e}, Blender {theirs.max():.1e}"
    their_reach, our_reach = (theirs <= TOLERANCE).all(axis=1), (ours <= TOLERANCE).all(axis=1)
    assert our_reach[their_reach].all(), summary
    assert our_reach.mean() >= 0.99, summary
    assert excess(armature, bones, our_quats) <= FLOAT32_SLACK
    assert excess(armature, bones, their_quats) <= 1e-5  # Blender's float32 solver keeps them too


def two_armed() -> tuple[bpy.types.Object, list[str], list[str]]:
    """A spine of two bones up +Z and two arms of two bones leaving its top sideways, each elbow a hinge
    bending 0 to 150 degrees about the forearm's X axis; returns the rig, the forearms and every bone's name."""
    armature = link(bpy.data.objects.new("Torso", bpy.data.armatures.new("Torso")))
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    edit = armature.data.edit_bones
    spine = None
    for i in range(2):
        bone = edit.new(f"spine.{i}")
        bone.head, bone.tail = Vector((0, 0, 0.6 * i)), Vector((0, 0, 0.6 * (i + 1)))
        bone.parent, bone.use_connect = spine, spine is not None
        spine = bone
    forearms = []
    for side, x in (("L", 1.0), ("R", -1.0)):
        upper = edit.new(f"upper_arm.{side}")
        upper.head, upper.tail = Vector((0, 0, 1.2)), Vector((0.6 * x, 0, 1.2))
        upper.parent, upper.use_connect = spine, True
        fore = edit.new(f"forearm.{side}")
        fore.head, fore.tail = upper.tail, Vector((1.2 * x, 0, 1.2))
        fore.parent, fore.use_connect = upper, True
        forearms.append(fore.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    for name in forearms:
        hinge(armature.pose.bones[name], 0.0, 150.0 * DEG)
    return armature, forearms, [b.name for b in armature.data.bones]


def test_each_arm_of_a_tree_bends_its_elbow_toward_its_own_pole() -> None:
    """Two IK constraints sharing the spine, each with its pole behind its elbow (+Y; pole angle -90 degrees),
    where the targets, from poses with the elbows down, do not put them: every hand on target, each arm's
    elbow in the plane through its shoulder, its hand and its pole, on the pole's side, and within its hinge,
    as Blender evaluates the keys. (Blender's own tree IK keeps one pole per tree, the last constraint's, and
    turns the whole tree with it.)"""
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature, forearms, bones = two_armed()
    targets = limited_targets(armature, forearms, bones, spread=0.5)
    poles = []
    for name in forearms:
        elbow = armature.data.bones[name].head_local
        poles.append(keyed_empty(f"{name}.pole", [(FRAMES.start, tuple(elbow + Vector((0.0, 2.0, 0.0))))]))
    for name, target, pole in zip(forearms, targets, poles, strict=True):
        ik = armature.pose.bones[name].constraints.new("IK")
        ik.target, ik.chain_count, ik.pole_target, ik.pole_angle = target, 4, pole, -90 * DEG
    report = api.bake_ik_constraints(armature)
    errors = tips_on_targets(armature, forearms, targets)
    assert (errors <= TOLERANCE).all(axis=1).mean() >= 0.99
    np.testing.assert_allclose(errors, np.array([c.error for c in report.chains]).T, atol=1e-6)
    seen = evaluated(armature, FRAMES, [f"upper_arm.{side}" for side in ("L", "R")])
    shoulders, elbows = seen["heads"], seen["tails"]
    line = evaluated(armature, FRAMES, forearms)["tails"] - shoulders

    def across(points: FloatArray) -> FloatArray:
        """Each point's offset from its shoulder, less its part along the line to the hand (F, 2, 3)."""
        along = np.einsum("fei,fei->fe", points - shoulders, line) / np.einsum("fei,fei->fe", line, line)
        return np.asarray(points - shoulders - along[..., None] * line)

    bend = across(elbows)
    pull = across(np.broadcast_to([p.location[:] for p in poles], elbows.shape))
    bent = np.linalg.norm(bend, axis=2) > 0.01  # a straight arm has no side
    assert bent.mean() > 0.3
    facing = np.einsum("fei,fei->fe", bend, pull) / np.linalg.norm(bend, axis=2) / np.linalg.norm(pull, axis=2)
    assert (facing[bent] > 0.99).all()
    assert excess(armature, bones, evaluated(armature, FRAMES, bones)["quats"]) <= FLOAT32_SLACK  # hinges kept


def stretching(
    build: Callable[[], tuple[bpy.types.Object, list[str], list[str]]], stretch: tuple[bool, bool]
) -> tuple[bpy.types.Object, list[str], list[str], list[bpy.types.Object]]:
    """The Y built by ``build`` with an IK Stretch of 0.5 on the branches' bones, an IK constraint on each tip
    (Stretch on or off as ``stretch`` says) toward targets pushed out to 1.15 times where its own poses put
    the tips. Returns the armature, its tips, its bones and the targets."""
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature, tips, bones = build()
    for name in bones:
        armature.pose.bones[name].ik_stretch = 0.0 if name.startswith("trunk") else 0.5
    targets = limited_targets(armature, tips, bones, spread=0.3, reach=1.15)
    with_ik(armature, tips, targets, 10)
    for tip, on in zip(tips, stretch, strict=True):
        armature.pose.bones[tip].constraints[0].use_stretch = on
    return armature, tips, bones, targets


@pytest.mark.parametrize("build", [y_rig, limited_y], ids=["Y", "Y of cones"])
def test_a_tree_stretches_its_branches_to_targets_beyond_its_reach(
    build: Callable[[], tuple[bpy.types.Object, list[str], list[str]]],
) -> None:
    """The Y (free, or every joint a cone) with Stretch on both IK constraints and an IK Stretch of 0.5 on the
    branches' bones, its targets pushed out to 1.15 times where its own poses put the tips: every tip on
    target, the branches keyed longer (Y scale), the trunk at its length, every bone within its limits."""
    armature, tips, bones, targets = stretching(build, (True, True))
    api.bake_ik_constraints(armature)
    errors = tips_on_targets(armature, tips, targets)
    assert (errors <= TOLERANCE).all(axis=1).mean() >= 0.99
    seen = evaluated(armature, FRAMES, bones)
    lengths = np.linalg.norm(seen["tails"] - seen["heads"], axis=2)
    rest = np.array([armature.data.bones[name].length for name in bones])
    trunk = np.array([name.startswith("trunk") for name in bones])
    np.testing.assert_allclose(lengths[:, trunk], np.broadcast_to(rest[trunk], lengths[:, trunk].shape), rtol=1e-5)
    assert (lengths[:, ~trunk] > 1.01 * rest[~trunk]).any(axis=0).all()
    assert excess(armature, bones, untwisted_rotations(armature, bones, seen["heads"], seen["tails"])) <= 1e-5


def untwisted_rotations(
    armature: bpy.types.Object, bones: list[str], heads: FloatArray, tails: FloatArray
) -> FloatArray:
    """The local rotations (F, m, 4) of bones that do not twist (``bones`` parents first, each with its parent's
    among them but the first) from their evaluated world heads and tails (F, m, 3) alone: each bone's
    rotation is the least turn of its rest direction onto where it points in its parent's turned frame. Where
    children inherit a stretched parent's scale, their keyed rotations compensate for it; this is the turn
    itself, which the IK limits bound."""
    data = armature.data.bones
    quats = np.empty((*heads.shape[:2], 4))
    for f in range(len(heads)):
        frames: dict[str, Matrix] = {}
        for k, name in enumerate(bones):
            bone = data[name]
            if k == 0:
                rest = armature.matrix_world.to_3x3().normalized() @ bone.matrix_local.to_3x3()
            else:
                rest = frames[bone.parent.name] @ (bone.parent.matrix_local.inverted() @ bone.matrix_local).to_3x3()
            turn = Vector((0.0, 1.0, 0.0)).rotation_difference(rest.transposed() @ Vector(tails[f, k] - heads[f, k]))
            frames[name] = rest @ turn.to_matrix()
            quats[f, k] = tuple(turn)
    return quats


def test_target_rotation_in_a_tree_is_refused() -> None:
    armature, tips, bones = y_rig()
    targets = posed_targets(armature, tips, bones, range(1, 3))
    chains = tuple(
        ChainSettings(armature, t, tip, 10, use_rotation=k == 0)
        for k, (tip, t) in enumerate(zip(tips, targets, strict=True))
    )
    before = file_digest()
    with pytest.raises(ValueError, match=r"share bones and are solved as one tree, which does not turn a tip"):
        api.bake_settings(BakeSettings(chains, FrameRange(1, 2)))
    assert file_digest() == before


def test_a_locked_y_scale_anywhere_a_stretching_tree_keys_is_refused_before_writing() -> None:
    """Stretch on one branch keys the Y scale of every bone of the tree (see ``tree_adapter``): a locked Y
    scale F-curve on the other branch is refused before anything is written, not found halfway."""
    armature, tips, _, _ = stretching(y_rig, (True, False))  # the second branch does not stretch
    armature.pose.bones[tips[1]].keyframe_insert("scale", index=1, frame=1)
    fcurve = next(c for c in compat.assigned_fcurves(armature) if c.data_path.endswith(".scale"))
    fcurve.lock = True
    before, progress = file_digest(), list[float]()
    message = f"the F-curve {fcurve.data_path}[1] of '{armature.name}' is locked"
    with pytest.raises(ValueError, match=re.escape(message)):
        api.bake_ik_constraints(armature, progress=progress.append)
    assert progress == []  # refused before the bake read a frame
    assert file_digest() == before
