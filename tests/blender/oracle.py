"""What the Blender tests hold a bake to: Blender's own evaluation as the oracle (step a frame, read the
evaluated pose), every key a bake could write, and the bake of a Rigify limb that the limit tests share. The
scenes themselves come from the shared builders, ``scripts/scenes/rigs.py``."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bpy
import numpy as np
from numpy.typing import NDArray
from rigs import LIMBS, scene

if TYPE_CHECKING:
    from fabrik_addon.blender.bake import BakeReport

FloatArray = NDArray[np.float64]


def bake_limb(
    armature: bpy.types.Object,
    limb: str,
    target: bpy.types.Object,
    pole: bpy.types.Object,
    pole_angle: float,
    frames: range,
    **options: Any,
) -> BakeReport:
    """``api.bake`` of the limb's two bones (see ``rigs.limb_rig``) over ``frames``, bending toward ``pole``."""
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


def file_digest() -> str:
    """A hash of the whole file as Blender would save it now, where saving is deterministic (4.5 and 5.0:
    two saves of unchanged data are byte for byte the same), so that any change to the file's data (keys,
    Actions, poses, settings, datablocks) changes it. The file also holds what was last evaluated, so the
    scene is evaluated at its frame first: the hash then depends on the data alone.

    Blender 4.2 writes run-time memory addresses into the file, so two saves of the same data differ: there
    the hash is of ``file_summary()`` instead, the data a bake could touch, value by value."""
    scene = bpy.context.scene
    scene.frame_set(scene.frame_current)
    if bpy.app.version < (4, 5, 0):
        return hashlib.sha256(repr(file_summary()).encode()).hexdigest()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "state.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, check_existing=False)
        return hashlib.sha256(path.read_bytes()).hexdigest()


def file_summary() -> dict[str, object]:
    """Everything a bake could touch, value by value: every datablock's name by kind, every Action's keys
    (``data_snapshot``), every object's transform, every pose bone's transform values, constraints and
    drivers, and the scene's frame."""
    summary: dict[str, object] = {"keys": data_snapshot(), "frame": bpy.context.scene.frame_current}
    for kind in ("actions", "armatures", "objects", "scenes", "collections", "meshes"):
        summary[kind] = sorted(datablock.name for datablock in getattr(bpy.data, kind))
    for obj in bpy.data.objects:
        summary[obj.name] = [tuple(obj.matrix_basis.col[i]) for i in range(4)]
        for pose_bone in obj.pose.bones if obj.pose is not None else ():
            summary[f"{obj.name}/{pose_bone.name}"] = (
                tuple(pose_bone.location),
                tuple(pose_bone.rotation_quaternion),
                tuple(pose_bone.rotation_euler),
                tuple(pose_bone.rotation_axis_angle),
                tuple(pose_bone.scale),
                [(c.name, c.enabled, c.influence) for c in pose_bone.constraints],
            )
        anim = obj.animation_data
        if anim is not None:
            summary[f"{obj.name}/drivers"] = sorted((d.data_path, d.array_index) for d in anim.drivers)
            summary[f"{obj.name}/blend"] = (anim.action_blend_type, anim.action_influence, len(anim.nla_tracks))
    return summary


def picture_colours(path: Path) -> dict[str, float]:
    """A rendered picture's share of white pixels, and how many are orange, green and red (the README pictures'
    colours: before, after, and an edit's target)."""
    image = bpy.data.images.load(str(path))
    pixels = np.empty(image.size[0] * image.size[1] * 4, dtype=np.float32)
    image.pixels.foreach_get(pixels)
    rgb = pixels.reshape(-1, 4)[:, :3]
    return {
        "white": float((rgb > 0.95).all(axis=1).mean()),
        "orange": float(((rgb[:, 0] > 0.8) & (rgb[:, 1] > 0.4) & (rgb[:, 1] < 0.8) & (rgb[:, 2] < 0.5)).sum()),
        "green": float(((rgb[:, 1] > 0.5) & (rgb[:, 0] < 0.5) & (rgb[:, 2] < 0.6)).sum()),
        "red": float(((rgb[:, 0] > 0.7) & (rgb[:, 1] < 0.35) & (rgb[:, 2] < 0.35)).sum()),
    }
