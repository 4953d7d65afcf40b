"""api.bake on real rigs, checked by Blender's own evaluation of the written keys."""

from __future__ import annotations

import math
from typing import Any

import bpy
import numpy as np
import pytest
from mathutils import Quaternion
from rigs import keyed_empty, loop_path, make_chain, reach_loop, rigify_metarig, world_location, y_rig

from fabrik_addon import api
from fabrik_addon.blender import compat
from fabrik_addon.settings import BakeSettings, ChainSettings, FrameRange

from .oracle import FloatArray, evaluated, fcurve_keys

FRAMES = range(1, 61)
TOLERANCE = 1e-3


def check_bake(
    armature: bpy.types.Object,
    bones: list[str],
    target: bpy.types.Object,
    report: api.BakeReport,
    before: dict[str, FloatArray],
    *,
    tolerance: float = TOLERANCE,
) -> dict[str, FloatArray]:
    """The promises of a bake, as Blender evaluates the keys: returns Blender's evaluation after it."""
    frames = report.frames.tolist()
    after = evaluated(armature, frames, bones)
    goal = world_location(target, frames)
    error = np.linalg.norm(after["tails"][:, -1] - goal, axis=1)
    # The report says what Blender shows.
    np.testing.assert_allclose(report.error, error, rtol=0, atol=1e-9)
    assert report.max_error == pytest.approx(error.max())
    # The tip is on the target on every frame within reach.
    reachable = ~np.isin(report.frames, report.unreachable_frames)
    assert reachable.any()
    assert error[reachable].max() <= tolerance * 1.001, error[reachable].max()

    # Every segment (head to next head, and the tip bone) keeps its length; the root stays where its
    # parent puts it.
    def segments(state: dict[str, FloatArray]) -> FloatArray:
        joints = np.concatenate([state["heads"], state["tails"][:, -1:]], axis=1)
        return np.asarray(np.linalg.norm(np.diff(joints, axis=1), axis=2))

    np.testing.assert_allclose(segments(after), segments(before), rtol=1e-4)
    np.testing.assert_allclose(after["heads"][:, 0], before["heads"][:, 0], atol=1e-5)
    # Bones neither in the chain nor hanging from it are untouched.
    pose = armature.pose.bones
    moved = set(bones)
    for pb in pose:
        if pb.parent is not None and pb.parent.name in moved:
            moved.add(pb.name)
    still = [i for i, pb in enumerate(pose) if pb.name not in moved]
    np.testing.assert_allclose(after["matrices"][:, still], before["matrices"][:, still], atol=1e-6)
    return after


def bake_and_check(
    armature: bpy.types.Object, bones: list[str], target: bpy.types.Object, **options: Any
) -> tuple[api.BakeReport, dict[str, FloatArray]]:
    frames = range(options.get("frame_start", FRAMES.start), options.get("frame_end", FRAMES.stop - 1) + 1)
    keyed = list(frames)[:: int(options.get("frame_step", 1))]
    before = evaluated(armature, keyed if keyed[-1] == frames[-1] else [*keyed, frames[-1]], bones)
    report = api.bake(
        armature,
        target,
        tip_bone=bones[-1],
        chain_length=len(bones),
        frame_start=frames.start,
        frame_end=frames.stop - 1,
        tolerance=TOLERANCE,
        **options,
    )
    return report, check_bake(armature, bones, target, report, before)


def tip_rest_world(armature: bpy.types.Object, bone: str) -> tuple[float, float, float]:
    return tuple(armature.matrix_world @ armature.data.bones[bone].tail_local)


@pytest.mark.parametrize("bones", [2, 3, 16, 64])
def test_generated_chains_follow_the_target(bones: int) -> None:
    armature, names = make_chain(bones)
    target = keyed_empty("Target", reach_loop(float(bones), FRAMES))
    report, _ = bake_and_check(armature, names, target)
    assert report.bones == tuple(names)
    assert report.unreachable_frames == ()
    assert report.frames.tolist() == list(FRAMES)
    assert report.action == armature.animation_data.action


def test_out_of_reach_frames_are_reported_and_point_at_the_target() -> None:
    armature, names = make_chain(3)
    target = keyed_empty("Target", [(1, (0, 1.0, 2.0)), (11, (0, 4.0, 2.0)), (21, (0, 1.0, 2.0))])
    report = api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=21)
    distance = np.linalg.norm(world_location(target, range(1, 22)), axis=1)
    assert report.unreachable_frames == tuple(int(f) for f in np.arange(1, 22)[distance > 3.0])
    assert len(report.unreachable_frames) > 0
    far = np.isin(report.frames, report.unreachable_frames)
    np.testing.assert_allclose(report.error[far], distance[far] - 3.0, atol=1e-5)


def test_disconnected_chain() -> None:
    armature, names = make_chain(5, connected=False, gap=(0.2, -0.1, 0.15))
    target = keyed_empty("Target", loop_path(FRAMES, (0.3, 0, 2.0), (1.5, 1.2, 0.8)))
    bake_and_check(armature, names, target)


def test_chain_hanging_from_an_animated_parent_bone() -> None:
    armature, names = make_chain(4, parent_bone=True)
    parent = armature.pose.bones["parent"]
    parent.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (30, 0.8), (60, -0.5)):
        parent.rotation_euler = (angle, 0.3 * angle, 0.0)
        parent.keyframe_insert("rotation_euler", frame=frame)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0.5, 1.5), (1.2, 1.0, 0.6)))
    report, _ = bake_and_check(armature, names, target)
    assert report.bones == tuple(names)  # the parent is not part of the chain


def test_animated_rotated_uniformly_scaled_armature_object_keeps_its_own_keys() -> None:
    armature, names = make_chain(5)
    armature.scale = (2.5, 2.5, 2.5)
    for frame, angle, x in ((1, 0.0, 0.0), (60, 1.2, 3.0)):
        armature.rotation_euler = (0.3 * angle, 0.0, angle)
        armature.location = (x, 0.5 * x, 0.0)
        armature.keyframe_insert("rotation_euler", frame=frame)
        armature.keyframe_insert("location", frame=frame)
    target = keyed_empty("Target", loop_path(FRAMES, (1.5, 0.5, 6.0), (3.0, 2.5, 2.0)))
    bake_and_check(armature, names, target)
    paths = {fc.data_path for fc in compat.assigned_fcurves(armature)}
    assert {"location", "rotation_euler"} <= paths  # Blender's own Bake Action drops these


@pytest.mark.parametrize(
    ("kind", "tip", "length"),
    [
        ("human", "hand.L", 3),
        ("human", "spine.006", 7),  # spine.004 is disconnected
        ("horse", "tail.005", 5),
        ("horse", "neck.004", 4),
        ("cat", "tail.004", 4),
    ],
)
def test_rigify_metarigs(kind: str, tip: str, length: int) -> None:
    armature = rigify_metarig(kind)
    bpy.ops.object.mode_set(mode="OBJECT")
    names = list(api_chain(armature, tip, length))
    reach = sum(armature.data.bones[n].length for n in names)
    rest_tip = np.array(tip_rest_world(armature, tip))
    root = np.array(armature.matrix_world @ armature.data.bones[names[0]].head_local)
    center = root + 0.5 * (rest_tip - root)
    target = keyed_empty("Target", loop_path(FRAMES, tuple(center), (0.25 * reach, 0.2 * reach, 0.15 * reach)))
    assert np.linalg.norm(world_location(target, FRAMES) - root, axis=1).max() < 0.95 * reach
    report, _ = bake_and_check(armature, names, target)
    assert report.unreachable_frames == ()


def api_chain(armature: bpy.types.Object, tip: str, length: int) -> tuple[str, ...]:
    from fabrik_addon.blender.rig import chain_bone_names

    return chain_bone_names(armature, tip, length)


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "AXIS_ANGLE"])
def test_every_rotation_mode(mode: str) -> None:
    armature, names = make_chain(4)
    for name in names:
        armature.pose.bones[name].rotation_mode = mode
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 2.0), (1.8, 1.5, 1.0)))
    bake_and_check(armature, names, target)
    prop = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(mode, "rotation_euler")
    written = {(fc.data_path, fc.array_index) for fc in compat.assigned_fcurves(armature)}
    channels = 3 if prop == "rotation_euler" else 4
    assert written == {(f'pose.bones["{n}"].{prop}', i) for n in names for i in range(channels)}


def test_rotations_are_continuous_and_keep_the_input_twist() -> None:
    armature, names = make_chain(6)
    twists = [0.4 * (i - 2) for i in range(len(names))]
    for name, angle in zip(names, twists, strict=True):
        pb = armature.pose.bones[name]
        if name == names[2]:
            pb.rotation_mode = "ZXY"
            pb.rotation_euler = Quaternion((0, 1, 0), angle).to_euler("ZXY")
        else:
            pb.rotation_quaternion = Quaternion((0, 1, 0), angle)
    # A path that circles the chain twice: plenty of chances to flip.
    path = [(f, (2.5 * math.cos(f / 10), 2.5 * math.sin(f / 10), 2.0 + math.sin(f / 7))) for f in FRAMES]
    target = keyed_empty("Target", path)
    _, after = bake_and_check(armature, names, target)
    keys = {channel: np.array([value for _, value in points]) for channel, points in fcurve_keys(armature).items()}
    for name in names:
        pb = armature.pose.bones[name]
        if pb.rotation_mode == "QUATERNION":
            q = np.column_stack([keys[(f'pose.bones["{name}"].rotation_quaternion', i)] for i in range(4)])
            assert (np.sum(q[1:] * q[:-1], axis=1) > 0).all(), f"quaternion sign flip on {name}"
        else:
            e = np.column_stack([keys[(f'pose.bones["{name}"].rotation_euler', i)] for i in range(3)])
            assert np.abs(np.diff(e, axis=0)).max() < math.pi, f"Euler jump on {name}"
    # Twist about each bone's own axis (Y: the chain is connected) is what it was before the bake.
    for k, angle in enumerate(twists):
        q = after["quats"][:, k]
        twist = 2 * np.arctan2(q[:, 2], q[:, 0])  # the twist part about Y of (w, x, y, z)
        np.testing.assert_allclose(np.angle(np.exp(1j * (twist - angle))), 0.0, atol=1e-5)


def test_keys_inside_the_range_are_replaced_and_outside_kept() -> None:
    armature, names = make_chain(3)
    pb = armature.pose.bones[names[1]]
    for frame in (-10, 5, 30, 90):
        pb.rotation_quaternion = Quaternion((1, 0, 0), 0.01 * frame)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    other = armature.pose.bones[names[0]]
    other.location = (0.1, 0.2, 0.3)
    other.keyframe_insert("location", frame=7)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 1.8), (1.0, 0.8, 0.6)))
    bake_and_check(armature, names, target)
    keys = {channel: [frame for frame, _ in points] for channel, points in fcurve_keys(armature).items()}
    path = f'pose.bones["{names[1]}"].rotation_quaternion'
    assert keys[(path, 0)] == [-10.0, *map(float, FRAMES), 90.0]
    assert keys[(f'pose.bones["{names[0]}"].location', 0)] == [7.0]  # other channels untouched


def test_frame_step_keys_every_nth_frame_and_the_last() -> None:
    armature, names = make_chain(3)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 1.8), (1.0, 0.8, 0.6)))
    report, _ = bake_and_check(armature, names, target, frame_step=5)
    keyed = [*range(1, 61, 5), 60]  # 1, 6, ..., 56, and the end frame (Bake Action would stop at 56)
    assert report.frames.tolist() == keyed
    for fc in compat.assigned_fcurves(armature):
        assert [k.co[0] for k in fc.keyframe_points] == list(map(float, keyed))
    # A step that lands on the end keys it once.
    report = api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=21, frame_step=5)
    assert report.frames.tolist() == [1, 6, 11, 16, 21]


@pytest.mark.parametrize("method", ["fabrik", "ccd"])
@pytest.mark.parametrize("warm_start", [True, False])
def test_methods_and_warm_start(method: str, warm_start: bool) -> None:
    armature, names = make_chain(5)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 2.8), (2.0, 1.5, 1.0)))
    bake_and_check(armature, names, target, method=method, warm_start=warm_start, max_iterations=500)


def test_target_with_an_animated_parent_and_a_constraint() -> None:
    armature, names = make_chain(4)
    carrier = keyed_empty("Carrier", [(1, (0, 0, 0)), (60, (0.5, 0.5, 0))])
    carrier.rotation_euler = (0, 0, 0)
    carrier.keyframe_insert("rotation_euler", frame=1)
    carrier.rotation_euler = (0, 0, 2.0)
    carrier.keyframe_insert("rotation_euler", frame=60)
    target = keyed_empty("Target", [(1, (1.5, 0, 2.0)), (60, (1.0, 0.5, 2.5))])
    target.parent = carrier
    limit = target.constraints.new("LIMIT_LOCATION")
    limit.use_max_z, limit.max_z = True, 2.2
    bake_and_check(armature, names, target)


def test_bake_into_a_named_action_keeps_the_old_one() -> None:
    armature, names = make_chain(3)
    armature.pose.bones[names[0]].keyframe_insert("rotation_quaternion", frame=1)
    old = armature.animation_data.action
    old.use_fake_user = False
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 1.8), (1.0, 0.8, 0.6)))
    report, _ = bake_and_check(armature, names, target, action_name="Baked")
    assert report.action.name == "Baked"
    assert armature.animation_data.action == report.action
    assert old.use_fake_user  # not lost on save


def test_bake_into_an_action_another_object_uses_does_not_move_that_object() -> None:
    armature, names = make_chain(3)
    other = keyed_empty("Other", [(1, (0.0, 0.0, 0.0)), (60, (1.0, 2.0, 3.0))])
    shared = other.animation_data.action
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 1.8), (1.0, 0.8, 0.6)))
    before = world_location(other, FRAMES)
    if not compat.SLOTTED_ACTIONS:  # 4.2: an Action animates all its users with all its channels
        with pytest.raises(ValueError, match="also animates 'Other'"):
            api.bake(armature, target, tip_bone=names[-1], action_name=shared.name)
        assert armature.animation_data is None
        return
    bake_and_check(armature, names, target, action_name=shared.name)
    assert armature.animation_data.action == shared
    np.testing.assert_allclose(world_location(other, FRAMES), before)
    other_paths = {fc.data_path for fc in compat.assigned_fcurves(other)}
    assert other_paths == {"location"}  # no bone channels slipped into the other object's slot


def test_report_timings_cover_the_stages() -> None:
    armature, names = make_chain(3)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 1.8), (1.0, 0.8, 0.6)))
    report = api.bake(armature, target, tip_bone=names[-1])
    assert set(report.timings) == {"read scene", "solve", "write keys", "check keys"}
    assert 0 < sum(report.timings.values()) <= report.seconds
    assert report.iterations.shape == report.frames.shape


def test_first_keys_continue_from_the_existing_animation() -> None:
    armature, names = make_chain(3)
    quaternion_bone, euler_bone = armature.pose.bones[names[0]], armature.pose.bones[names[1]]
    euler_bone.rotation_mode = "XYZ"
    # On the first baked frame the bones sit at -identity and at a whole turn plus a bit; by the last frame
    # their old keys have moved back (a reference read there would pick the other sign and turn).
    for frame, w, z in ((1, -1.0, 2 * math.pi + 0.1), (20, 1.0, 0.1)):
        quaternion_bone.rotation_quaternion = (w, 0.0, 0.0, 0.0)
        quaternion_bone.keyframe_insert("rotation_quaternion", frame=frame)
        euler_bone.rotation_euler = (0.0, 0.0, z)
        euler_bone.keyframe_insert("rotation_euler", frame=frame)
    target = keyed_empty("Target", loop_path(range(1, 21), (0.5, 0, 1.8), (0.6, 0.5, 0.4)))
    api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=20)
    keys = {channel: points[0][1] for channel, points in fcurve_keys(armature).items()}
    assert keys[(f'pose.bones["{names[0]}"].rotation_quaternion', 0)] < 0
    assert abs(keys[(f'pose.bones["{names[1]}"].rotation_euler', 2)] - (2 * math.pi + 0.1)) < math.pi


def test_the_report_says_why_each_frame_misses() -> None:
    """A target that leaves the reach of a 4-bone chain on some frames: those are out of reach; soft reach
    eases others short of it; IK limits keep a limited chain from the rest; one iteration leaves a free chain
    short of targets within reach. Each frame off target has its cause, and the causes cover them all."""
    armature, names = make_chain(4)
    target = keyed_empty("Target", loop_path(FRAMES, (0.5, 0, 2.2), (3.0, 0.8, 0.6)))
    free = api.bake(armature, target, tip_bone=names[-1])
    far = free.off_target["out of reach"]
    assert free.off_target == {"out of reach": far}
    assert far == free.unreachable_frames
    soft = api.bake(armature, target, tip_bone=names[-1], soft_reach=0.3)
    assert soft.off_target["out of reach"] == far
    assert soft.off_target["soft reach"]
    hurried = api.bake(armature, target, tip_bone=names[-1], max_iterations=1)
    assert hurried.off_target["not converged"]
    for bone in armature.pose.bones:
        bone.use_ik_limit_x = bone.use_ik_limit_z = bone.lock_ik_y = True
        bone.ik_min_x = bone.ik_min_z = -0.2
        bone.ik_max_x = bone.ik_max_z = 0.2
    limited = api.bake(armature, target, tip_bone=names[-1])
    assert limited.off_target["IK limits"]
    for report in (free, soft, hurried, limited):
        named = sorted(frame for frames in report.off_target.values() for frame in frames)
        assert tuple(named) == report.off_target_frames


def test_the_report_puts_misses_down_to_the_key_error_goals_pulling_apart_and_a_turned_tip_out_of_reach() -> None:
    """Three misses once put down to the wrong cause: frames the keys kept (a Key Error of 2 cm over a tolerance
    of 0.1 mm) hold within the Key Error were "the scene" (109 of 120 frames); a Y whose branches' goals are each
    within reach alone but not together was "not converged" (more iterations do not help); a tip bone turned to
    its target (pointing away from the root) whose head the bones above cannot reach was "not converged"."""
    armature, names = make_chain(4)
    bpy.context.scene.frame_end = 120
    target = keyed_empty("Target", loop_path(range(1, 121), (0.5, 0, 2.2), (1.0, 0.8, 0.6)))
    kept = api.bake(armature, target, tip_bone=names[-1], tolerance=1e-4, key_error=0.02)
    assert kept.off_target_frames
    assert kept.max_error <= 1e-4 + 0.02
    assert kept.off_target == {"within key error": kept.off_target_frames}

    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 5
    armature, tips, _ = y_rig()
    goals = [keyed_empty(f"Goal {x}", [(1, (x, 0.0, 1.0)), (5, (x, 0.3 * x / 3.5, 1.0))]) for x in (3.5, -3.5)]
    for goal, tip in zip(goals, tips, strict=True):  # each alone: on target
        assert api.bake(armature, goal, tip_bone=tip, frame_end=5).on_target
    both = (ChainSettings(armature, goal, tip, 0) for goal, tip in zip(goals, tips, strict=True))
    tree = api.bake_settings(BakeSettings(tuple(both), FrameRange(1, 5)))
    for chain in tree.chains:
        assert chain.off_target == {"goals apart": (1, 2, 3, 4, 5)}

    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature, names = make_chain(3)  # 1 unit a bone, up +Z
    turned = keyed_empty("Turned", [(1, (0.0, 0.3, 2.8)), (5, (0.0, -0.3, 2.8))])
    turned.rotation_euler = (math.pi, 0.0, 0.0)  # the tip's head a bone's length off, 3 units from the root
    report = api.bake(armature, turned, tip_bone=names[-1], use_rotation=True, tolerance=1e-4, frame_end=5)
    assert report.off_target == {"out of reach": (1, 2, 3, 4, 5)}
