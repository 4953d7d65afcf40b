"""Scenes for the add-on's tests: an active armature with its FABRIK settings filled in."""

from __future__ import annotations

import bpy
from rigs import keyed_empty, make_chain, reach_loop

from fabrik_addon.blender.properties import FABRIK_PG_settings, settings_of


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


def chain_scene(
    bones: int = 3, frames: range = range(1, 21)
) -> tuple[bpy.types.Object, list[str], bpy.types.Object, FABRIK_PG_settings]:
    """A generated chain up +Z, active, with its settings pointing at an Empty keyed on a path within reach."""
    armature, names = make_chain(bones)
    target = keyed_empty("Target", reach_loop(float(bones), frames))
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = frames.start, frames.stop - 1
    activate(armature)
    settings = settings_of(armature)
    settings.target = target
    settings.tip_bone = names[-1]
    return armature, names, target, settings


def summary_values(settings: FABRIK_PG_settings) -> dict[str, object]:
    """Every field of the last bake's summary."""
    summary = settings.last_bake
    return {
        p.identifier: getattr(summary, p.identifier) for p in summary.bl_rna.properties if p.identifier != "rna_type"
    }
