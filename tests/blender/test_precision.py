"""Tight tolerances on Rigify's legs, whose thigh points nearly opposite its parent, the spine: Blender's
float32 bone matrices there are sheared by a few 1e-6, and the bake must model the chain as Blender poses
it (inverting those matrices, not transposing them) for the report to keep its promise within 1e-6."""

from __future__ import annotations

import math

import bpy
import numpy as np
import pytest
from rigs import keyed_empty, limb_paths, limb_rig, loop_path, rigify_metarig, world_location

from fabrik_addon import api
from fabrik_addon.blender.rig import read_chain

from .oracle import bake_limb, evaluated

FRAMES = range(1, 41)


def _check_within_tolerance(
    armature: bpy.types.Object, target: bpy.types.Object, tip: str, report: api.BakeReport, tolerance: float
) -> None:
    """The report says what Blender shows, and every frame it calls reached is within ``tolerance``."""
    shown = np.linalg.norm(evaluated(armature, FRAMES, [tip])["tails"][:, 0] - world_location(target, FRAMES), axis=1)
    np.testing.assert_allclose(report.error, shown, rtol=0, atol=1e-9)
    assert report.unreachable_frames == ()
    over = report.frames[report.error > tolerance].tolist()
    assert not over, f"frames {over} are over the tolerance (max error {report.max_error:.3g}) but called reached"
    assert report.max_error <= tolerance


def test_a_limited_leg_with_a_pole_keeps_a_tight_tolerance() -> None:
    """Solved on the bones' rotations (a hinged knee and a pole): the thigh's sheared rest frame once put
    Blender's pose 3e-6 away from the solver's, so frames ended at 1.2e-5 from a target aimed within 1e-5."""
    tolerance = 1e-5
    armature, tip, root, _ = limb_rig("leg")
    target, pole = limb_paths(armature, "leg", FRAMES)
    report = bake_limb(armature, "leg", target, pole, math.radians(30), FRAMES, tolerance=tolerance)
    assert report.bones == (root, tip)
    _check_within_tolerance(armature, target, tip, report, tolerance)


@pytest.mark.parametrize("moved", [False, True], ids=["in place", "moved, turned and scaled"])
@pytest.mark.parametrize(("tip", "chain_length"), [("shin.L", 2), ("foot.L", 3)])
def test_a_free_leg_keeps_a_tight_tolerance(tip: str, chain_length: int, moved: bool) -> None:
    """Solved as points (no limits, no pole), from the thigh down: the thigh's sheared root frame, turned
    back by its transpose, once left every frame 3e-6 from a target aimed within 1e-6."""
    tolerance = 1e-6
    armature = rigify_metarig("human")
    bpy.ops.object.mode_set(mode="OBJECT")
    if moved:
        armature.location = (0.4, -1.3, 0.2)
        armature.rotation_euler = (0.3, -0.2, 1.1)
        armature.scale = (1.7, 1.7, 1.7)
        bpy.context.view_layer.update()
    chain = read_chain(armature, tip, chain_length)
    assert chain.bone_names[0] == "thigh.L"
    assert not chain.limits.any  # the points path
    bones = armature.data.bones
    hip = np.array(armature.matrix_world @ bones["thigh.L"].head_local)
    end = np.array(armature.matrix_world @ bones[tip].tail_local)
    reach = np.linalg.norm(end - hip)
    back = np.array(armature.matrix_world.col[1][:3])  # the rig's +Y, the way its knee bends
    center = hip + 0.7 * (end - hip) + 0.1 * reach * back / np.linalg.norm(back)
    target = keyed_empty("Target", loop_path(FRAMES, tuple(center), (0.12 * reach, 0.1 * reach, 0.1 * reach)))
    report = api.bake(
        armature,
        target,
        tip_bone=tip,
        chain_length=chain_length,
        frame_start=FRAMES.start,
        frame_end=FRAMES.stop - 1,
        tolerance=tolerance,
    )
    _check_within_tolerance(armature, target, tip, report, tolerance)
