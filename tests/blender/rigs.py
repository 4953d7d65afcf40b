"""Scenes for the Blender tests: generated chains, Rigify's metarigs, animated targets, and Blender's own
evaluation as the oracle (step a frame, read the evaluated pose)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import bpy
import numpy as np
from mathutils import Vector
from numpy.typing import NDArray

if TYPE_CHECKING:
    from fabrik_addon.blender.bake import BakeReport

FloatArray = NDArray[np.float64]


def scene() -> bpy.types.Scene:
    current = bpy.context.scene
    assert current is not None
    return current


def link(obj: bpy.types.Object) -> bpy.types.Object:
    scene().collection.objects.link(obj)
    return obj


def make_chain(
    bones: int,
    *,
    name: str = "Rig",
    length: float | Sequence[float] = 1.0,
    rolls: Sequence[float] | None = None,
    connected: bool = True,
    gap: Sequence[float] = (0.0, 0.0, 0.0),
    parent_bone: bool = False,
) -> tuple[bpy.types.Object, list[str]]:
    """An armature with a chain of ``bones`` bones up +Z, each rolled by ``rolls`` (a different roll per
    bone by default). Disconnected bones start ``gap`` away from their parent's tail. With
    ``parent_bone`` the chain hangs from an extra bone "parent" (returned names exclude it)."""
    data = bpy.data.armatures.new(name)
    obj = link(bpy.data.objects.new(name, data))
    lengths = [length] * bones if isinstance(length, (int, float)) else list(length)
    rolls = [0.7 * i - 1.0 for i in range(bones)] if rolls is None else list(rolls)
    _edit(obj)
    head = Vector((0.0, 0.0, 0.0))
    parent = None
    if parent_bone:
        parent = data.edit_bones.new("parent")
        parent.head, parent.tail = Vector((0, 0, -1.0)), head.copy()
    names = []
    for i in range(bones):
        bone = data.edit_bones.new(f"bone.{i:03d}")
        if i > 0 and not connected:
            head = head + Vector(gap)
        bone.head, bone.tail = head, head + Vector((0.0, 0.0, lengths[i]))
        bone.roll = rolls[i]
        if parent is not None:
            bone.parent = parent
            bone.use_connect = connected and (i > 0 or parent_bone)
        head = bone.tail.copy()
        parent = bone
        names.append(bone.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj, names


def _edit(obj: bpy.types.Object) -> None:
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")


def rigify_metarig(kind: str = "human") -> bpy.types.Object:
    """One of Rigify's metarigs (shipped in the bpy wheel): human, cat, wolf, horse, bird, shark..."""
    bpy.ops.preferences.addon_enable(module="rigify")
    getattr(bpy.ops.object, f"armature_{kind}_metarig_add")()
    obj = bpy.context.object
    assert obj is not None
    assert obj.type == "ARMATURE"
    return obj


#: (tip bone, its parent, the world direction the joint bends its tip toward: a knee back, an elbow forward).
LIMBS = {"leg": ("shin.L", "thigh.L", (0.0, 1.0, 0.0)), "arm": ("forearm.R", "upper_arm.R", (0.0, -1.0, 0.0))}


def limb_rig(limb: str) -> tuple[bpy.types.Object, str, str, tuple[float, float]]:
    """A Rigify human metarig whose knee (or elbow) is a hinge about X bending 0 to 150 degrees the natural
    way. Returns the rig, the tip and root bone names, and the hinge's range in radians."""
    armature = rigify_metarig("human")
    bpy.ops.object.mode_set(mode="OBJECT")
    tip, root, bend = LIMBS[limb]
    joint = armature.pose.bones[tip]
    # A turn about X by a positive angle moves the bone's tail toward its own Z axis.
    z_axis = np.array(armature.data.bones[tip].matrix_local.col[2][:3])
    sign = 1.0 if np.dot(z_axis, bend) > 0 else -1.0
    low, high = sorted((0.0, sign * math.radians(150)))
    joint.lock_ik_y = joint.lock_ik_z = True
    joint.use_ik_limit_x = True
    joint.ik_min_x, joint.ik_max_x = low, high
    return armature, tip, root, (low, high)


def limb_paths(armature: bpy.types.Object, limb: str, frames: range) -> tuple[bpy.types.Object, bpy.types.Object]:
    """A target moving near the limb's rest tip, pulled in so the joint bends, and a pole moving in front of
    the joint on the side it bends away from, keyed on ``frames``."""
    tip, root, bend = LIMBS[limb]
    bones = armature.data.bones
    hip = np.array(armature.matrix_world @ bones[root].head_local)
    joint = np.array(armature.matrix_world @ bones[tip].head_local)
    end = np.array(armature.matrix_world @ bones[tip].tail_local)
    length = bones[root].length + bones[tip].length
    center = hip + 0.7 * (end - hip) + 0.1 * length * np.array(bend)
    target = keyed_empty("Target", loop_path(frames, tuple(center), (0.12 * length, 0.1 * length, 0.1 * length)))
    pole_center = joint - 0.6 * length * np.array(bend)
    pole = keyed_empty("Pole", loop_path(frames, tuple(pole_center), (0.3 * length, 0.05 * length, 0.1 * length)))
    return target, pole


def bake_limb(
    armature: bpy.types.Object,
    limb: str,
    target: bpy.types.Object,
    pole: bpy.types.Object,
    pole_angle: float,
    frames: range,
    **options: Any,
) -> BakeReport:
    """``api.bake`` of the limb's two bones (see ``limb_rig``) over ``frames``, bending toward ``pole``."""
    from fabrik_addon import api

    return api.bake(
        armature,
        target,
        tip_bone=LIMBS[limb][0],
        chain_length=2,
        frame_start=frames.start,
        frame_end=frames.stop - 1,
        pole_target=pole,
        pole_angle=pole_angle,
        **options,
    )


def keyed_empty(name: str, path: Iterable[tuple[int, Sequence[float]]]) -> bpy.types.Object:
    """An Empty keyed at (frame, location) pairs, linearly interpolated."""
    bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"
    empty = link(bpy.data.objects.new(name, None))
    for frame, location in path:
        empty.location = location
        empty.keyframe_insert("location", frame=frame)
    return empty


def loop_path(
    frames: range, center: Sequence[float], radius: Sequence[float]
) -> list[tuple[int, tuple[float, float, float]]]:
    """A smooth closed path (a Lissajous figure) through the given frames."""
    points: list[tuple[int, tuple[float, float, float]]] = []
    for frame in frames:
        t = 2 * math.pi * (frame - frames.start) / len(frames)
        points.append(
            (
                frame,
                (
                    center[0] + radius[0] * math.sin(2 * t),
                    center[1] + radius[1] * math.cos(3 * t),
                    center[2] + radius[2] * math.sin(t),
                ),
            )
        )
    return points


def evaluated(obj: bpy.types.Object, frames: Iterable[int], bones: Sequence[str]) -> dict[str, FloatArray]:
    """Blender's evaluation, the oracle: per frame the world heads and tails of ``bones`` (F, m, 3), the
    world matrices of all pose bones (F, all, 4, 4) and each bone's local rotation quaternion (F, m, 4)."""
    heads, tails, matrices, quats = [], [], [], []
    for frame in frames:
        scene().frame_set(frame)
        world = obj.matrix_world
        heads.append([tuple(world @ obj.pose.bones[b].head) for b in bones])
        tails.append([tuple(world @ obj.pose.bones[b].tail) for b in bones])
        matrices.append([np.array(world @ pb.matrix) for pb in obj.pose.bones])
        quats.append([tuple(obj.pose.bones[b].matrix_basis.to_quaternion()) for b in bones])
    return {
        "heads": np.array(heads),
        "tails": np.array(tails),
        "matrices": np.array(matrices),
        "quats": np.array(quats),
    }


def world_location(obj: bpy.types.Object, frames: Iterable[int]) -> FloatArray:
    points: list[tuple[float, ...]] = []
    for frame in frames:
        scene().frame_set(frame)
        points.append(tuple(obj.matrix_world.translation))
    return np.array(points)


def fcurve_keys(obj: bpy.types.Object) -> dict[tuple[str, int], list[tuple[float, float]]]:
    """Every key of the object's active Action, by (data path, index)."""
    from fabrik_addon.blender import compat

    return {
        (fc.data_path, fc.array_index): [tuple(k.co) for k in fc.keyframe_points] for fc in compat.assigned_fcurves(obj)
    }


def data_snapshot() -> dict[str, object]:
    """A summary of everything a bake could write: Actions, their F-curves and keys, object animation."""
    from fabrik_addon.blender import compat

    snapshot: dict[str, object] = {"actions": sorted(a.name for a in bpy.data.actions)}
    for obj in bpy.data.objects:
        anim = obj.animation_data
        snapshot[obj.name] = (
            None
            if anim is None
            else (
                anim.action.name if anim.action else None,
                sorted(
                    (fc.data_path, fc.array_index, tuple(tuple(k.co) for k in fc.keyframe_points))
                    for fc in compat.assigned_fcurves(obj)
                ),
            )
        )
    return snapshot
