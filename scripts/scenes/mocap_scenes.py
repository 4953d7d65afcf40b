"""The motion-capture scenes the tests and the benchmark bake, each two ways: with FABRIK (``fabrik_bake``) and
with Blender's own IK constraint + Bake Action (``native_bake``), and measured the same way (``measure``).

A scene is a committed clip (``mocap.CLIPS``) imported with Blender's importer, chains of its bones and Empties
for their targets (and poles), and the legs whose knees' distance from their animated places the work on motion
capture is judged by:

- ``legs``: both legs (thigh and shin, toward the ankle), their targets exactly on the animated ankles (a bake
  that should change nothing), with ``poles`` a pole before each knee (the pole angle that faces it);
- ``pinned_feet``: the same legs, each ankle held where it is in the middle of each of its foot's contacts;
- ``retarget``: legs, arms and the spine shortened to ``factor`` of their lengths, their chains (the legs to
  the ball of the foot, the arms to the wrist, the spine to the top of the neck, the arms hanging below it)
  toward the tips' places in the clip as captured, the knees and elbows limited to the ranges the clip itself
  uses (the animation within them).

Everything here drives Blender through ``bpy`` and imports the add-on only for its bake (``fabrik_bake``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import bpy
import mocap
import numpy as np
from mathutils import Vector
from rigs import keyed_empty

from fabrik_addon.api import BakeSettings, ChainSettings, RigBakeReport, SolverSettings, bake_settings
from fabrik_addon.blender import compat

FloatArray = mocap.FloatArray
#: How close a tip must come to its target, scene units (the clips' own: CMU units or metres).
TOLERANCE = 1e-3


@dataclass(frozen=True)
class Chain:
    """A chain to bake: its tip bone and length, its target and (with one) pole and pole angle."""

    tip: str
    length: int
    target: bpy.types.Object
    pole: bpy.types.Object | None = None
    pole_angle: float = 0.0


@dataclass(frozen=True)
class Limb:
    """A limb to measure: the bones whose head is its root (hip, shoulder), its middle joint (knee, elbow) and
    whose tail is its end (ankle, wrist)."""

    root: str
    middle: str
    end: str


@dataclass(frozen=True)
class Scene:
    """A clip ready to bake.

    Attributes
    ----------
    armature : bpy.types.Object
    chains : tuple of Chain
    limbs : tuple of Limb
    animated : ndarray, shape (F, L, 3, 3)
        Each limb's root, middle and end as the clip plays them (before any bake), world space, per frame.
    frames : range
    """

    armature: bpy.types.Object
    chains: tuple[Chain, ...]
    limbs: tuple[Limb, ...]
    animated: FloatArray
    frames: range


@dataclass(frozen=True)
class Measures:
    """What a bake did to a scene, by Blender's evaluation of its keys on every frame.

    Attributes
    ----------
    middle_max, middle_mean : float
        How far the limbs' middle joints (the knees) are from their animated places: the largest, and the mean
        over limbs and frames, scene units.
    flips : int
        Frames where a limb's bend plane turns by more than 30 degrees while it is bent more than 10
        (``mocap.knee_flips``), over all limbs.
    animated_flips : int
        The same of the animation itself.
    on_target : float
        The share of frames where every chain's tip is within ``TOLERANCE`` of its target.
    max_error, mean_error : float
        The largest tip-to-target distance, and the mean over chains and frames, scene units.
    """

    middle_max: float
    middle_mean: float
    flips: int
    animated_flips: int
    on_target: float
    max_error: float
    mean_error: float


def _limbs(armature: bpy.types.Object) -> tuple[Limb, ...]:
    return tuple(Limb(leg.thigh, leg.knee, leg.shin) for leg in mocap.legs(armature).values())


def _animated(armature: bpy.types.Object, limbs: Sequence[Limb], frames: range) -> FloatArray:
    joints: list[mocap.Joint] = []
    for limb in limbs:
        joints += [(limb.root, "head"), (limb.middle, "head"), (limb.end, "tail")]
    return mocap.animated_joints(armature, joints, frames).reshape(len(frames), len(limbs), 3, 3)


def legs(clip: str, *, poles: bool = False) -> Scene:
    """Both legs of ``clip`` toward the animated ankles; with ``poles``, a pole before each knee."""
    armature = mocap.import_clip(clip)
    frames = mocap.scene_frames()
    limbs = _limbs(armature)
    animated = _animated(armature, limbs, frames)
    chains = []
    for side, leg in mocap.legs(armature).items():
        k = [limb.middle for limb in limbs].index(leg.knee)
        target = keyed_empty(f"{side} ankle", zip(frames, animated[:, k, 2].tolist(), strict=True))
        pole, angle = _pole_before(armature, leg.thigh, animated[:, k], frames, side) if poles else (None, 0.0)
        chains.append(Chain(leg.shin, 2, target, pole, angle))
    return Scene(armature, tuple(chains), limbs, animated, frames)


def _pole_before(
    armature: bpy.types.Object, thigh: str, joints: FloatArray, frames: range, side: str
) -> tuple[bpy.types.Object, float]:
    """A pole keyed a leg's length before the knee (along the thigh's Z axis, which the importer turns toward
    the front), and the pole angle that faces it: the thigh's X axis turned by 90 degrees toward Z."""
    forward = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        matrix = armature.matrix_world @ armature.pose.bones[thigh].matrix
        forward.append(np.array(matrix.col[2][:3]))
    length = np.linalg.norm(joints[0, 1] - joints[0, 0]) + np.linalg.norm(joints[0, 2] - joints[0, 1])
    places = joints[:, 1] + length * np.array(forward)
    return keyed_empty(f"{side} pole", zip(frames, places.tolist(), strict=True)), math.pi / 2


def pinned_feet(clip: str) -> Scene:
    """Both legs toward their ankles, each ankle held where it is in the middle of each contact of its foot."""
    armature = mocap.import_clip(clip)
    frames = mocap.scene_frames()
    limbs = _limbs(armature)
    animated = _animated(armature, limbs, frames)
    found = mocap.legs(armature)
    balls = {side: mocap.animated_positions(armature, leg.foot, frames, "tail") for side, leg in found.items()}
    floor = mocap.floor_height(*balls.values())
    chains = []
    for side, leg in found.items():
        k = [limb.middle for limb in limbs].index(leg.knee)
        ankle = animated[:, k, 2].copy()
        length = mocap.leg_length(armature, leg)
        for contact in mocap.foot_contacts(balls[side], fps=mocap.scene_fps(), leg_length=length, floor=floor):
            ankle[contact.start : contact.stop] = ankle[(contact.start + contact.stop) // 2]
        chains.append(Chain(leg.shin, 2, keyed_empty(f"{side} ankle", zip(frames, ankle.tolist(), strict=True))))
    return Scene(armature, tuple(chains), limbs, animated, frames)


def retarget(clip: str, factor: float = 0.8) -> Scene:
    """Legs, arms and spine shortened to ``factor`` of their lengths, their chains toward the tips' places as
    captured; knees and elbows limited to the ranges the clip uses."""
    armature = mocap.import_clip(clip)
    frames = mocap.scene_frames()
    found, arms, spine = mocap.legs(armature), mocap.arms(armature), mocap.spine(armature)
    tips: dict[str, mocap.Joint] = {
        **{f"{side} ball": (leg.foot, "tail") for side, leg in found.items()},
        **{f"{side} wrist": (arm.forearm, "tail") for side, arm in arms.items()},
        "neck": (spine[-2], "tail"),
    }
    captured = mocap.animated_joints(armature, list(tips.values()), frames)
    shortened = [
        *(name for leg in found.values() for name in (leg.thigh, leg.shin, leg.foot)),
        *(name for arm in arms.values() for name in (arm.upper, arm.forearm)),
        *spine[1:-1],
    ]
    shorten(armature, shortened, factor)
    for middle in (*(leg.knee for leg in found.values()), *(arm.elbow for arm in arms.values())):
        limit_to_clip(armature, middle, frames)
    limbs = _limbs(armature)
    animated = _animated(armature, limbs, frames)
    targets = {
        name: keyed_empty(name, zip(frames, captured[:, k].tolist(), strict=True)) for k, name in enumerate(tips)
    }
    chains = (
        *(Chain(leg.foot, 3, targets[f"{side} ball"]) for side, leg in found.items()),
        *(Chain(arm.forearm, 2, targets[f"{side} wrist"]) for side, arm in arms.items()),
        Chain(spine[-2], 4, targets["neck"]),
    )
    return Scene(armature, chains, limbs, animated, frames)


def locked_thighs(clip: str) -> Scene:
    """``retarget`` with Lock IK Y on both thighs, the legs' roots (a rig's usual setting: a thigh that cannot
    twist)."""
    scene = retarget(clip)
    for leg in mocap.legs(scene.armature).values():
        scene.armature.pose.bones[leg.thigh].lock_ik_y = True
    return scene


def shorten(armature: bpy.types.Object, names: Sequence[str], factor: float) -> None:
    """Make each bone of ``names`` ``factor`` of its length, moving what hangs from it along (its children keep
    their heads where they were from its tail): a skeleton of other proportions with the same animation.

    Every bone's new head and tail are worked out from where the bones were, then set with the bones
    disconnected (a connected bone's head drags its parent's tail, in an order that differs between Blender
    versions), and the connections made again."""
    scene = bpy.context.scene
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    bones = armature.data.edit_bones
    was = {bone.name: (bone.head.copy(), bone.tail.copy(), bone.use_connect) for bone in bones}
    shift = {name: (tail - head) * (factor - 1.0) for name, (head, tail, _) in was.items() if name in names}
    for bone in bones:
        bone.use_connect = False
    for bone in bones:
        head, tail, _ = was[bone.name]
        moved = sum((shift[above.name] for above in bone.parent_recursive if above.name in shift), Vector())
        bone.head, bone.tail = head + moved, tail + moved + shift.get(bone.name, Vector())
    for bone in bones:
        bone.use_connect = was[bone.name][2]
    bpy.ops.object.mode_set(mode="OBJECT")
    scene.frame_set(scene.frame_current)


def limit_to_clip(armature: bpy.types.Object, name: str, frames: range, margin: float = math.radians(5.0)) -> None:
    """Give a bone IK limits on every axis that hold the rotations the clip gives it (the swing about X and Z
    and the twist about Y, as Blender's IK limits measure them), and ``margin`` more: the animation lies within
    them, and a solve that bends the joint the other way cannot."""
    pose_bone = armature.pose.bones[name]
    swings, twists = [], []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        w, x, y, z = np.array(pose_bone.matrix_basis.to_quaternion())
        if w < 0:
            w, x, y, z = -w, -x, -y, -z
        size = math.hypot(w, y)
        tw, ty = w / size, y / size
        twists.append(2.0 * math.atan2(ty, tw))
        swing_x, swing_z = x * tw + z * ty, z * tw - x * ty  # the swing, after the twist: q = swing * twist
        swings.append((2.0 * math.asin(max(-1.0, min(1.0, swing_x))), 2.0 * math.asin(max(-1.0, min(1.0, swing_z)))))
    swing = np.array(swings)
    for axis, values in (("x", swing[:, 0]), ("y", np.array(twists)), ("z", swing[:, 1])):
        setattr(pose_bone, f"use_ik_limit_{axis}", True)
        setattr(pose_bone, f"ik_min_{axis}", max(-math.pi, min(0.0, float(values.min()) - margin)))
        setattr(pose_bone, f"ik_max_{axis}", min(math.pi, max(0.0, float(values.max()) + margin)))


def fabrik_bake(scene: Scene) -> tuple[float, RigBakeReport]:
    """Bake the scene's chains with FABRIK in one bake: the seconds it took, and its report."""
    chains = tuple(
        ChainSettings(scene.armature, c.target, c.tip, c.length, pole_target=c.pole, pole_angle=c.pole_angle)
        for c in scene.chains
    )
    start = time.perf_counter()
    report = bake_settings(BakeSettings(chains, solver=SolverSettings(tolerance=TOLERANCE)))
    return time.perf_counter() - start, report


def native_bake(scene: Scene) -> float:
    """Bake the scene's chains with Blender's IK constraints + Bake Action of their bones (visual keys,
    constraints cleared, into the current Action so the rest of the clip keeps playing): the seconds it
    took."""
    armature = scene.armature
    bones: set[str] = set()
    for chain in scene.chains:
        ik = armature.pose.bones[chain.tip].constraints.new("IK")
        assert isinstance(ik, bpy.types.KinematicConstraint)
        ik.target, ik.chain_count = chain.target, chain.length
        ik.pole_target, ik.pole_angle = chain.pole, chain.pole_angle
        bone = armature.data.bones[chain.tip]
        for _ in range(chain.length):
            bones.add(bone.name)
            bone = bone.parent
    return bake_kept_action(armature, bones, scene.frames)


def bake_kept_action(armature: bpy.types.Object, bones: set[str], frames: range) -> float:
    """Blender's Bake Action of ``bones`` over ``frames`` (visual keys, constraints cleared, into the current
    Action so the rest of the clip keeps playing), from Pose Mode with only them selected, back to Object Mode
    after: the seconds the bake took."""
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="POSE")
    for pose_bone in armature.pose.bones:
        compat.set_bone_selected(armature, pose_bone.name, pose_bone.name in bones)
    start = time.perf_counter()
    bpy.ops.nla.bake(
        frame_start=frames.start,
        frame_end=frames.stop - 1,
        only_selected=True,
        visual_keying=True,
        clear_constraints=True,
        use_current_action=True,
        bake_types={"POSE"},
    )
    seconds = time.perf_counter() - start
    bpy.ops.object.mode_set(mode="OBJECT")
    return seconds


def measure(scene: Scene) -> Measures:
    """Step every frame and read, as Blender evaluates the keys: each limb's joints, each chain's tip and
    target."""
    armature = scene.armature
    pose = armature.pose
    limbs = _animated(armature, scene.limbs, scene.frames)  # now that the bake is there
    errors = []
    for frame in scene.frames:
        bpy.context.scene.frame_set(frame)
        world = armature.matrix_world
        errors.append(
            [(world @ pose.bones[c.tip].tail - c.target.matrix_world.translation).length for c in scene.chains]
        )
    distance = np.linalg.norm(limbs[:, :, 1] - scene.animated[:, :, 1], axis=-1)
    flips = sum(len(mocap.knee_flips(*(limbs[:, k, j] for j in range(3)))) for k in range(len(scene.limbs)))
    animated = sum(len(mocap.knee_flips(*(scene.animated[:, k, j] for j in range(3)))) for k in range(len(scene.limbs)))
    error = np.array(errors)
    return Measures(
        float(distance.max()),
        float(distance.mean()),
        flips,
        animated,
        float(np.mean((error <= TOLERANCE).all(axis=1))),
        float(error.max()),
        float(error.mean()),
    )
