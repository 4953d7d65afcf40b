"""A bake planned: every check a bake makes before it reads a frame, in order, and what it will do if they all
pass. Nothing is written here."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import bpy

from ...settings import BakeSettings, keyed_frames
from ..layer import check_layer
from ..rig import keyed_channels
from .checks import (
    check_action_switch,
    check_channel_fcurves,
    check_time_unmapped,
    check_tips_apart,
    check_writable,
    current_scene,
)
from .conflicts import check_blending, check_goal_independent, check_strips_kept
from .order import Order, solve_order, units
from .unit import PreparedChain, Unit, prepare_chain


@dataclass(frozen=True)
class BakePlan:
    """A bake whose every check has passed: what ``carry_out`` does, nothing written yet.

    Attributes
    ----------
    settings : BakeSettings
    scene : bpy.types.Scene
    frame_range : range
        The frames of the bake; keys are replaced from its first frame to its last (``frame_end``).
    frames : tuple of int
        The frames to key: ``frame_range``'s, and its last where the step passes it by (``FrameRange.keyed``).
    chains : list of PreparedChain
    chain_bones : dict of armature to set of str
        The chains' bones on each armature.
    units : list of Unit
        The chains solved together: alone, or with the chains they share bones with (a tree).
    order : Order
        The order the units are solved in: a unit below another after it (``order``).
    channels : dict of armature to set of (str, int)
        The channels (data path, index) the chains' keys go into on each armature.
    """

    settings: BakeSettings[bpy.types.Object]
    scene: bpy.types.Scene
    frame_range: range
    frames: tuple[int, ...]
    chains: list[PreparedChain]
    chain_bones: dict[bpy.types.Object, set[str]]
    units: list[Unit]
    order: Order
    channels: dict[bpy.types.Object, set[tuple[str, int]]]


def plan(
    settings: BakeSettings[bpy.types.Object],
    replaced: Collection[tuple[bpy.types.Object, str, str]] = (),
    *,
    tips_as_goals: bool = False,
) -> BakePlan:
    """Check everything a bake of ``settings`` needs, writing nothing.

    ``replaced`` names IK constraints (armature, bone, constraint) that the keys will replace (the caller
    switches them off before ``carry_out``; see ``ik_constraints``): they are not taken for constraints that would
    override the keys. With ``tips_as_goals`` the chains name no targets: each one's goal is its own tip as
    animated, for ``carry_out``'s ``adjust`` to change (planting feet).

    Raises
    ------
    TypeError, ValueError
        Naming what is wrong.
    """
    scene = current_scene()
    check_time_unmapped(scene)
    frame_range = settings.frames.resolved(scene.frame_start, scene.frame_end)
    chains = []
    for chain in settings.chains:
        theirs = {(bone, name) for owner, bone, name in replaced if owner == chain.armature}
        chains.append(prepare_chain(chain, settings.solver, theirs, tip_as_goal=tips_as_goals))
    check_tips_apart(settings.chains)
    check_goals_apart(chains)
    chain_bones = _check_armatures(chains, settings.action_name, settings.output)
    planned = units(chains, settings.solver)
    order = solve_order(planned)
    channels = _keyed(planned)
    for armature, keyed in channels.items():
        check_keys_play(armature, settings, keyed)
    return BakePlan(
        settings, scene, frame_range, keyed_frames(frame_range), chains, chain_bones, planned, order, channels
    )


def _check_armatures(
    prepared: list[PreparedChain], action_name: str | None, output: str
) -> dict[bpy.types.Object, set[str]]:
    """Each armature's keys can go into the Action and play from there (a layer is checked with its channels,
    ``check_keys_play``); returns the chains' bones of each."""
    chain_bones: dict[bpy.types.Object, set[str]] = {}
    for chain in prepared:
        chain_bones.setdefault(chain.chain.armature, set()).update(chain.chain.bone_names)
    if action_name is not None and len(chain_bones) > 1:
        raise ValueError(
            f"action_name names one Action, but the chains are on {len(chain_bones)} armatures: bake each on its own"
        )
    for armature, bones in chain_bones.items():
        if output == "action":
            check_writable(armature, action_name)
            check_action_switch(armature, action_name, bones)
            check_blending(armature)
    return chain_bones


def _keyed(planned: list[Unit]) -> dict[bpy.types.Object, set[tuple[str, int]]]:
    """The channels (data path, index) the units key on each armature: each unit's bones' rotations, and their Y
    scales where a chain of the unit stretches (a tree with stretch keys every bone's)."""
    keyed: dict[bpy.types.Object, set[tuple[str, int]]] = {}
    for unit in planned:
        channels = keyed.setdefault(unit.armature, set())
        for prepared in unit.chains:
            channels.update(
                c for pose_bone in prepared.chain.pose_bones for c in keyed_channels(pose_bone, unit.stretch)
            )
    return keyed


def check_keys_play(
    armature: bpy.types.Object, settings: BakeSettings[bpy.types.Object], channels: Collection[tuple[str, int]]
) -> None:
    """The F-curves the keys of ``channels`` go into take them and play them: the Action's
    (``checks.check_channel_fcurves``), or the armature's FABRIK layer (``layer.check_layer``), by the bake's
    ``output``; keys into the Action change no other frame that NLA strips play (``conflicts.check_strips_kept``)."""
    if settings.output == "layer":
        check_layer(armature, channels)
    else:
        check_channel_fcurves(armature, settings.action_name, channels)
        scene = current_scene()
        frames = settings.frames.resolved(scene.frame_start, scene.frame_end)
        check_strips_kept(armature, settings.action_name, channels, frames)


def check_goals_apart(chains: Sequence[PreparedChain]) -> None:
    """No goal moves with another chain of the same bake (``check_goal_independent``): goals are read before
    any key is written, so such a goal would be solved toward where it was, not where the other chain's keys
    take it, and the report (which measures against the goals read) would not see it. Nor does an armature
    follow a chain of another armature of the bake (parented to one of its bones, say): its chains' root frames
    are read before the keys are written too. (A chain below another chain of its own armature is solved after
    it: ``order``.)

    Raises
    ------
    ValueError
        Naming the goal or armature, how it follows the other chain and that chain's tip.
    """
    for prepared in chains:
        goals = [] if prepared.target is None else [(prepared.target, "target", prepared.target_bone)]
        if prepared.pole_target is not None:
            goals.append((prepared.pole_target, "pole target", prepared.pole_bone))
        for other in chains:
            if other is not prepared:
                owner = f"the chain of '{other.chain.bone_names[-1]}' of '{other.chain.armature.name}' (baked too)"
                for goal, role, bone in goals:
                    check_goal_independent(goal, other.chain, role, bone, owner)
                if other.chain.armature != prepared.chain.armature:
                    check_goal_independent(prepared.chain.armature, other.chain, "armature", "", owner)
