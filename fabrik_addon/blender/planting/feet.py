"""The legs of a planting, checked against the armature: each foot a bone with a chain of bones above it that
its own keys pose (motion capture, a game rig's plain bone chains), the legs apart, and the hips bone (if one
is named) above every leg; then the bake that plants them, planned (nothing written).
"""

from __future__ import annotations

from dataclasses import replace

import bpy
import numpy as np

from ...planting import PlantSettings
from ...setting_names import plant_named
from ...settings import BakeSettings, ChainSettings, FrameRange, SolverSettings
from ..bake import BakePlan, check_keys_play, plan
from ..rig import animated_paths, armature_data, bone_path, chain_bone_names
from .frames import keyed_frames


def plan_legs(settings: PlantSettings[bpy.types.Object]) -> BakePlan:
    """The bake of every leg toward its own foot as animated (``bake.plan``'s ``tips_as_goals``), each foot
    turning with its animation (Rotation on), after the checks planting adds.

    Raises
    ------
    TypeError, ValueError
        Naming the problem: not an armature, a missing bone, legs sharing bones, a leg bone with
        constraints (feet driven by IK controls), a hips bone that is not above every leg or that something
        other than its keys moves, and everything ``bake.plan`` refuses.
    """
    armature = settings.armature
    armature_data(armature)
    for foot in settings.feet:
        chain_bone_names(armature, foot, 1)  # the foot is a bone (or the bones it may mean are named)
    legs = [_leg(armature, foot, settings.chain_length, settings.feet) for foot in settings.feet]
    for foot, names in zip(settings.feet, legs, strict=True):
        _check_unconstrained(armature, foot, names)
    if settings.hips_bone:
        _check_hips(armature, settings.hips_bone, legs, settings)
    chains = tuple(
        ChainSettings(armature, None, foot, settings.chain_length, use_rotation=True) for foot in settings.feet
    )
    # The rules' tolerance is in leg lengths: the shortest leg's, from hip to ankle, in world units at rest.
    bones = armature_data(armature).bones
    scale = float(np.cbrt(abs(np.linalg.det(np.array(armature.matrix_world.to_3x3())))))
    shortest = min(sum(bones[name].length for name in names[:-1]) for names in legs) * scale
    solver = replace(settings.solver, tolerance=settings.rules.tolerance * shortest)
    frames = keyed_frames(armature, settings.frames)
    return plan(_bake_settings(settings, chains, solver, frames), tips_as_goals=True)


def _bake_settings(
    settings: PlantSettings[bpy.types.Object],
    chains: tuple[ChainSettings[bpy.types.Object], ...] = (),
    solver: SolverSettings | None = None,
    frames: FrameRange | None = None,
) -> BakeSettings[bpy.types.Object]:
    """The bake a planting makes: its legs (``chains``), frames, solver and where the keys go."""
    legs = chains or (ChainSettings(settings.armature, None, settings.feet[0]),)
    return BakeSettings(
        legs,
        frames or settings.frames,
        solver or settings.solver,
        settings.action_name,
        settings.output,
        settings.key_error,
    )


def _leg(armature: bpy.types.Object, foot: str, length: int, feet: tuple[str, ...]) -> tuple[str, ...]:
    """The bones of the leg of ``foot``, ``length`` of them from the foot up (root first), checked: no longer than
    the bones above the foot, stopping below where it meets another foot's leg, with two bones above the foot
    that move it (one would keep the ankle on a sphere around its head).

    Raises
    ------
    ValueError
        Naming Leg Length, the longest it may be for this leg, and why.
    """
    bones = armature_data(armature).bones
    up = [bones[foot], *bones[foot].parent_recursive]  # the foot, then up to the root
    others = {b.name for other in feet if other != foot for b in (bones[other], *bones[other].parent_recursive)}
    meet = next((k for k, bone in enumerate(up) if bone.name in others), None)
    longest = len(up) if meet is None else meet
    why = (
        f"the bones from '{foot}' up to its root bone '{up[-1].name}'"
        if meet is None
        else f"the bones from '{foot}' up to '{up[meet].name}', where its leg meets another foot's"
    )
    if length > longest:
        raise ValueError(
            f"{plant_named('chain_length')} {length} is longer than the leg of '{foot}' can be: set it to "
            f"{longest} or less ({why}; 3 is a foot, shin and thigh)"
        )
    names = tuple(bone.name for bone in reversed(up[:length]))
    moving = [name for name in names[:-1] if bones[name].length > 0.0]
    if len(moving) < 2:
        have = f"only '{moving[0]}' moves" if moving else "no bone moves"
        raise ValueError(
            f"{plant_named('chain_length')} {length} leaves the leg of '{foot}' one bone to bend with: {have} its "
            "ankle, which keeps it on a sphere and cannot hold the ball on its pins; set it so that the thigh "
            f"and shin are in the leg (3 for a foot, shin and thigh; at most {longest})"
        )
    return names


def _check_unconstrained(armature: bpy.types.Object, foot: str, names: tuple[str, ...]) -> None:
    """Planting keys the legs' own rotations: a leg whose bones a constraint poses (Rigify's feet follow IK
    controls) is out of its reach."""
    pose = armature.pose
    assert pose is not None
    for name in names:
        constraints = [c for c in pose.bones[name].constraints if c.enabled and c.influence > 0.0]
        if constraints:
            raise ValueError(
                f"bone '{name}' of the leg of '{foot}' has constraint '{constraints[0].name}' "
                f"({constraints[0].type.replace('_', ' ').title()}): Plant Feet keys legs that their own keys "
                "pose (motion capture, plain bone chains); feet driven by IK controls (Rigify) are not supported: "
                "bake the legs to FK first, or plant the controls by hand"
            )


def _check_hips(
    armature: bpy.types.Object, hips: str, legs: list[tuple[str, ...]], settings: PlantSettings[bpy.types.Object]
) -> None:
    """The hips bone exists, is above every leg and in none, and only its keys move it (so keys lower it)."""
    bones = armature_data(armature).bones
    if hips not in bones:
        raise ValueError(f"armature '{armature.name}' has no bone '{hips}' to lower as the hips: name the pelvis")
    for names in legs:
        if hips in names:
            raise ValueError(f"hips bone '{hips}' is in the leg of '{names[-1]}': name a bone above the legs")
    for names in legs:
        above = bones[names[0]].parent_recursive
        if bones[hips] not in above:
            raise ValueError(
                f"hips bone '{hips}' is not above the leg of '{names[-1]}' (from '{names[0]}'): lowering it would "
                "not move that leg; name a bone every leg hangs from, as the pelvis"
            )
    parent = bones[hips].parent
    if bones[hips].use_connect and parent is not None:
        raise ValueError(
            f"hips bone '{hips}' is connected to its parent '{parent.name}' (Bone Properties, Relations: "
            "Connected), so Blender ignores its Location and keys could not lower it: turn Connected off in Edit "
            "Mode, or name a bone above it that can move"
        )
    pose = armature.pose
    assert pose is not None
    animated = animated_paths(armature)
    switched = [
        c.name
        for c in pose.bones[hips].constraints
        if any(f"{c.path_from_id()}.{switch}" in animated for switch in ("influence", "mute", "enabled"))
    ]
    if switched:
        raise ValueError(
            f"hips bone '{hips}' has constraint '{switched[0]}' whose influence or mute is animated or driven: on the "
            "frames it is on it would override the keys that lower the hips; remove it or its animation, or leave "
            "the hips out"
        )
    constraints = [c.name for c in pose.bones[hips].constraints if c.enabled and c.influence > 0.0]
    if constraints:
        raise ValueError(
            f"hips bone '{hips}' has constraint '{constraints[0]}', which would override the keys that lower it: "
            "mute it, or leave the hips out"
        )
    path = f"{bone_path(hips)}.location"
    driven = {
        driver.data_path
        for driver in (armature.animation_data.drivers if armature.animation_data is not None else ())
        if driver.data_path == path
    }
    if driven:
        raise ValueError(f"hips bone '{hips}' has a driver on its Location, which would override the keys")
    check_keys_play(armature, _bake_settings(settings), {(path, index) for index in range(3)})
