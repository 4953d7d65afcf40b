"""Benchmark: api.bake against Blender's own IK constraint + Bake Action, side by side in one process.

For each chain (4, 16, 48 and 64 bones) and length (250 and 1,000 frames), the same armature and the same
target path are baked twice from a fresh file: once with ``fabrik_addon.api.bake``, once with an IK
constraint (chain count = the chain, Use Tail) followed by
``bpy.ops.nla.bake(visual_keying=True, clear_constraints=True)``. Both results are measured the same way,
by Blender's own evaluation: step each frame and read the tip bone's tail.

Run with the bpy module: ``.venv/bin/python scripts/bench_bake.py [--quick]``
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fabrik_addon import api
from fabrik_addon.blender import compat
from fabrik_addon.solver._validate import FloatArray

TOLERANCE = 1e-3


def build_scene(bones: int, frames: int) -> tuple[bpy.types.Object, bpy.types.Object]:
    """A fresh file with a chain of unit bones up +Z (rolled bones) and an Empty keyed on a smooth path."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    data = bpy.data.armatures.new("Chain")
    armature = bpy.data.objects.new("Chain", data)
    scene.collection.objects.link(armature)
    bpy.context.view_layer.objects.active = armature
    armature.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for i in range(bones):
        bone = data.edit_bones.new(f"bone.{i:03d}")
        bone.head, bone.tail = Vector((0, 0, i)), Vector((0, 0, i + 1))
        bone.roll = 0.7 * i
        if parent is not None:
            bone.parent, bone.use_connect = parent, True
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"
    target = bpy.data.objects.new("Target", None)
    scene.collection.objects.link(target)
    for frame in range(1, frames + 1):
        t = 2 * math.pi * (frame - 1) / frames
        target.location = (
            bones * 0.5 * math.sin(2 * t),
            bones * 0.4 * math.cos(3 * t),
            bones * (0.35 + 0.25 * math.sin(t)),
        )
        target.keyframe_insert("location", frame=frame)
    return armature, target


def tip_errors(armature: bpy.types.Object, target: bpy.types.Object, frames: int) -> FloatArray:
    """Blender's evaluation: the tip bone's tail against the target on every frame."""
    scene = bpy.context.scene
    tip = armature.pose.bones[-1]
    errors = []
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        errors.append((armature.matrix_world @ tip.tail - target.matrix_world.translation).length)
    return np.array(errors)


def fabrik(bones: int, frames: int) -> tuple[float, FloatArray, dict[str, float]]:
    armature, target = build_scene(bones, frames)
    start = time.perf_counter()
    report = api.bake(armature, target, tip_bone=armature.pose.bones[-1].name, tolerance=TOLERANCE)
    seconds = time.perf_counter() - start
    errors = tip_errors(armature, target, frames)
    assert np.allclose(errors, report.error, atol=1e-9), "the report should say what Blender shows"
    return seconds, errors, report.timings


def native(bones: int, frames: int) -> tuple[float, FloatArray]:
    armature, target = build_scene(bones, frames)
    ik = armature.pose.bones[-1].constraints.new("IK")
    ik.target, ik.chain_count, ik.use_tail = target, bones, True
    bpy.ops.object.mode_set(mode="POSE")
    for pose_bone in armature.pose.bones:
        compat.set_bone_selected(armature, pose_bone.name, True)
    start = time.perf_counter()
    bpy.ops.nla.bake(
        frame_start=1,
        frame_end=frames,
        only_selected=True,
        visual_keying=True,
        clear_constraints=True,
        bake_types={"POSE"},
    )
    seconds = time.perf_counter() - start
    bpy.ops.object.mode_set(mode="OBJECT")
    assert not armature.pose.bones[-1].constraints, "Bake Action should have removed the IK constraint"
    return seconds, tip_errors(armature, target, frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only 250 frames")
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    print(f"Blender {bpy.app.version_string}; tolerance {TOLERANCE}; times in ms per frame; errors in scene units")
    print(
        f"{'bones':>5} {'frames':>6} | {'FABRIK':>7} {'native':>7} {'speed-up':>8} | "
        f"{'FABRIK max err':>14} {'native max err':>14} {'native on target':>16} | FABRIK time: read/solve/write/check"
    )
    for frames in (250,) if args.quick else (250, 1000):
        for bones in (4, 16, 48, 64):
            ours, our_errors, timings = fabrik(bones, frames)
            theirs, their_errors = native(bones, frames)
            split = "/".join(
                f"{timings[k] / frames * 1e3:.3f}" for k in ("read scene", "solve", "write keys", "check keys")
            )
            print(
                f"{bones:>5} {frames:>6} | {ours / frames * 1e3:>7.3f} {theirs / frames * 1e3:>7.3f} "
                f"{theirs / ours:>7.1f}x | {our_errors.max():>14.2e} {their_errors.max():>14.2e} "
                f"{np.mean(their_errors <= TOLERANCE):>16.1%} | {split}"
            )
            assert np.mean(our_errors <= TOLERANCE) >= 0.99, f"FABRIK off target on {bones} bones"


if __name__ == "__main__":
    main()
