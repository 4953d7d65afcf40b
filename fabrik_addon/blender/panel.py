"""The FABRIK tab of the 3D viewport's sidebar, in Object and Pose Mode: settings, Bake and Clear, the last
bake's summary."""

from __future__ import annotations

import bpy

from . import preview
from .operators import length_text, sentence, target_text
from .properties import settings_of


def _split(layout: bpy.types.UILayout | None) -> bpy.types.UILayout:
    """A panel's layout, with properties split into labels and values as Blender's own panels show them."""
    assert layout is not None
    layout.use_property_split = True
    layout.use_property_decorate = False
    return layout


def _armature(context: bpy.types.Context) -> bpy.types.Object | None:
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" else None


class _Sidebar(bpy.types.Panel):
    """A panel of the FABRIK tab (not registered itself)."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "FABRIK"


class _ArmatureSubpanel(_Sidebar):
    bl_parent_id = "FABRIK_PT_main"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _armature(context) is not None


class FABRIK_PT_main(_Sidebar):
    """The chain, its target, the live preview and the Bake and Clear buttons."""

    bl_label = "FABRIK IK"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return context.mode in {"OBJECT", "POSE"}

    def draw(self, context: bpy.types.Context) -> None:
        layout = _split(self.layout)
        armature = _armature(context)
        if armature is None:
            layout.label(text="Make an armature the active object", icon="INFO")
            return
        settings = settings_of(armature)
        column = layout.column()
        column.prop(settings, "target")
        assert isinstance(armature.data, bpy.types.Armature)
        column.prop_search(settings, "tip_bone", armature.data, "bones", icon="BONE_DATA")
        column.prop(settings, "chain_length")
        column.prop(settings, "pole_target")
        if settings.pole_target is not None:
            column.prop(settings, "pole_angle")
        column.prop(settings, "use_stretch")
        column.prop(settings, "live_preview", icon="HIDE_OFF")
        problem = preview.problem(armature)
        if problem is not None:
            layout.label(text=sentence(problem), icon="ERROR")
        row = layout.row(align=True)
        row.scale_y = 1.4
        row.operator("fabrik.bake", icon="ACTION")
        row.operator("fabrik.clear", icon="X")


class FABRIK_PT_solver(_ArmatureSubpanel):
    """How the solver works: method, tolerance, iterations."""

    bl_label = "Solver"
    bl_options = {"DEFAULT_CLOSED"}  # noqa: RUF012 (Blender reads it from the class)

    def draw(self, context: bpy.types.Context) -> None:
        layout = _split(self.layout)
        armature = _armature(context)
        assert armature is not None
        settings = settings_of(armature)
        layout.row().prop(settings, "method", expand=True)
        column = layout.column()
        column.prop(settings, "tolerance")
        column.prop(settings, "max_iterations")
        column.prop(settings, "warm_start")


class FABRIK_PT_frames(_ArmatureSubpanel):
    """Which frames Bake keys and Clear clears: the scene's range or a custom one, and the step."""

    bl_label = "Frames"

    def draw(self, context: bpy.types.Context) -> None:
        layout = _split(self.layout)
        armature = _armature(context)
        assert armature is not None
        assert context.scene is not None
        settings = settings_of(armature)
        layout.prop(settings, "use_custom_range")
        column = layout.column(align=True)
        if settings.use_custom_range:
            column.prop(settings, "frame_start")
            column.prop(settings, "frame_end", text="End")
        else:
            column.enabled = False  # the scene's range, shown for reference
            column.prop(context.scene, "frame_start", text="Start")
            column.prop(context.scene, "frame_end", text="End")
        layout.prop(settings, "frame_step")


class FABRIK_PT_last_bake(_ArmatureSubpanel):
    """What the last bake of the armature did."""

    bl_label = "Last Bake"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        armature = _armature(context)
        return armature is not None and settings_of(armature).last_bake.frames > 0

    def draw(self, context: bpy.types.Context) -> None:
        layout = _split(self.layout)
        armature = _armature(context)
        assert armature is not None
        assert context.scene is not None
        summary = settings_of(armature).last_bake
        column = layout.column(align=True)
        column.label(text=f"Frames {summary.frame_start}-{summary.frame_end}: {summary.frames} keyed")
        column.label(text=f"{summary.bones} bones in {summary.seconds:.2f} s")
        column.label(text=f"Max error: {length_text(context.scene, summary.max_error)}")
        if summary.off_target or summary.unreachable:
            words, frames = target_text(summary).split(": ", 1)
            column.label(text=f"{sentence(words)}:", icon="ERROR")
            column.label(text=frames)
        else:
            column.label(text="On target on every frame", icon="CHECKMARK")


CLASSES = (FABRIK_PT_main, FABRIK_PT_solver, FABRIK_PT_frames, FABRIK_PT_last_bake)
