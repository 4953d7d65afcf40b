"""The motion capture clips of ``tests/data`` through Blender's own BVH importer, and the helpers of
``scripts/scenes/mocap.py`` that later tests and benchmarks build on. What a clip should hold is read from the file
itself, with a parser of its own here, not from the importer or the helpers under test."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import bpy
import mocap
import numpy as np
import pytest
from rigs import scene, world_location

from fabrik_addon.blender import compat

CLIPS = sorted(mocap.CLIPS)


@dataclass(frozen=True)
class Header:
    """What a BVH file declares: its joints in file order, their channels, its frame count and frame time, and
    the first row of its MOTION section."""

    joints: list[str]
    channels: list[list[str]]
    frames: int
    frame_time: float
    first_row: list[float]
    rows: int


def read_header(path: Path) -> Header:
    words = [line.split() for line in path.read_text().splitlines()]
    joints = [line[1] for line in words if line and line[0] in ("ROOT", "JOINT")]
    channels = [line[2:] for line in words if line and line[0] == "CHANNELS"]
    motion = words.index(["MOTION"])
    assert words[motion + 1][0] == "Frames:"
    assert words[motion + 2][:2] == ["Frame", "Time:"]
    rows = [line for line in words[motion + 3 :] if line]
    return Header(
        joints, channels, int(words[motion + 1][1]), float(words[motion + 2][2]), [float(w) for w in rows[0]], len(rows)
    )


@pytest.mark.parametrize("clip", CLIPS)
def test_clip_imports_every_joint_and_frame(clip: str) -> None:
    header = read_header(mocap.CLIPS[clip].path)
    # The file is whole: as many rows as it declares, each with a value per channel.
    assert header.rows == header.frames
    assert len(header.first_row) == sum(len(c) for c in header.channels)
    armature = mocap.import_clip(clip)
    assert armature.type == "ARMATURE"
    assert sorted(bone.name for bone in armature.data.bones) == sorted(header.joints)
    action = armature.animation_data.action
    assert tuple(action.frame_range) == (1.0, float(header.frames))
    assert (scene().frame_start, scene().frame_end) == (1, header.frames)
    assert mocap.scene_fps() == pytest.approx(1.0 / header.frame_time, rel=1e-6)
    # A key on every frame, for each channel of each joint: the root's location and every joint's rotation.
    pose_paths: dict[str, int] = {}
    for bone in armature.pose.bones:
        pose_paths[f'pose.bones["{bone.name}"].rotation_euler'] = 3
    pose_paths['pose.bones["Hips"].location'] = 3
    keyed: dict[str, int] = {}
    for fcurve in compat.assigned_fcurves(armature):
        keyed[fcurve.data_path] = keyed.get(fcurve.data_path, 0) + 1
        assert len(fcurve.keyframe_points) == header.frames, fcurve.data_path
    assert keyed == pose_paths


@pytest.mark.parametrize("clip", CLIPS)
def test_root_starts_where_the_file_puts_it(clip: str) -> None:
    """The first row's root position, scaled and turned from the BVH's Y-up into Blender's Z-up
    ((x, y, z) -> (x, -z, y)), is where Blender puts the root on the first frame."""
    header = read_header(mocap.CLIPS[clip].path)
    x, y, z = header.first_row[:3]
    for scale in (1.0, 0.25):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        armature = mocap.import_clip(clip, scale=scale)
        root = mocap.animated_positions(armature, "Hips", [1])[0]
        np.testing.assert_allclose(root, scale * np.array([x, -z, y]), atol=1e-5 * scale * abs(y))


@pytest.mark.parametrize("clip", CLIPS)
def test_the_pose_moves(clip: str) -> None:
    """Over the clip each foot travels, and each knee bends and straightens: the joints are animated, not
    only the root."""
    armature = mocap.import_clip(clip)
    metres = mocap.CLIPS[clip].metres_per_unit
    frames = mocap.scene_frames()
    for leg in mocap.legs(armature).values():
        hip, knee, ankle, ball = mocap.animated_joints(
            armature, [(leg.thigh, "head"), (leg.knee, "head"), (leg.shin, "tail"), (leg.foot, "tail")], frames
        ).transpose(1, 0, 2)
        assert metres * np.linalg.norm(ball[-1, :2] - ball[0, :2]) > 0.5, leg.side
        bend, _ = mocap.knee_bends(hip, knee, ankle)
        assert np.ptp(bend) > math.radians(30.0), leg.side


def test_legs_and_arms_are_chains_from_the_hip_and_shoulder() -> None:
    armature = mocap.import_clip("walk")
    bones = armature.data.bones
    legs, arms = mocap.legs(armature), mocap.arms(armature)
    assert {leg.side for leg in legs.values()} == {arm.side for arm in arms.values()} == {"Left", "Right"}
    for leg in legs.values():
        thigh, shin, foot, toe = (bones[name] for name in (leg.thigh, leg.shin, leg.foot, leg.toe))
        assert (shin.parent, foot.parent, toe.parent) == (thigh, shin, foot)
        # Each bone reaches its child's head: the shin's tail is the ankle, the foot's tail the ball.
        for bone, child in ((thigh, shin), (shin, foot), (foot, toe)):
            np.testing.assert_allclose(bone.tail_local, child.head_local, atol=1e-6)
        assert leg.knee == leg.shin
        assert leg.chain() == (leg.shin, 2)
        assert leg.chain(with_foot=True) == (leg.foot, 3)
        # About 0.8 m from hip to ankle: the names pick out the leg, not another limb.
        assert 0.7 < mocap.CMU_UNIT * mocap.leg_length(armature, leg) < 0.9
    for arm in arms.values():
        upper, forearm, hand = (bones[name] for name in (arm.upper, arm.forearm, arm.hand))
        assert (forearm.parent, hand.parent) == (upper, forearm)
        np.testing.assert_allclose(upper.tail_local, forearm.head_local, atol=1e-6)
        assert arm.chain() == (arm.forearm, 2)
        assert arm.elbow == arm.forearm


def test_the_neck_starts_on_the_head_of_the_chest() -> None:
    """CMU's zero-length joint at the top of the chest: the neck hangs from the head of the last chest bone,
    not from its tail (why a spine chain through it is refused). Its stand-in length is the importer's."""
    armature = mocap.import_clip("walk")
    bones = armature.data.bones
    spine = mocap.spine(armature)
    assert spine == ("Hips", "lowerback", "Chest", "Chest2", "lowerneck", "Neck", "Head")
    assert [bones[name].parent.name for name in spine[1:]] == list(spine[:-1])
    chest, neck = bones["Chest2"], bones["lowerneck"]
    np.testing.assert_allclose(neck.head_local, chest.head_local, atol=1e-6)
    assert np.linalg.norm(np.array(neck.head_local) - chest.tail_local) > 0.05
    # Blender 4.2's importer gives the zero-length bone its parent's offset (the chest's length again); 4.5
    # and later a tenth of a scene unit pointing up.
    expected = bones["Chest"].length if bpy.app.version < (4, 5, 0) else 0.1
    assert chest.length == pytest.approx(expected, rel=1e-5)


def test_keyed_targets_sit_on_the_animated_ankles() -> None:
    armature = mocap.import_clip("walk")
    leg = mocap.legs(armature)["Left"]
    frames = list(range(1, 41))
    ankle = mocap.animated_positions(armature, leg.shin, frames, where="tail")
    target = mocap.keyed_targets({"ankle": ankle}, frames)["ankle"]
    np.testing.assert_allclose(world_location(target, frames), ankle, atol=1e-5)
    # Linear between keys: halfway between two frames, halfway between their places.
    scene().frame_set(10, subframe=0.5)
    np.testing.assert_allclose(np.array(target.matrix_world.translation), (ankle[9] + ankle[10]) / 2, atol=1e-5)


def test_import_clip_names_what_it_cannot_find(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no clip 'jog'"):
        mocap.import_clip("jog")
    with pytest.raises(FileNotFoundError, match="no clip"):
        mocap.import_clip(tmp_path / "missing.bvh")


def test_knee_flips_count_turns_of_a_bent_knee_only() -> None:
    """A leg bent in a plane that turns about the thigh: a turn of more than 30 degrees between frames is a
    flip when the knee is bent more than 10 degrees, not when it is nearly straight or turns less."""
    turns = np.radians([0.0, 5.0, 10.0, 50.0, 55.0, 75.0, 120.0])  # steps 5, 5, 40, 5, 20, 45
    hip = np.tile([0.0, 0.0, 1.0], (len(turns), 1))
    knee = np.zeros_like(hip)

    def ankle(bend_deg: float) -> mocap.FloatArray:
        bend = math.radians(bend_deg)
        return np.column_stack(
            [math.sin(bend) * np.cos(turns), math.sin(bend) * np.sin(turns), np.full(len(turns), -math.cos(bend))]
        )

    assert mocap.knee_flips(hip, knee, ankle(45.0)).tolist() == [3, 6]
    assert mocap.knee_flips(hip, knee, ankle(5.0)).tolist() == []
    assert mocap.knee_flips(hip, knee, ankle(45.0), max_turn=math.radians(50.0)).tolist() == []
    bend, normal = mocap.knee_bends(hip, knee, ankle(45.0))
    np.testing.assert_allclose(bend, math.radians(45.0))
    np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1.0)


def test_foot_contacts_find_the_planted_runs_and_their_skate() -> None:
    """A ball at 30 fps, leg 1 long: planted and creeping 0.1 units in 0.5 s (0.2 leg lengths per second, under
    the 0.3 that counts as planted), a swing through the air, planted again and still. Two contacts, each
    without the frame whose move belongs to the swing; the first skates as far as it crept."""
    fps = 30.0
    creep = np.column_stack([np.linspace(0.0, 0.1, 15), np.zeros(15), np.zeros(15)])
    swing = np.column_stack([np.linspace(0.3, 1.2, 10), np.zeros(10), 0.2 * np.sin(np.linspace(0.3, 2.8, 10))])
    still = np.tile([1.3, 0.0, 0.005], (12, 1))
    ball = np.concatenate([creep, swing, still])
    contacts = mocap.foot_contacts(ball, fps=fps, leg_length=1.0, floor=0.0)
    assert [(c.start, c.stop) for c in contacts] == [(0, 14), (26, 37)]
    assert contacts[0].skate == pytest.approx(creep[13, 0])
    assert contacts[1].skate == pytest.approx(0.0)
    # Creeping faster than 0.3 leg lengths per second is not a contact; nor is a still spell shorter than 0.1 s.
    assert mocap.foot_contacts(2.0 * creep, fps=fps, leg_length=1.0, floor=0.0) == []
    assert mocap.foot_contacts(still[:2], fps=fps, leg_length=1.0, floor=0.0) == []
    # 0.1 s is 12 frames at the 120.0005 fps the importer sets for a Frame Time of .0083333.
    assert len(mocap.foot_contacts(np.zeros((12, 3)), fps=120.0005, leg_length=1.0, floor=0.0)) == 1
