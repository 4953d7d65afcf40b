"""The feet of a rig found where none are named: every bone's tail sampled on frames spread over the planting's,
as Blender evaluates them, and on each leg that rests on the floor the bone below its thigh and shin taken for
its foot (``planting.foot_bones``), left then right."""

from __future__ import annotations

from dataclasses import replace

import bpy
import numpy as np

from ...planting import PlantSettings, foot_bones
from ...solver import FloatArray
from ..rig import armature_data
from .frames import keyed_frames

#: Frames sampled to find the feet, at most: enough to see each foot down several times.
SAMPLES = 48


def with_feet(settings: PlantSettings[bpy.types.Object]) -> tuple[PlantSettings[bpy.types.Object], bool]:
    """``settings`` with its feet found where it names none, and whether they were found.

    Raises
    ------
    ValueError
        Where no bone of the rig touches down, naming the rig and what to do.
    """
    if settings.feet:
        return settings, False
    armature = settings.armature
    bones = armature_data(armature).bones
    scene = bpy.context.scene
    assert scene is not None
    frames = keyed_frames(armature, settings.frames).resolved(scene.frame_start, scene.frame_end)
    names = [bone.name for bone in bones]
    parents = [names.index(bone.parent.name) if bone.parent is not None else -1 for bone in bones]
    tails, tops = _sampled(armature, names, frames)
    heads = np.array([bone.head_local[:] for bone in bones], dtype=np.float64).reshape(-1, 3)
    found = foot_bones(tails, tops, heads, parents, names)
    if not found.feet:
        raise ValueError(
            f"no bone of armature '{armature.name}' touches down on frames {frames.start}-{frames[-1]}: name the "
            "feet to plant (the bones from the ankle to the ball of each foot)"
        )
    feet = tuple(names[b] for b in found.feet)
    if settings.hips_bone in feet:
        raise ValueError(
            f"the feet found ({', '.join(feet)}) include the hips bone '{settings.hips_bone}': name the feet"
        )
    return replace(settings, feet=feet), True


def _sampled(armature: bpy.types.Object, names: list[str], frames: range) -> tuple[FloatArray, FloatArray]:
    """Every bone's tail in world space on up to ``SAMPLES`` frames spread over ``frames`` (S, B, 3), and the rig's
    highest point on each (S,); the scene's frame put back after."""
    scene = bpy.context.scene
    pose = armature.pose
    assert scene is not None
    assert pose is not None
    picks = np.unique(np.linspace(frames.start, frames[-1], min(SAMPLES, len(frames))).round().astype(int))
    tails = np.empty((len(picks), len(names), 3))
    tops = np.empty(len(picks))
    flat = np.empty(len(names) * 3, dtype=np.float32)
    current, subframe = scene.frame_current, scene.frame_subframe
    try:
        for i, frame in enumerate(picks.tolist()):
            scene.frame_set(frame)
            world = np.array(armature.matrix_world)
            pose.bones.foreach_get("tail", flat)
            tails[i] = flat.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
            pose.bones.foreach_get("head", flat)
            heads = flat.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
            tops[i] = max(float(tails[i, :, 2].max()), float(heads[:, 2].max()))
    finally:
        scene.frame_set(current, subframe=subframe)
    return tails, tops
