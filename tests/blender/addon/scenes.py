"""Scenes for the add-on's tests: an active armature with its FABRIK settings filled in. A chain added here
bakes into the armature's Action (Output: Action), where these tests read its keys; the tests of the sidebar's
default, a layer over the animation, set Output back to Layer."""

from __future__ import annotations

from typing import Any

import bpy
from mathutils import Vector
from rigs import keyed_empty, link, make_chain, reach_loop

from fabrik_addon.blender.properties import FABRIK_PG_chain, settings_of


def activate(obj: bpy.types.Object | None, mode: str = "OBJECT") -> None:
    """Make ``obj`` the active (and only selected) object, in ``mode``."""
    view_layer = bpy.context.view_layer
    if view_layer.objects.active is not None and view_layer.objects.active.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    for other in view_layer.objects:
        other.select_set(False)
    view_layer.objects.active = obj
    if obj is not None:
        obj.select_set(True)
        if mode != "OBJECT":
            bpy.ops.object.mode_set(mode=mode)


def add_chain(armature: bpy.types.Object, **values: Any) -> FABRIK_PG_chain:
    """A new chain at the end of the armature's list, with ``values`` set on it (as a script would); the
    armature's Output set to Action."""
    settings_of(armature).output = "ACTION"
    chain: FABRIK_PG_chain = settings_of(armature).chains.add()
    for name, value in values.items():
        setattr(chain, name, value)
    return chain


def chain_scene(
    bones: int = 3, frames: range = range(1, 21)
) -> tuple[bpy.types.Object, list[str], bpy.types.Object, FABRIK_PG_chain]:
    """A generated chain up +Z, active, whose one chain in the list points at an Empty keyed on a path within
    reach."""
    armature, names = make_chain(bones)
    target = keyed_empty("Target", reach_loop(float(bones), frames))
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = frames.start, frames.stop - 1
    activate(armature)
    return armature, names, target, add_chain(armature, target=target, tip_bone=names[-1])


SIDES = {"left": -2.0, "right": 2.0}


def two_chain_scene(
    frames: range = range(1, 21),
) -> tuple[bpy.types.Object, dict[str, list[str]], dict[str, bpy.types.Object], list[FABRIK_PG_chain]]:
    """One armature "Rig" with two 3-bone chains up +Z, "left.000-002" from x = -2 and "right.000-002" from
    x = 2, active; its list holds a chain for each (left first), toward an Empty keyed on a path within its
    reach ("Target.left", "Target.right")."""
    data = bpy.data.armatures.new("Rig")
    armature = link(bpy.data.objects.new("Rig", data))
    activate(armature, "EDIT")
    names: dict[str, list[str]] = {}
    for side, x in SIDES.items():
        parent = None
        for i in range(3):
            bone = data.edit_bones.new(f"{side}.{i:03d}")
            bone.head, bone.tail = Vector((x, 0.0, float(i))), Vector((x, 0.0, i + 1.0))
            bone.roll = 0.4 * i - 0.5
            bone.parent, bone.use_connect = parent, parent is not None
            parent = bone
        names[side] = [f"{side}.{i:03d}" for i in range(3)]
    bpy.ops.object.mode_set(mode="OBJECT")
    targets, chains = {}, []
    for side, x in SIDES.items():
        path = [(frame, (x + p[0], p[1], p[2])) for frame, p in reach_loop(3.0, frames)]
        targets[side] = keyed_empty(f"Target.{side}", path)
        chains.append(add_chain(armature, target=targets[side], tip_bone=names[side][-1]))
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = frames.start, frames.stop - 1
    activate(armature)
    return armature, names, targets, chains


def summary_values(chain: FABRIK_PG_chain) -> dict[str, object]:
    """Every field of a chain's last bake's summary."""
    summary = chain.last_bake
    return {
        p.identifier: getattr(summary, p.identifier) for p in summary.bl_rna.properties if p.identifier != "rna_type"
    }
