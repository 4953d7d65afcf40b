"""What would override a chain's baked keys, or move its goals with it: refused before anything is written.

A chain's keys decide its pose only if nothing else does: no constraint on its bones (on any frame: one whose
influence or mute is animated counts), no driver on their rotation, no animated rotation mode, no IK
constraint lower down whose chain reaches into them, no NLA blending that mixes the Action with strips
beneath it. And a goal (target, pole) must not follow the chain's bones: through parents, constraints or
drivers, of objects and of bones, however indirectly; it would run away from the bones following it.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import bpy

from .. import compat
from ..layer import animated_by_strips
from ..rig import ROTATION_PATHS, ArmatureChain, Node, animated_paths, enum_name, nla_plays, path_to

#: The constraint properties whose animation can switch a constraint on (on some frame).
_SWITCHES = ("influence", "mute", "enabled")
#: Constraints that turn bones above the one that owns them.
_CHAIN_CONSTRAINTS = {"IK": "IK", "SPLINE_IK": "Spline IK"}


def check_chain_alone(chain: ArmatureChain, use_stretch: bool, replaced: Collection[tuple[str, str]] = ()) -> None:
    """Nothing but the keys poses the chain's bones: no constraint on them or reaching into them, no driver on
    what the bake keys. ``replaced`` names IK constraints (bone, constraint) that the bake replaces, switched
    off while it runs: those are left out.

    Raises
    ------
    ValueError
        Naming the bone and the constraint or driver, and what to do.
    """
    armature = chain.armature
    animated = animated_paths(armature)
    pose = armature.pose
    assert pose is not None
    keyed = (*ROTATION_PATHS, "rotation_mode", *(("scale",) if use_stretch else ()))
    for name in chain.bone_names:
        pose_bone = pose.bones[name]
        constraints = [c for c in pose_bone.constraints if (name, c.name) not in replaced]
        active = [c for c in constraints if applies(c, armature)]
        if active:
            at_zero = any(c.influence <= 0 for c in active)
            itasc = " (iTaSC, the armature's IK Solver, applies IK even at Influence 0)" if at_zero else ""
            raise ValueError(
                f"bone '{name}' has constraints that would override the baked rotation "
                f"({', '.join(c.name for c in active)}){itasc}; disable or remove them before baking"
            )
        switched = [c.name for c in constraints if _switched(pose_bone, c, animated)]
        if switched:
            raise ValueError(
                f"bone '{name}' has constraints switched on by animation or drivers on some frames "
                f"({', '.join(switched)}: their influence or mute is animated), which would override the baked "
                "rotation there; remove them, or their animation, before baking"
            )
        for driver in armature.animation_data.drivers if armature.animation_data else ():
            if driver.data_path in {pose_bone.path_from_id(prop) for prop in keyed}:
                raise ValueError(
                    f"bone '{name}' has a driver on its {driver.data_path.rsplit('.', 1)[1]}[{driver.array_index}], "
                    "which would override the baked keys: remove the driver before baking"
                )
        if pose_bone.path_from_id("rotation_mode") in animated:
            raise ValueError(
                f"bone '{name}' has its Rotation Mode animated (keys or NLA strips on rotation_mode): the baked keys "
                f"go into the channels of the mode it has now, {enum_name(pose_bone, 'rotation_mode')}, which do not "
                "play on frames in another mode; remove the keys on its Rotation Mode before baking"
            )
    inside = set(chain.bone_names)
    for pose_bone in pose.bones:
        for constraint in pose_bone.constraints:
            kind = _CHAIN_CONSTRAINTS.get(constraint.type)
            if kind is None or pose_bone.name in inside or (pose_bone.name, constraint.name) in replaced:
                continue
            if not applies(constraint, armature) and not _switched(pose_bone, constraint, animated):
                continue
            reached = [b for b in _constraint_chain(pose_bone, constraint) if b in inside]
            if reached:
                raise ValueError(
                    f"the {kind} constraint '{constraint.name}' of bone '{pose_bone.name}' turns the chain's bones "
                    f"{', '.join(map(repr, reached))} and would override the baked keys: mute it before baking"
                )


def applies(constraint: bpy.types.Constraint, armature: bpy.types.Object) -> bool:
    """Whether Blender applies the constraint now: it is not muted and its influence is above 0, but for an IK
    constraint solved by iTaSC, which applies one even at Influence 0 (it holds the chain near its rest pose)."""
    if not constraint.enabled:
        return False
    pose = armature.pose
    itasc = constraint.type == "IK" and pose is not None and pose.ik_solver == "ITASC"
    return constraint.influence > 0 or itasc


def check_goal_independent(
    goal: bpy.types.Object, chain: ArmatureChain, role: str = "target", bone: str = "", owner: str = "the chain"
) -> None:
    """The goal (a bone of it, with ``bone``) is not one of the chain's bones and does not move with them,
    through any parent, constraint or driver. ``owner`` names the chain in the message.

    Raises
    ------
    ValueError
        Naming how the goal follows a bone of the chain.
    """
    who = f"the {role} bone '{bone}'" if bone else f"the {role} '{goal.name}'"
    moved = set(chain.bone_names)
    if goal == chain.armature and bone in moved:
        raise ValueError(f"{who} is a bone of {owner}: pick a bone outside it, one the chain does not move")
    path = path_to(Node(goal, bone), lambda node: node.obj == chain.armature and node.bone in moved, chain.armature)
    if path is not None:
        raise ValueError(f"{who} {path}, which {owner} moves: the {role} would move with the bake")


def check_blending(armature: bpy.types.Object) -> None:
    """The Action's keys replace what NLA strips beneath it do, in full.

    Raises
    ------
    ValueError
        If the Action is blended (not Replace, or influence below 1) over NLA strips that Blender plays.
    """
    anim = armature.animation_data
    if not nla_plays(anim):
        return  # without strips to blend with, Blender plays the Action as it is
    if anim.action_blend_type != "REPLACE" or anim.action_influence < 1.0:
        raise ValueError(
            f"armature '{armature.name}' blends its Action over its NLA strips ({anim.action_blend_type.title()}, "
            f"influence {anim.action_influence:g}): the baked keys would be mixed with the strips; set the "
            "Action's blending to Replace with influence 1 (NLA editor, Animated Influence off) to bake"
        )


def check_strips_kept(
    armature: bpy.types.Object, action_name: str | None, channels: Collection[tuple[str, int]], frames: range
) -> None:
    """Keys of ``channels`` on ``frames`` written into the active Action change nothing that NLA strips beneath it
    play on other frames: a channel the Action does not key yet would hold its first and last keys over the
    strips wherever the Action plays (by its Extrapolation), and keys far from the Action's own would stretch
    the frames it plays over those between. (A new active Action plays on its keys' frames only: ``KeyWriter``.)

    Raises
    ------
    ValueError
        Naming the channel or the frames, and the remedy.
    """
    anim = armature.animation_data
    if not nla_plays(anim) or anim.action is None:
        return
    action = anim.action
    if action_name is not None and bpy.data.actions.get(action_name) != action:
        return  # a switch of Action: ``checks.check_action_switch``
    first, last = frames.start, frames[-1]
    start, end = float(action.curve_frame_range[0]), float(action.curve_frame_range[1])  # Manual Frame Range or not
    extrapolation = anim.action_extrapolation
    plays = (-math.inf if extrapolation == "HOLD" else start, end if extrapolation == "NOTHING" else math.inf)
    where = (
        f"armature '{armature.name}' plays NLA strips beneath its Action '{action.name}' (Extrapolation "
        f"{enum_name(anim, 'action_extrapolation')}, keys on frames {start:g}-{end:g})"
    )
    remedy = "bake as a layer (Output 'layer') to keep what the strips play, or push the Action down first"
    if (plays[0] > last + 1) or (plays[1] < first - 1):
        gap = (last + 1, plays[0] - 1) if plays[0] > last + 1 else (plays[1] + 1, first - 1)
        raise ValueError(
            f"{where}: keys on frames {first}-{last} would make it play over the strips on frames "
            f"{gap[0]:g}-{gap[1]:g} too; {remedy}, or bake frames that meet the Action's"
        )
    keyed = {(fcurve.data_path, fcurve.array_index) for fcurve in compat.assigned_fcurves(armature)}
    below = animated_by_strips(armature)
    new = sorted(channel for channel in channels if channel not in keyed and channel in below)
    if new and (min(plays[0], first) < first or max(plays[1], last) > last):
        path, index = new[0]
        raise ValueError(
            f"{where}: it has no keys for {path}[{index}], which the strips animate, and the baked ones would hold "
            f"over the strips outside frames {first}-{last}; {remedy}"
        )


def _constraint_chain(pose_bone: bpy.types.PoseBone, constraint: bpy.types.Constraint) -> list[str]:
    """The bones an IK or Spline IK constraint turns, from the one it starts at up ``chain_count`` bones (0: to
    the root), as Blender's IK counts them: without Use Tail, from the owner's parent."""
    bone: bpy.types.PoseBone | None = pose_bone
    if constraint.type == "IK" and not getattr(constraint, "use_tail", True):
        bone = pose_bone.parent
    count = int(getattr(constraint, "chain_count", 0))
    names: list[str] = []
    while bone is not None and (count == 0 or len(names) < count):
        names.append(bone.name)
        bone = bone.parent
    return names


def _switched(pose_bone: bpy.types.PoseBone, constraint: bpy.types.Constraint, animated: set[str]) -> bool:
    """Whether the constraint's influence or mute is animated (by keys, NLA strips or drivers)."""
    prefix = f"{constraint.path_from_id()}."
    return any(f"{prefix}{switch}" in animated for switch in _SWITCHES)
