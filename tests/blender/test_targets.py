"""Targets from Animation: an Empty keyed on every frame where each chain's tip is (turned as the tip where the
chain uses Rotation), a pole keyed beside each bend, continuous, with the pole angle that keeps the bend; named
after the chains, sized to them, in a collection named after the armature; refusals and all or nothing. And the
round trip on a clip as Mixamo users bring one (through FBX, automatic bone orientation, quaternion bones)."""

from __future__ import annotations

from pathlib import Path

import bpy
import edit_scenes
import mocap
import numpy as np
import pytest
from mathutils import Euler
from rigs import y_rig

from fabrik_addon import api
from fabrik_addon.blender import compat

from .oracle import FloatArray, file_digest, file_summary


@pytest.fixture(autouse=True)
def registered() -> None:
    api.armatures_with_chains()  # the chain list's settings, where the add-on is not enabled


def test_each_chain_gets_an_empty_keyed_on_every_frame_at_its_tip_and_a_pole_beside_its_bend() -> None:
    armature = edit_scenes.clip_with_chains("hop")
    frames = mocap.scene_frames()
    made = api.targets_from_animation(armature)
    chains = list(armature.fabrik.chains)
    assert made.frames == (frames.start, frames.stop - 1)
    assert made.collection.name == f"{armature.name} Targets"
    assert made.collection in bpy.context.scene.collection.children_recursive
    lengths = edit_scenes.chain_lengths(armature)
    tips = mocap.animated_joints(armature, [(c.tip_bone, "tail") for c in chains], frames)
    for k, chain in enumerate(chains):
        target, pole = made.targets[chain.tip_bone], made.poles[chain.tip_bone]
        assert (chain.target, chain.pole_target, chain.pole_angle) == (
            target,
            pole,
            pytest.approx(made.pole_angles[chain.tip_bone]),
        )
        assert (target.name, pole.name) == (f"{chain.tip_bone} Target", f"{chain.tip_bone} Pole")
        assert {target, pole} <= set(made.collection.objects)
        assert target.empty_display_size == pytest.approx(0.12 * lengths[chain.tip_bone])
        curves = {(f.data_path, f.array_index): f for f in compat.assigned_fcurves(target)}
        assert set(curves) == {("location", i) for i in range(3)}  # no Rotation on these chains: no rotation keys
        assert all(len(f.keyframe_points) == len(frames) for f in curves.values())
        keyed = np.stack([[curves[("location", i)].evaluate(f) for i in range(3)] for f in frames])
        np.testing.assert_allclose(keyed, tips[:, k], rtol=0, atol=1e-5 * lengths[chain.tip_bone])


def test_poles_keep_the_bend_s_plane_turning_no_more_than_the_animation_s() -> None:
    """From frame to frame the plane through the root, the pole and the tip turns by no more than 90 degrees
    where the animation's own bend plane (root, middle joint, tip) does not, and never more than it plus 5."""
    armature = edit_scenes.clip_with_chains("walk")
    frames = mocap.scene_frames()
    made = api.targets_from_animation(armature)
    for chain in armature.fabrik.chains:
        bone = armature.data.bones[chain.tip_bone]
        bones = [b.name for b in [bone, *bone.parent_recursive][: chain.chain_length]][::-1]
        joints = mocap.animated_joints(
            armature, [(bones[0], "head"), (bones[len(bones) // 2], "head"), (chain.tip_bone, "tail")], frames
        )
        curves = sorted(compat.assigned_fcurves(made.poles[chain.tip_bone]), key=lambda f: f.array_index)
        poles = np.array([[f.evaluate(frame) for f in curves] for frame in frames])
        ours, animated = _plane_turns(joints, poles), _plane_turns(joints, joints[:, 1])
        assert np.all((ours <= 90.0) | (animated > 90.0)), chain.tip_bone
        assert np.all(ours <= animated + 5.0), chain.tip_bone


def _plane_turns(joints: FloatArray, middles: FloatArray) -> FloatArray:
    """How far (degrees) the plane through each frame's root (``joints[:, 0]``), tip (``joints[:, 2]``) and
    ``middles`` turns from one frame to the next."""
    normals = np.cross(middles - joints[:, 0], joints[:, 2] - joints[:, 0])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    return np.asarray(np.degrees(np.arccos(np.clip(np.sum(normals[1:] * normals[:-1], axis=1), -1, 1))))


def test_a_chain_with_rotation_gets_a_target_turned_as_its_tip_and_the_round_trip_keeps_the_hand_s_turn() -> None:
    armature = edit_scenes.clip_with_chains("walk_30fps_m")
    for chain in armature.fabrik.chains:
        chain.use_rotation = True
    frames = mocap.scene_frames()
    bones = edit_scenes.chain_bones(armature)
    before = edit_scenes.bone_points(armature, bones, frames)
    made = api.targets_from_animation(armature)
    target = next(iter(made.targets.values()))
    assert target.empty_display_type == "ARROWS"
    assert {f.data_path for f in compat.assigned_fcurves(target)} == {"location", "rotation_quaternion"}
    api.bake_chains(armature, output="layer")
    shortest = min(edit_scenes.chain_lengths(armature).values())
    assert np.linalg.norm(edit_scenes.bone_points(armature, bones, frames) - before, axis=-1).max() <= 1e-4 * shortest


def test_a_chain_with_a_target_is_refused_unless_replaced_and_empties_made_here_are_keyed_again() -> None:
    armature = edit_scenes.clip_with_chains("hop")
    first = api.targets_from_animation(armature, chains=["LeftElbow"], frame_start=10, frame_end=60)
    assert list(first.targets) == ["LeftElbow"]
    assert first.frames == (10, 60)
    objects = len(bpy.data.objects)
    before = file_digest()
    with pytest.raises(
        ValueError, match="chain 'LeftElbow' has a target 'LeftElbow Target' and a pole 'LeftElbow Pole'"
    ):
        api.targets_from_animation(armature)
    assert file_digest() == before
    again = api.targets_from_animation(armature, replace=True)
    assert len(bpy.data.objects) == objects + 2 * 3  # the left arm's Empties reused, three chains' new ones
    assert again.targets["LeftElbow"] == first.targets["LeftElbow"]
    (location,) = [f for f in compat.assigned_fcurves(again.targets["LeftElbow"]) if f.array_index == 0]
    assert len(location.keyframe_points) == len(mocap.scene_frames())


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"chains": ["Knee"]}, ValueError, r"has no chain 'Knee' \(its chains: 'LeftElbow', 'RightElbow', 'LeftAnkle'"),
        ({"chains": "LeftElbow"}, TypeError, "chains must be a list of chain names"),
        ({"poles": 1}, TypeError, "poles must be True or False"),
        ({"frame_start": 50, "frame_end": 10}, ValueError, "the frames end before they start"),
    ],
)
def test_bad_input_is_named_and_nothing_is_made(
    keywords: dict[str, object], error: type[Exception], message: str
) -> None:
    armature = edit_scenes.clip_with_chains("hop")
    _read_goals(armature)
    before = file_digest()
    with pytest.raises(error, match=message):
        api.targets_from_animation(armature, **keywords)
    assert file_digest() == before


def _read_goals(armature: bpy.types.Object) -> None:
    """Read every chain's target and pole, as the panel's drawing does: Blender stores a pointer setting never
    set once it is read (None), so a file's bytes change with the first look at it, bake or not."""
    for chain in armature.fabrik.chains:
        assert (chain.target, chain.pole_target) == (None, None)


def test_a_failure_while_the_empties_are_made_takes_them_all_back() -> None:
    armature = edit_scenes.clip_with_chains("hop")
    armature.fabrik.chains[2].tip_bone = "NoSuchBone"
    _read_goals(armature)
    before = file_digest()
    with pytest.raises(ValueError, match="has no bone 'NoSuchBone'"):
        api.targets_from_animation(armature)
    assert file_digest() == before
    armature.fabrik.chains[2].tip_bone = mocap.legs(armature)["Left"].foot
    before, summary = file_digest(), file_summary()
    for last in (0.95, 1.0):  # computed, nothing made yet; and everything made, then taken back
        calls: list[float] = []

        def stop(fraction: float, last: float = last, calls: list[float] = calls) -> None:
            calls.append(fraction)
            if fraction >= last:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            api.targets_from_animation(armature, progress=stop)
        assert calls[-1] == last
        assert not [obj for obj in bpy.data.objects if obj.type == "EMPTY"]
        assert not bpy.data.collections
        # Blender 4.5 saves a file in which an object was made and removed otherwise, value for value the same.
        assert file_digest() == before if last < 1.0 else file_summary() == summary


def test_a_clip_brought_through_fbx_with_quaternion_bones_gives_its_animation_back(tmp_path: Path) -> None:
    """BVH exported to FBX and imported back with automatic bone orientation, as Mixamo users bring clips:
    targets from the animation, the chain list baked as a layer, every chain bone within 1e-4 of the shortest
    chain's length."""
    armature = edit_scenes.clip_with_chains("walk", through_fbx=tmp_path)
    assert {pose_bone.rotation_mode for pose_bone in armature.pose.bones} == {"QUATERNION"}
    frames = mocap.scene_frames()
    bones = edit_scenes.chain_bones(armature)
    before = edit_scenes.bone_points(armature, bones, frames)
    api.targets_from_animation(armature)
    report = api.bake_chains(armature, output="layer")
    assert all(chain.on_target for chain in report.chains)
    shortest = min(edit_scenes.chain_lengths(armature).values())
    assert np.linalg.norm(edit_scenes.bone_points(armature, bones, frames) - before, axis=-1).max() <= 1e-4 * shortest


def test_chains_sharing_a_trunk_get_poles_that_bend_their_own_branches_and_give_the_animation_back() -> None:
    """Two chains of four bones sharing a two-bone trunk (a tree): each pole is placed for the bones it bends in
    the tree, its branch below the fork (placed for the whole chain, the branches came back 1.4 units off)."""
    api.armatures_with_chains()
    armature, tips, names = y_rig(trunk=2, branch=2)
    frames = range(1, 41)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = frames.start, frames.stop - 1
    for i, name in enumerate(names):
        bone = armature.pose.bones[name]
        for frame in frames:
            t = 2 * np.pi * (frame - 1) / len(frames)
            bone.rotation_quaternion = Euler(
                (0.5 * np.sin(t + i), 0.25 * np.cos(2 * t + i), 0.15 * np.sin(3 * t))
            ).to_quaternion()
            bone.keyframe_insert("rotation_quaternion", frame=frame)
    for tip in tips:
        edit_scenes.add_chain(armature, tip, 4)
    before = edit_scenes.bone_points(armature, names, frames)
    made = api.targets_from_animation(armature)
    assert set(made.poles) == set(tips)
    assert api.bake_chains(armature, output="layer").max_error < 1e-3
    np.testing.assert_allclose(edit_scenes.bone_points(armature, names, frames), before, rtol=0, atol=1e-4)
