"""Soft reach on a real leg: a target sweeping out past the leg's reach, baked with and without it, measured by
Blender's own evaluation of the keys (the knee's bend per frame, the tip's distance to the target)."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from rigs import LIMBS, keyed_empty, limb_rig, world_location

from fabrik_addon import api

from .oracle import FloatArray, evaluated, fcurve_keys

FRAMES = range(1, 61)
SCALE = 2.0  # the rig is scaled, so soft reach (world units) must be scaled into the chain's own units


def _outward_leg() -> tuple[bpy.types.Object, bpy.types.Object, float]:
    """Rigify's leg (a hinged knee), the rig scaled by ``SCALE``, and a target sweeping along the leg from 80%
    to 110% of its reach, a little in front so the knee bends forward. Returns the rig, the target and the
    leg's reach in world units."""
    armature, tip, root, _ = limb_rig("leg")
    armature.scale = (SCALE,) * 3
    bpy.context.view_layer.update()
    bones = armature.data.bones
    hip = np.array(armature.matrix_world @ bones[root].head_local)
    end = np.array(armature.matrix_world @ bones[tip].tail_local)
    reach = SCALE * (bones[root].length + bones[tip].length)
    along = (end - hip) / np.linalg.norm(end - hip)
    front = np.array(LIMBS["leg"][2])
    direction = along - 0.08 * front
    direction /= np.linalg.norm(direction)
    share = np.linspace(0.8, 1.1, len(FRAMES))
    keys = [(f, tuple(hip + s * reach * direction)) for f, s in zip(FRAMES, share, strict=True)]
    return armature, keyed_empty("Target", keys), reach


def _knee_bends(armature: bpy.types.Object) -> FloatArray:
    """The angle between thigh and shin on each frame, degrees, as Blender evaluates the keys."""
    tip, root, _ = LIMBS["leg"]
    state = evaluated(armature, FRAMES, [root, tip])
    thigh = state["tails"][:, 0] - state["heads"][:, 0]
    shin = state["tails"][:, 1] - state["heads"][:, 1]
    cos = np.einsum("fi,fi->f", thigh, shin) / (np.linalg.norm(thigh, axis=1) * np.linalg.norm(shin, axis=1))
    return np.asarray(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def _bake(armature: bpy.types.Object, target: bpy.types.Object, **options: float) -> api.BakeReport:
    return api.bake(armature, target, tip_bone=LIMBS["leg"][0], chain_length=2, frame_start=1, frame_end=60, **options)


def test_a_leg_eases_straight_with_soft_reach_where_it_snaps_straight_without() -> None:
    armature, target, reach = _outward_leg()
    hard = _bake(armature, target)
    hard_step = np.abs(np.diff(_knee_bends(armature))).max()
    soft_reach = 0.05 * reach
    soft = _bake(armature, target, soft_reach=soft_reach)
    bends = _knee_bends(armature)
    soft_step = np.abs(np.diff(bends)).max()
    assert soft_step < 0.5 * hard_step, (soft_step, hard_step)
    assert bends.min() > 0.1  # never quite straight
    # The report is Blender's measure, and the frames eased short of the target count as out of reach.
    tips = evaluated(armature, FRAMES, [LIMBS["leg"][0]])["tails"][:, 0]
    goal = world_location(target, FRAMES)
    np.testing.assert_allclose(soft.error, np.linalg.norm(tips - goal, axis=1), atol=1e-6)
    hip = evaluated(armature, [1], [LIMBS["leg"][1]])["heads"][0, 0]
    distance = np.linalg.norm(goal - hip, axis=1)
    eased = distance > reach - soft_reach + 0.01 * reach
    kept = distance < reach - soft_reach
    assert set(np.array(FRAMES)[eased].tolist()) <= set(soft.unreachable_frames)
    assert not set(np.array(FRAMES)[kept].tolist()) & set(soft.unreachable_frames)
    assert soft.error[kept].max() <= 1e-3
    assert hard.error[kept].max() <= 1e-3
    # Out of reach, the hard leg is straight and the soft one short of straight by less than the easing.
    far = distance > reach
    assert (distance[far] - soft.error[far] < reach).all()
    assert (soft.error[far] - hard.error[far] < soft_reach).all()


def test_no_soft_reach_keys_what_a_bake_without_the_option_keys() -> None:
    armature, target, _ = _outward_leg()
    _bake(armature, target)
    plain = fcurve_keys(armature)
    api.clear(armature, tip_bone=LIMBS["leg"][0], chain_length=2, frame_start=1, frame_end=60)
    _bake(armature, target, soft_reach=0.0)  # from the same start: the keys are cleared
    assert fcurve_keys(armature) == plain


def test_a_negative_soft_reach_is_refused_before_anything_is_written() -> None:
    armature, target, _ = _outward_leg()
    with pytest.raises(ValueError, match=r"Soft Reach \(soft_reach\) must be a distance >= 0"):
        _bake(armature, target, soft_reach=-0.1)
    assert armature.animation_data is None or armature.animation_data.action is None


def test_a_soft_reach_as_long_as_the_chain_is_refused_before_anything_is_written() -> None:
    """Every frame would stop short of its target: a value that cannot be meant (scene units, not a share)."""
    armature, target, _ = _outward_leg()
    with pytest.raises(
        ValueError, match=r"Soft Reach \(soft_reach\) 10 m is as long as the chain of .* \(\d.* m\) or longer"
    ):
        _bake(armature, target, soft_reach=10.0)
    assert armature.animation_data is None or armature.animation_data.action is None
