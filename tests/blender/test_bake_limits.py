"""Joint limits, pole targets and stretch on real rigs, with Blender's own IK constraint as the reference."""

from __future__ import annotations

import math

import bpy
import numpy as np
import pytest
from mathutils import Euler, Quaternion
from rigs import LIMBS, hinge, keyed_empty, limb_paths, limb_rig, link, loop_path, make_chain, world_location

from fabrik_addon import api
from fabrik_addon.blender import compat

from .oracle import bake_limb, evaluated, fcurve_keys

FRAMES = range(1, 41)
DEG = math.pi / 180
#: Blender stores rotations in float32: a limit is kept to this (radians) beyond the solver's 1e-6.
FLOAT32_SLACK = 1e-6


def _blender_ik(
    armature: bpy.types.Object,
    tip: str,
    target: bpy.types.Object,
    pole: bpy.types.Object,
    pole_angle: float,
    chain_count: int = 2,
) -> bpy.types.Object:
    """A copy of the rig solved by Blender's own IK constraint (same limits, chain, pole and angle), animated
    by a copy of the rig's Action if it has one: the pose Blender's IK starts from on each frame."""
    copy = armature.copy()
    copy.data = armature.data.copy()
    action = armature.animation_data.action if armature.animation_data else None
    copy.animation_data_clear()
    if action is not None:
        copy.animation_data_create().action = action.copy()
        if compat.SLOTTED_ACTIONS:
            copy.animation_data.action_slot = copy.animation_data.action.slots[0]
    link(copy)
    ik = copy.pose.bones[tip].constraints.new("IK")
    ik.target, ik.pole_target, ik.pole_angle = target, pole, pole_angle
    ik.chain_count, ik.use_tail, ik.use_stretch = chain_count, True, False
    return copy


@pytest.mark.parametrize("limb", ["leg", "arm"])
@pytest.mark.parametrize("pole_angle_deg", [-90.0, 0.0, 30.0, 135.0])
def test_a_hinged_limb_with_a_pole_bends_where_blenders_ik_bends_it(limb: str, pole_angle_deg: float) -> None:
    armature, _, _, hinge_range = limb_rig(limb)
    _bake_beside_blenders_ik(armature, limb, hinge_range, pole_angle_deg * DEG)


@pytest.mark.parametrize("limb", ["leg", "arm"])
def test_each_frame_starts_from_its_animated_pose_as_blenders_ik_does(limb: str) -> None:
    """Blender's IK turns each frame's animated pose to the pole and solves from there, and so does the bake:
    the upper bone keyed to twist and swing, and the joint to bend, change where the pole leaves the knee."""
    armature, tip, root, hinge_range = limb_rig(limb)
    upper, joint = armature.pose.bones[root], armature.pose.bones[tip]
    bend_sign = math.copysign(1.0, sum(hinge_range))
    for frame, twist, swing, bend in ((1, 0.0, 0.0, 20.0), (20, 40.0, 15.0, 60.0), (40, -30.0, -10.0, 35.0)):
        upper.rotation_quaternion = Euler((swing * DEG, twist * DEG, 0.0), "YXZ").to_quaternion()
        joint.rotation_quaternion = Quaternion((1.0, 0.0, 0.0), bend_sign * bend * DEG)
        upper.keyframe_insert("rotation_quaternion", frame=frame)
        joint.keyframe_insert("rotation_quaternion", frame=frame)
    _bake_beside_blenders_ik(armature, limb, hinge_range, 30 * DEG)


def _bake_beside_blenders_ik(
    armature: bpy.types.Object, limb: str, hinge_range: tuple[float, float], pole_angle: float
) -> None:
    """Bake the limb's two bones toward a moving target with a moving pole, and check the result against
    Blender's IK constraint with the same pole on a copy of the rig."""
    tip, root, _ = LIMBS[limb]
    low, high = hinge_range
    target, pole = limb_paths(armature, limb, FRAMES)
    reference = _blender_ik(armature, tip, target, pole, pole_angle)
    length = armature.data.bones[root].length + armature.data.bones[tip].length
    theirs = evaluated(reference, FRAMES, [root, tip])
    # matrix_basis is the pose the copy's channels give (the IK constraint does not change it): an animated
    # rig's copy must move through its own copy of the Action.
    assert armature.animation_data is None or not np.allclose(theirs["quats"][0], theirs["quats"][19])

    report = bake_limb(armature, limb, target, pole, pole_angle, FRAMES)
    ours = evaluated(armature, FRAMES, [root, tip])

    # Every frame's hinge: a turn about X only, within its range.
    quats = ours["quats"][:, 1]
    quats = quats * np.where(quats[:, :1] < 0, -1.0, 1.0)
    assert np.abs(quats[:, 2:]).max() <= FLOAT32_SLACK
    angles = 2 * np.arctan2(quats[:, 1], quats[:, 0])
    assert angles.min() >= low - 1e-6 - FLOAT32_SLACK
    assert angles.max() <= high + 1e-6 + FLOAT32_SLACK
    # The tip on target on every frame (the path stays within the limits), as the report says and Blender shows.
    targets = world_location(target, FRAMES)
    shown = np.linalg.norm(ours["tails"][:, 1] - targets, axis=1)
    np.testing.assert_allclose(report.error, shown, atol=1e-6)
    assert report.unreachable_frames == ()
    assert report.max_error <= 1e-3
    # The knee (elbow) where Blender's IK puts it.
    knee_gap = np.linalg.norm(ours["heads"][:, 1] - theirs["heads"][:, 1], axis=1)
    assert knee_gap.max() <= 0.01 * length, f"knee off by {knee_gap.max() / length:.2%} of the limb's length"


@pytest.mark.parametrize("pole_angle_deg", [-90.0, 30.0])
def test_a_longer_hinged_chain_bends_in_the_plane_blenders_ik_bends_it_in(pole_angle_deg: float) -> None:
    """Four bones, each below the first a hinge about the same X axis (a finger, an insect's leg), started a
    little bent as a rig's rest pose is: FABRIK and Blender's IK bend the joints differently, but in the same
    plane, the one the pole turned the chain into."""
    lengths = [1.0, 0.8, 0.6, 0.4]
    armature, names = make_chain(4, length=lengths, rolls=[0.0] * 4)
    for name in names:
        pose_bone = armature.pose.bones[name]
        pose_bone.rotation_quaternion = Quaternion((1.0, 0.0, 0.0), 10 * DEG)
        if name != names[0]:
            hinge(pose_bone, 0.0, 120 * DEG)
    target = keyed_empty("Target", loop_path(FRAMES, (0.3, 0.6, 1.6), (0.5, 0.3, 0.3)))
    pole = keyed_empty("Pole", loop_path(FRAMES, (0.0, 3.0, 1.5), (1.5, 0.3, 0.5)))
    reference = _blender_ik(armature, names[-1], target, pole, pole_angle_deg * DEG, chain_count=4)
    theirs = evaluated(reference, FRAMES, names)

    report = api.bake(
        armature,
        target,
        tip_bone=names[-1],
        frame_start=1,
        frame_end=40,
        pole_target=pole,
        pole_angle=pole_angle_deg * DEG,
    )
    assert report.unreachable_frames == ()
    ours = evaluated(armature, FRAMES, names)
    joints = np.concatenate([ours["heads"], ours["tails"][:, -1:]], axis=1)  # (F, 5, 3)
    their_joints = np.concatenate([theirs["heads"], theirs["tails"][:, -1:]], axis=1)
    targets = world_location(target, FRAMES)
    assert np.linalg.norm(their_joints[:, -1] - targets, axis=1).max() <= 1e-3  # Blender reaches them too
    # The plane Blender bends its chain in, on each frame: through its root, with the normal of its joints.
    normals = np.linalg.svd(their_joints - their_joints[:, :1])[2][:, -1]
    off_plane = np.abs(np.einsum("fjk,fk->fj", joints - joints[:, :1], normals))
    assert off_plane.max() <= 0.01 * sum(lengths), f"{off_plane.max() / sum(lengths):.2%} of the chain's length"
    assert not np.allclose(joints, their_joints, atol=0.01)  # bent differently in that plane: no trivial pass


def test_stretch_reaches_beyond_the_chain_and_clear_takes_it_back() -> None:
    armature, names = make_chain(3, length=[1.0, 0.8, 0.6])
    for name, share in zip(names, (0.2, 0.5, 1.0), strict=True):
        armature.pose.bones[name].ik_stretch = share
    armature.pose.bones[names[1]].lock_ik_y = True  # a limited chain: solved on the bones' rotations
    target = keyed_empty("Target", loop_path(FRAMES, (0.3, 0.2, 2.0), (0.8, 0.6, 0.5)))
    beyond = np.linalg.norm(world_location(target, FRAMES), axis=1) > 2.4
    assert beyond.any()
    assert not beyond.all()

    plain = api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=40)
    assert set(plain.unreachable_frames) == {f for f, b in zip(FRAMES, beyond, strict=True) if b}
    report = api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=40, use_stretch=True)
    assert report.unreachable_frames == ()
    assert report.max_error <= 1e-3
    tails = evaluated(armature, FRAMES, names)["tails"][:, -1]
    np.testing.assert_allclose(np.linalg.norm(tails - world_location(target, FRAMES), axis=1), report.error, atol=1e-6)
    scale_keys = {key: values for key, values in fcurve_keys(armature).items() if key[0].endswith(".scale")}
    assert {index for _, index in scale_keys} == {1}
    stretched = np.array([[v for _, v in scale_keys[(f'pose.bones["{n}"].scale', 1)]] for n in names])
    assert (stretched[:, beyond] > 1 + 1e-4).all()
    np.testing.assert_allclose(stretched[:, ~beyond], 1.0, atol=1e-6)

    api.clear(armature, tip_bone=names[-1], frame_start=1, frame_end=40)
    assert not any(key[0].endswith(".scale") for key in fcurve_keys(armature))


def _bad(armature: bpy.types.Object, target: bpy.types.Object, tip: str, **options: object) -> str:
    before = fcurve_keys(armature)
    with pytest.raises((TypeError, ValueError)) as raised:
        api.bake(armature, target, tip_bone=tip, frame_start=1, frame_end=5, **options)
    assert fcurve_keys(armature) == before
    return str(raised.value)


def test_bad_pole_and_stretch_input_is_named_and_writes_nothing() -> None:
    armature, names = make_chain(2)
    target = keyed_empty("Target", [(1, (0.5, 0.0, 1.5))])
    pole = keyed_empty("Pole", [(1, (0.0, -1.0, 1.0))])
    tip = names[-1]
    assert "pole_target must be a Blender Object" in _bad(armature, target, tip, pole_target="Pole")
    assert "cannot be the armature" in _bad(armature, target, tip, pole_target=armature)
    assert "cannot be the target 'Target' too" in _bad(armature, target, tip, pole_target=target)
    assert "Pole Angle (pole_angle) must be a finite number" in _bad(
        armature, target, tip, pole_target=pole, pole_angle=math.nan
    )
    assert "does not support joint limits, a pole target or stretch" in _bad(
        armature, target, tip, pole_target=pole, method="ccd"
    )
    assert "Stretch (use_stretch) must be True or False" in _bad(armature, target, tip, use_stretch="yes")
    armature.data.bones[tip].inherit_scale = "ALIGNED"
    assert "bone 'bone.001' has Inherit Scale 'ALIGNED'" in _bad(armature, target, tip, use_stretch=True)
    armature.data.bones[tip].inherit_scale = "FULL"
    pole.parent, pole.parent_type, pole.parent_bone = armature, "BONE", names[0]
    assert "the pole target 'Pole' is parented to the bone 'bone.000'" in _bad(armature, target, tip, pole_target=pole)
