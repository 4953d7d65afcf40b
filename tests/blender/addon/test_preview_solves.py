"""The live preview solves as the bake does: from the pose Blender evaluated, each unit is given what the bake's
own reading (``bake.current_inputs``) would give it and solved by the bake's unit (``Unit.solve``), in the bake's
order, so every bone it poses holds the bake's solve for that frame, to the last bit of the float32 Blender keeps
(or is left as it was, where the solve would move it by less than a millionth). On poles and bone targets, a
long chain and an arm toward another armature's bone (the creature), limits, stretch, a tip turned to its
target's rotation in each rotation mode, soft reach, a tree, and a chain hanging below another."""

from __future__ import annotations

import math
from collections.abc import Callable

import bpy
import numpy as np
import pytest
from rigs import (
    cone,
    creature_rig,
    ik_as_chains,
    keyed_empty,
    limited_hand,
    loop_path,
    make_chain,
    posed_targets,
    y_rig,
)

from fabrik_addon.blender.bake import Solved, current_inputs, moved_inputs, prepare_chain, solve_order, units
from fabrik_addon.blender.live import preview
from fabrik_addon.blender.live.pose_rows import UNCHANGED
from fabrik_addon.blender.properties import chain_settings, enabled_chains, settings_of, solver_settings
from fabrik_addon.blender.rig import rotation_property

from ..oracle import FloatArray
from .scenes import add_chain

FRAMES = range(1, 21)


def bakes_solve(armature: bpy.types.Object, frame: int) -> dict[tuple[str, str], FloatArray]:
    """What the bake's own path gives each bone of the armature's enabled chains at ``frame``, from the pose as
    Blender evaluated it last: its rotation values (and Y scale, with stretch), by (bone, property)."""
    solver = solver_settings(armature)
    chains = [prepare_chain(chain_settings(armature, item), solver) for _, item in enabled_chains(armature)]
    planned = units(chains, solver)
    inputs = [current_inputs(prepared) for prepared in chains]
    solved: list[Solved | None] = [None] * len(planned)
    found: dict[tuple[str, str], FloatArray] = {}
    for u, hangs in solve_order(planned):
        unit = planned[u]
        result = unit.solve(moved_inputs([inputs[i] for i in unit.members], hangs, solved), np.array([frame]), solver)
        solved[u] = result
        for k, pose_bone in enumerate(result.pose_bones):
            found[pose_bone.name, rotation_property(pose_bone.rotation_mode)] = result.channels[k][0]
            if result.y_scales is not None:
                found[pose_bone.name, "scale"] = np.array([1.0, result.y_scales[0, k], 1.0])
    return found


def creature() -> bpy.types.Object:
    armature, _ = creature_rig(FRAMES)
    for chain in ik_as_chains(armature):
        add_chain(armature, **chain)
    return armature


def limited() -> bpy.types.Object:
    armature, names = make_chain(6)
    for name in names:
        cone(armature.pose.bones[name], math.radians(20.0))
    target = keyed_empty("T", loop_path(FRAMES, (0.0, 0.0, 4.5), (1.5, 1.0, 0.5)))
    add_chain(armature, target=target, tip_bone=names[-1])
    return armature


def stretching() -> bpy.types.Object:
    armature, names = make_chain(4)
    for name in names:
        armature.pose.bones[name].ik_stretch = 0.3
    target = keyed_empty("T", loop_path(FRAMES, (0.0, 1.0, 3.5), (2.0, 2.0, 1.5)))  # in and out of reach
    add_chain(armature, target=target, tip_bone=names[-1], use_stretch=True)
    return armature


def turned_tip() -> bpy.types.Object:
    armature, names = make_chain(4)
    for name, mode in zip(names, ("QUATERNION", "XZY", "AXIS_ANGLE", "YXZ"), strict=True):
        armature.pose.bones[name].rotation_mode = mode
    target = keyed_empty("T", loop_path(FRAMES, (0.5, 0.5, 3.0), (0.8, 0.6, 0.4)))
    for frame in FRAMES:
        target.rotation_euler = (0.05 * frame, 0.1, -0.03 * frame)
        target.keyframe_insert("rotation_euler", frame=frame)
    add_chain(armature, target=target, tip_bone=names[-1], use_rotation=True, rotation_weight=0.6)
    return armature


def soft() -> bpy.types.Object:
    armature, names = make_chain(4)
    target = keyed_empty("T", loop_path(FRAMES, (0.0, 1.0, 3.5), (1.5, 1.5, 1.0)))  # in and out of reach
    pole = keyed_empty("Pole", loop_path(FRAMES, (2.0, 0.0, 2.0), (0.5, 0.5, 0.5)))
    add_chain(armature, target=target, tip_bone=names[-1], soft_reach=0.4)
    settings_of(armature).chains[0].pole_target = pole
    return armature


def tree() -> bpy.types.Object:
    armature, tips, bones = limited_hand()
    for tip, target in zip(tips, posed_targets(armature, tips, bones, FRAMES, spread=0.3), strict=True):
        add_chain(armature, target=target, tip_bone=tip)
    return armature


def hanging() -> bpy.types.Object:
    armature, tips, _ = y_rig(trunk=3, branch=3)
    trunk = keyed_empty("Trunk", loop_path(FRAMES, (0.3, 0.1, 1.35), (0.2, 0.1, 0.05)))
    branch = keyed_empty("Branch", loop_path(FRAMES, (0.8, 0.0, 2.3), (0.2, 0.2, 0.1)))
    add_chain(armature, target=trunk, tip_bone="trunk.002", chain_length=3)
    add_chain(armature, target=branch, tip_bone=tips[0], chain_length=3)
    return armature


@pytest.mark.parametrize("scene", [creature, limited, stretching, turned_tip, soft, tree, hanging])
def test_every_bone_the_preview_poses_holds_the_bakes_solve(scene: Callable[[], bpy.types.Object]) -> None:
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature = scene()
    settings = settings_of(armature)
    settings.live_preview = True
    for frame in range(2, 9):  # the preview's plan made and kept; each frame from the pose the last one left
        bpy.context.scene.frame_set(frame)
    assert preview.problems(armature) == {}
    for frame in (9, 13, 10):
        preview.pause(armature.session_uid, True)
        bpy.context.scene.frame_set(frame)  # Blender evaluates the frame; the preview waits
        wanted = bakes_solve(armature, frame)
        preview.pause(armature.session_uid, False)
        assert preview.follow(armature, frame)
        for (name, prop), values in wanted.items():
            now = np.array(getattr(armature.pose.bones[name], prop))
            exact = np.array_equal(now, values.astype(np.float32))
            assert exact or np.abs(now - values).max() <= UNCHANGED, (frame, name, prop, now, values)
        assert preview.problems(armature) == {}
