"""Bones as targets and poles, as the IK constraint's Bone and Pole Bone: the goal is the bone's head in world
space, in the chain's own armature (outside the chain, not moving with it) or in another one."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from mathutils import Vector
from rigs import keyed_empty, loop_path, make_chain

from fabrik_addon import api

from .oracle import FloatArray, evaluated, file_digest

FRAMES = range(1, 21)
TOLERANCE = 1e-3


def add_bone(armature: bpy.types.Object, name: str, head: tuple[float, float, float], parent: str = "") -> None:
    """A bone of length 0.2 up +Z at ``head``, with ``parent`` (disconnected) if named."""
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    bone = armature.data.edit_bones.new(name)
    bone.head, bone.tail = Vector(head), Vector(head) + Vector((0.0, 0.0, 0.2))
    if parent:
        bone.parent = armature.data.edit_bones[parent]
    bpy.ops.object.mode_set(mode="OBJECT")


def key_bone_path(armature: bpy.types.Object, bone: str, center: tuple[float, float, float]) -> None:
    """Key the bone's location along a loop about ``center`` (offsets from its rest head)."""
    pose_bone = armature.pose.bones[bone]
    for frame, location in loop_path(FRAMES, center, (0.4, 0.3, 0.3)):
        pose_bone.location = location
        pose_bone.keyframe_insert("location", frame=frame)


def bone_heads(armature: bpy.types.Object, bone: str) -> FloatArray:
    scene = bpy.context.scene
    heads = []
    for frame in FRAMES:
        scene.frame_set(frame)
        heads.append(np.array(armature.matrix_world @ armature.pose.bones[bone].head))
    return np.array(heads)


@pytest.fixture
def rig() -> tuple[bpy.types.Object, list[str]]:
    """A 3-bone chain and a free control bone "ctrl" in the same armature, keyed to move within reach."""
    armature, names = make_chain(3)
    add_bone(armature, "ctrl", (0.0, 0.0, 0.0))
    key_bone_path(armature, "ctrl", (0.6, 0.2, 1.8))
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    return armature, names


def test_a_bone_of_the_same_armature_is_the_goal(rig: tuple[bpy.types.Object, list[str]]) -> None:
    armature, names = rig
    report = api.bake(armature, armature, tip_bone=names[-1], target_bone="ctrl")
    tips = evaluated(armature, FRAMES, names)["tails"][:, -1]
    heads = bone_heads(armature, "ctrl")
    np.testing.assert_allclose(np.linalg.norm(tips - heads, axis=1), report.error, atol=1e-6)
    assert report.on_target
    assert report.error.max() <= TOLERANCE


def test_a_bone_of_another_moving_armature_is_the_goal() -> None:
    armature, names = make_chain(3)
    other, _ = make_chain(1, name="Prop")
    add_bone(other, "handle", (0.0, 0.0, 0.5), parent="bone.000")
    for frame, location in loop_path(FRAMES, (0.5, 0.3, 1.2), (0.3, 0.3, 0.2)):
        other.location = location
        other.keyframe_insert("location", frame=frame)
    other.pose.bones["bone.000"].rotation_mode = "XYZ"
    other.pose.bones["bone.000"].rotation_euler.x = 0.4
    report = api.bake(armature, other, tip_bone=names[-1], target_bone="handle", frame_start=1, frame_end=20)
    tips = evaluated(armature, FRAMES, names)["tails"][:, -1]
    assert np.linalg.norm(tips - bone_heads(other, "handle"), axis=1).max() <= TOLERANCE
    assert report.on_target


def test_a_pole_bone_bends_the_chain_as_an_empty_at_its_head_does(rig: tuple[bpy.types.Object, list[str]]) -> None:
    armature, names = rig
    add_bone(armature, "knee_pole", (0.0, -1.5, 1.0))
    heads = bone_heads(armature, "knee_pole")
    twin = keyed_empty("PoleTwin", [(frame, tuple(head)) for frame, head in zip(FRAMES, heads, strict=True)])
    chain = {"tip_bone": names[-1], "target_bone": "ctrl"}
    by_bone = api.bake(armature, armature, pole_target=armature, pole_bone="knee_pole", **chain)
    keys_by_bone = evaluated(armature, FRAMES, names)["quats"]
    api.clear(armature, tip_bone=names[-1])  # the same start again: the chain unkeyed, at rest
    for name in names:
        armature.pose.bones[name].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    by_empty = api.bake(armature, armature, pole_target=twin, **chain)
    np.testing.assert_allclose(evaluated(armature, FRAMES, names)["quats"], keys_by_bone, atol=1e-5)
    np.testing.assert_allclose(by_bone.error, by_empty.error, atol=1e-6)
    assert by_bone.on_target


@pytest.mark.parametrize(
    ("target_bone", "message"),
    [
        ("bone.001", r"the target bone 'bone.001' is a bone of the chain: pick a bone outside it"),
        ("tip_child", r"the target bone 'tip_child' is a child of the bone 'bone.002', which the chain moves"),
        ("ctlr", r"the target 'Rig' has no bone 'ctlr' \(did you mean 'ctrl'\?\)"),
    ],
)
def test_bad_bone_targets_are_refused(rig: tuple[bpy.types.Object, list[str]], target_bone: str, message: str) -> None:
    armature, names = rig
    add_bone(armature, "tip_child", (0.0, 0.0, 3.0), parent=names[-1])
    before = file_digest()
    with pytest.raises(ValueError, match=message):
        api.bake(armature, armature, tip_bone=names[-1], target_bone=target_bone)
    assert file_digest() == before


def test_bone_goal_mistakes_name_the_problem(rig: tuple[bpy.types.Object, list[str]]) -> None:
    armature, names = rig
    empty = keyed_empty("Empty", [(1, (0.5, 0.0, 1.5))])
    before = file_digest()
    for keywords, message in [
        ({"target": empty, "target_bone": "ctrl"}, "the target 'Empty' is an empty object: a bone needs an armature"),
        (
            {"target": empty, "pole_bone": "ctrl"},
            r"Pole Bone \(pole_bone\) 'ctrl' names a bone of no pole target: pick the Pole Target \(pole_target\)",
        ),
        (
            {"target": armature},
            r"cannot be the armature 'Rig' itself: .* or one of its bones as the Target Bone \(target_bone\)",
        ),
        (
            {"target": armature, "target_bone": "ctrl", "pole_target": armature, "pole_bone": "ctrl"},
            "the pole target cannot be the target 'Rig/ctrl' too",
        ),
        ({"target": empty, "target_bone": 3}, r"Target Bone \(target_bone\) must be a bone's name"),
    ]:
        with pytest.raises((TypeError, ValueError), match=message):
            api.bake(armature, tip_bone=names[-1], **keywords)
    assert file_digest() == before
