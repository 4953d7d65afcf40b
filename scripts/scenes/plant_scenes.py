"""Planting feet on the committed clips, with FABRIK (``api.plant_feet``) and, for comparison, with Blender's IK
constraint + Bake Action toward the same pins: the scenes, both bakes and what they measure (skate, knees,
flips, hips), for ``tests/blender/test_plant_feet.py`` and ``bench_plant.py``.

Blender's side is given what FABRIK found: an Empty per foot keyed on every frame where FABRIK's ball goes
(its goal, within the tolerance) and turned as the foot is animated, and the hips keyed as FABRIK lowered them;
an IK constraint per leg (foot, shin, thigh; Rotation on) toward it; then Bake Action of the legs' bones. So
both solve the same problem, and the time compared is each one's own: FABRIK's whole ``plant_feet`` (finding
contacts, the bake, the check) against Blender's constraints and Bake Action.
"""

from __future__ import annotations

import contextlib
import io
import math
import time
from dataclasses import dataclass

import bpy
import mocap
import numpy as np
from mathutils import Matrix
from mocap_scenes import bake_kept_action
from numpy.typing import NDArray
from rigs import link, scene

from fabrik_addon import api

FloatArray = NDArray[np.float64]
#: Plant Feet's tolerance, in leg lengths (its default).
TOLERANCE = 2e-4


@dataclass(frozen=True)
class Legs:
    """A clip's legs as animated, before any bake: per leg (Left, Right) the hip, knee, ankle and ball on each
    frame (F, 2, 4, 3), world space; and the feet's world matrices (F, 2, 4, 4)."""

    armature: bpy.types.Object
    legs: tuple[mocap.Leg, ...]
    joints: FloatArray
    feet: FloatArray
    frames: range

    @property
    def foot_names(self) -> list[str]:
        return [leg.foot for leg in self.legs]

    @property
    def lengths(self) -> FloatArray:
        """Each leg's length, hip to knee to ankle (scene units), as Plant Feet measures it (head to head)."""
        return np.asarray(np.linalg.norm(np.diff(self.joints[0, :, :3], axis=1), axis=-1).sum(axis=1))

    @property
    def leg_length(self) -> float:
        return float(self.lengths.mean())

    @property
    def tolerance(self) -> float:
        """Plant Feet's tolerance in scene units: ``TOLERANCE`` of the shorter leg."""
        return TOLERANCE * float(self.lengths.min())


def import_legs(clip: str) -> Legs:
    """Import ``clip`` and read its legs as animated: one of ``mocap.CLIPS`` at its frame rate over its frames, or
    any BVH file as a user imports it, with Blender's default settings (Scale 1, the scene's frame rate kept, one
    key a frame) into a scene of frames 1-250 at 24 fps, read over the frames Plant Feet plants by default."""
    if clip in mocap.CLIPS:
        return import_legs_of(mocap.import_clip(clip))
    scene().frame_start, scene().frame_end = 1, 250
    with contextlib.redirect_stdout(io.StringIO()):  # the importer prints its progress
        bpy.ops.import_anim.bvh(filepath=clip)
    armature = bpy.context.object
    assert armature is not None
    anim = armature.animation_data
    assert anim is not None
    assert anim.action is not None
    keys = anim.action.frame_range
    return import_legs_of(armature, range(max(1, round(keys[0])), min(250, round(keys[1])) + 1))


def import_legs_of(armature: bpy.types.Object, frames: range | None = None) -> Legs:
    """Read the legs of an imported clip's armature as animated over ``frames`` (the scene's by default): the
    legs of a known joint naming (``mocap.legs``), or those of the feet Plant Feet finds."""
    frames = frames or mocap.scene_frames()
    legs = tuple(_legs(armature))
    return Legs(armature, legs, leg_joints(armature, legs, frames), foot_matrices(armature, legs, frames), frames)


def _legs(armature: bpy.types.Object) -> list[mocap.Leg]:
    """Left and right legs by a known naming, or up from the feet Plant Feet finds (thigh and shin the two bones
    above the foot, as on a Character Creator rig: CC_Base_L_Thigh, CC_Base_L_Calf, CC_Base_L_Foot)."""
    try:
        return [mocap.legs(armature)[side] for side in mocap.SIDES]
    except ValueError:
        pass
    data = armature.data
    assert isinstance(data, bpy.types.Armature)
    bones = data.bones
    feet = list(api.detect_contacts(armature, mark=False))
    if len(feet) != len(mocap.SIDES):
        raise ValueError(f"armature '{armature.name}': Plant Feet finds the feet {feet}, not a left and a right one")
    legs = []
    for side, foot in zip(mocap.SIDES, feet, strict=True):
        shin = bones[foot].parent
        assert shin is not None
        assert shin.parent is not None
        toe = max(bones[foot].children, key=lambda c: len(c.children_recursive), default=bones[foot])
        legs.append(mocap.Leg(side, shin.parent.name, shin.name, foot, toe.name))
    return legs


def leg_joints(armature: bpy.types.Object, legs: tuple[mocap.Leg, ...], frames: range) -> FloatArray:
    """Hip, knee, ankle and ball of each leg on each frame, (F, L, 4, 3), as Blender evaluates them now."""
    joints: list[mocap.Joint] = []
    for leg in legs:
        joints += [(leg.thigh, "head"), (leg.shin, "head"), (leg.foot, "head"), (leg.foot, "tail")]
    return mocap.animated_joints(armature, joints, frames).reshape(len(frames), len(legs), 4, 3)


def foot_matrices(armature: bpy.types.Object, legs: tuple[mocap.Leg, ...], frames: range) -> FloatArray:
    """Each foot's world matrix on each frame, (F, L, 4, 4), as Blender evaluates it now."""
    pose = armature.pose
    assert pose is not None
    matrices = []
    for frame in frames:
        scene().frame_set(frame)
        matrices.append([np.array(armature.matrix_world @ pose.bones[leg.foot].matrix) for leg in legs])
    return np.array(matrices)


def fabrik_plant(legs: Legs, **options: object) -> tuple[float, api.PlantReport]:
    """``api.plant_feet`` of both feet (3-bone legs): its seconds and report."""
    start = time.perf_counter()
    report = api.plant_feet(legs.armature, legs.foot_names, **options)  # type: ignore[arg-type]
    return time.perf_counter() - start, report


def native_plant(legs: Legs, report: api.PlantReport, hips: str | None) -> float:
    """Blender's IK constraint + Bake Action toward the balls FABRIK's report gives, the hips lowered as
    FABRIK lowered them: the seconds of the constraints and the bake."""
    armature = legs.armature
    pose = armature.pose
    assert pose is not None
    frames = legs.frames
    if hips is not None:
        _copy_hips(report, armature, hips, frames)
    bones: set[str] = set()
    for k, leg in enumerate(legs.legs):
        goal = report.bake.chains[k].tips
        target = link(bpy.data.objects.new(f"{leg.side} pin", None))
        target.rotation_mode = "QUATERNION"
        for i, frame in enumerate(frames):
            matrix = Matrix(legs.feet[i, k].tolist())
            target.location = goal[i]
            target.rotation_quaternion = matrix.to_quaternion()
            target.keyframe_insert("location", frame=frame)
            target.keyframe_insert("rotation_quaternion", frame=frame)
        ik = pose.bones[leg.foot].constraints.new("IK")
        assert isinstance(ik, bpy.types.KinematicConstraint)
        ik.target, ik.chain_count, ik.use_rotation, ik.use_stretch = target, 3, True, False
        bones.update((leg.thigh, leg.shin, leg.foot))
    return bake_kept_action(armature, bones, frames)


def _copy_hips(report: api.PlantReport, armature: bpy.types.Object, hips: str, frames: range) -> None:
    """Key the hips' Location lowered by the report's drop in world space, as ``plant_feet`` keys them."""
    pose = armature.pose
    assert pose is not None
    pose_bone = pose.bones[hips]
    for i, frame in enumerate(frames):
        scene().frame_set(frame)
        hangs = armature.matrix_world @ pose_bone.matrix @ pose_bone.matrix_basis.inverted()
        move = np.linalg.solve(np.array(hangs.to_3x3()), [0.0, 0.0, -report.hips_drop[i]])
        pose_bone.location = tuple(np.array(pose_bone.location) + move)
        pose_bone.keyframe_insert("location", frame=frame)


@dataclass(frozen=True)
class Measures:
    """What a planting did, by Blender's evaluation of the keys: knees against the animation (largest and mean
    distance, scene units), knee flips (and the animation's own), the largest frame-to-frame jump of a knee's
    distance from its animated place, and the balls (F, L, 3)."""

    knee_max: float
    knee_mean: float
    flips: int
    animated_flips: int
    knee_jump: float
    balls: FloatArray


def measure(legs: Legs) -> Measures:
    """Step every frame and read the legs as Blender evaluates the keys now."""
    after = leg_joints(legs.armature, legs.legs, legs.frames)
    away = np.linalg.norm(after[:, :, 1] - legs.joints[:, :, 1], axis=-1)  # (F, L)
    flips = sum(len(mocap.knee_flips(*(after[:, k, j] for j in range(3)))) for k in range(len(legs.legs)))
    animated = sum(len(mocap.knee_flips(*(legs.joints[:, k, j] for j in range(3)))) for k in range(len(legs.legs)))
    jump = float(np.abs(np.diff(away, axis=0)).max())
    return Measures(float(away.max()), float(away.mean()), flips, animated, jump, after[:, :, 3])


def hips_step(report: api.PlantReport) -> float:
    """The largest change of the hips' drop from one frame to the next (scene units)."""
    return float(np.abs(np.diff(report.hips_drop)).max(initial=0.0))


def per_second(value: float, legs: Legs) -> float:
    """A length per frame as leg lengths per second."""
    return value / legs.leg_length * mocap.scene_fps()


def degrees(value: float) -> float:
    return math.degrees(value)
