"""``use_rotation``: the tip bone also turns to the target's orientation, as Blender's IK constraint does with
Rotation on. Targets are taken from poses the chain itself can make, so both position and orientation can
be reached; Blender's IK with Rotation is the peer on the same chain."""

from __future__ import annotations

import math

import bpy
import numpy as np
from mathutils import Matrix, Quaternion
from rigs import keyed_empty, make_chain

from fabrik_addon import api

from .oracle import FloatArray

FRAMES = range(1, 25)
TOLERANCE = 1e-3


def tip_matrices(armature: bpy.types.Object, tip: str) -> list[Matrix]:
    """The tip bone's world matrix (head, orientation) on each frame, as Blender evaluates it."""
    scene = bpy.context.scene
    matrices = []
    for frame in FRAMES:
        scene.frame_set(frame)
        matrices.append((armature.matrix_world @ armature.pose.bones[tip].matrix).copy())
    return matrices


def angles_deg(a: list[Matrix], b: list[Matrix]) -> FloatArray:
    """The turn between two orientations on each frame, in degrees (0 to 180)."""
    turns = np.array(
        [x.to_quaternion().rotation_difference(y.to_quaternion()).angle for x, y in zip(a, b, strict=True)]
    )
    return np.asarray(np.degrees(np.minimum(turns, 2 * math.pi - turns)), dtype=np.float64)


def reachable_target(armature: bpy.types.Object, names: list[str]) -> bpy.types.Object:
    """An Empty keyed, frame by frame, at the tip bone's tail with the tip bone's orientation, from a smooth
    sequence of poses of the chain: a target the chain can reach in position and orientation."""
    scene = bpy.context.scene
    random = np.random.default_rng(5)
    phases = random.uniform(0, 2 * np.pi, size=(len(names), 3))
    keys = []
    for frame in FRAMES:
        for k, name in enumerate(names):
            angles = 0.5 * np.sin(0.2 * frame + phases[k])
            armature.pose.bones[name].rotation_quaternion = (
                Quaternion((1, 0, 0), angles[0]) @ Quaternion((0, 0, 1), angles[2]) @ Quaternion((0, 1, 0), angles[1])
            )
        bpy.context.view_layer.update()
        tip = armature.pose.bones[names[-1]]
        world = armature.matrix_world @ tip.matrix
        keys.append((frame, armature.matrix_world @ tip.tail, world.to_quaternion()))
    for name in names:
        armature.pose.bones[name].rotation_quaternion = (1, 0, 0, 0)
    target = keyed_empty("Target", [(frame, tuple(location)) for frame, location, _ in keys])
    target.rotation_mode = "QUATERNION"
    for frame, _, rotation in keys:
        target.rotation_quaternion = rotation
        target.keyframe_insert("rotation_quaternion", frame=frame)
    scene.frame_start, scene.frame_end = FRAMES.start, FRAMES.stop - 1
    scene.frame_set(1)
    return target


def target_matrices(target: bpy.types.Object) -> list[Matrix]:
    scene = bpy.context.scene
    out = []
    for frame in FRAMES:
        scene.frame_set(frame)
        out.append(target.matrix_world.copy())
    return out


def test_the_tip_turns_with_the_target_as_blenders_ik_with_rotation_does() -> None:
    armature, names = make_chain(3, rolls=[0.3, -0.8, 1.2])
    target = reachable_target(armature, names)
    goals = target_matrices(target)

    report = api.bake(armature, target, tip_bone=names[-1], use_rotation=True)
    ours = tip_matrices(armature, names[-1])
    assert report.on_target
    assert angles_deg(ours, goals).max() < 0.05  # reachable: the tip takes the target's orientation

    twin, twin_names = make_chain(3, name="Twin", rolls=[0.3, -0.8, 1.2])
    ik = twin.pose.bones[twin_names[-1]].constraints.new("IK")
    ik.target, ik.chain_count, ik.use_rotation = target, 3, True
    theirs = tip_matrices(twin, twin_names[-1])
    scene = bpy.context.scene
    reached = []
    for frame in FRAMES:
        scene.frame_set(frame)
        reached.append(
            (twin.matrix_world @ twin.pose.bones[twin_names[-1]].tail - target.matrix_world.translation).length
        )
    blender_reaches = np.array(reached) <= TOLERANCE
    assert blender_reaches.any()
    assert angles_deg(ours, theirs)[blender_reaches].max() < 1.0


def test_a_weight_below_one_turns_the_tip_part_of_the_way() -> None:
    armature, names = make_chain(3, rolls=[0.3, -0.8, 1.2])
    target = reachable_target(armature, names)
    goals = target_matrices(target)
    api.bake(armature, target, tip_bone=names[-1])  # position only: the tip turns as it will
    free = tip_matrices(armature, names[-1])
    report = api.bake(armature, target, tip_bone=names[-1], use_rotation=True, rotation_weight=0.5)
    half = tip_matrices(armature, names[-1])
    to_goal, from_free = angles_deg(half, goals), angles_deg(free, goals)
    moving = from_free > 1.0
    assert moving.any()
    np.testing.assert_allclose(to_goal[moving], 0.5 * from_free[moving], rtol=0.25)
    assert report.error.max() <= TOLERANCE


def test_with_limits_the_tip_takes_the_nearest_orientation_they_allow() -> None:
    armature, names = make_chain(3, rolls=[0.3, -0.8, 1.2])
    target = reachable_target(armature, names)
    tip = armature.pose.bones[names[-1]]
    tip.lock_ik_y = True  # no twist allowed: the target's twist cannot be followed
    api.bake(armature, target, tip_bone=names[-1], use_rotation=True)
    scene = bpy.context.scene
    twists = []
    for frame in FRAMES:
        scene.frame_set(frame)
        twists.append(abs(tip.matrix_basis.to_quaternion().to_swing_twist("Y")[1]))
    assert max(twists) < 1e-4
