"""Plant Feet in the sidebar: the feet to plant (each a bone), the hips, when a foot counts as planted and how it
is held; Detect Contacts (marks each foot's contacts as keys to check and edit) and Plant Feet, each one undo
step, over the armature's frames (the Frames panel's custom range, else the frames the rig has keys on within
the scene's), every frame."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import bpy
from bpy.props import IntProperty

from ...planting import PlantSettings
from ...settings import FrameRange
from ..live import LEAVE_FIRST, LIVE
from ..planting import detect_contacts, plant_feet, plant_settings
from ..properties import frame_range, key_error_of, output_of, settings_of, solver_settings
from ..units import length_text
from .messages import sentence
from .operators import ArmatureOperator, armature_problem, progress_bar
from .panel import ArmatureSubpanel

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

Planting = PlantSettings[bpy.types.Object]
#: How the panel's labels name the unit of Plant Feet's lengths: leg lengths, hip to ankle.
LEGS = "legs"
Progress = Callable[[float], None]


def _planting_problem(context: bpy.types.Context) -> str | None:
    """Why Detect Contacts or Plant Feet cannot act on the active armature, or None."""
    if LIVE.stepping:
        return LEAVE_FIRST
    problem = armature_problem(context)
    obj = context.active_object
    if problem is not None or obj is None:
        return problem
    feet = settings_of(obj).planting.feet  # none: found in the animation
    if any(not foot.bone for foot in feet):
        return "Pick a bone for every foot in the Plant Feet panel (or remove the empty one)"
    return None


class _PlantOperator(ArmatureOperator):
    """What Detect Contacts and Plant Feet share (not registered itself): the armature's planting settings
    read as one value, progress, and bad settings reported as an error, with nothing written."""

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        return _planting_problem(context)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        assert context.scene is not None
        try:
            # The Frames panel's custom range, else the frames the rig has keys on (within the scene's).
            custom = settings_of(armature).use_custom_range
            frames = frame_range(armature, context.scene) if custom else FrameRange()
            planting = plant_settings(armature, settings_of(armature).planting, frames, solver_settings(armature))
            settings = replace(planting, output=output_of(armature), key_error=key_error_of(armature))
            with progress_bar(context) as progress:
                message = self.act(context, settings, progress)
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        self.report({"INFO"}, message)
        return {"FINISHED"}

    def act(
        self, context: bpy.types.Context, settings: PlantSettings[bpy.types.Object], progress: Callable[[float], None]
    ) -> str:
        raise NotImplementedError


class FABRIK_OT_detect_contacts(_PlantOperator):
    """Find when each foot is planted in the animation and key it as the foot's contact marks (its Fabrik
    Contact property: 1 from a contact's first frame, 0 after its last), to check and edit in the Dope Sheet
    before Plant Feet"""

    bl_idname = "fabrik.detect_contacts"
    bl_label = "Detect Contacts"

    def act(
        self, context: bpy.types.Context, settings: PlantSettings[bpy.types.Object], progress: Callable[[float], None]
    ) -> str:
        found = detect_contacts(settings, progress=progress)
        counts = ", ".join(f"{foot} {len(contacts)}" for foot, contacts in found.items())
        return (
            f"Marked the contacts of {len(found)} feet ({counts}): edit their keys in the Dope Sheet, then Plant Feet"
        )


class FABRIK_OT_plant_feet(_PlantOperator):
    """Hold the ball of each foot on one point through each of its contacts, the foot rolling as animated and
    each leg keeping its animation elsewhere; lower the hips where a pin is out of reach"""

    bl_idname = "fabrik.plant_feet"
    bl_label = "Plant Feet"

    def act(
        self, context: bpy.types.Context, settings: PlantSettings[bpy.types.Object], progress: Callable[[float], None]
    ) -> str:
        scene = context.scene
        assert scene is not None
        report = plant_feet(settings, progress)
        contacts = sum(len(foot.contacts) for foot in report.feet)
        before = max((s for foot in report.feet for s in foot.skate_before), default=0.0)
        after = max((s for foot in report.feet for s in foot.skate_after), default=0.0)
        lines = [
            f"Planted {len(report.feet)} feet in {contacts} contacts in {report.seconds:.2f} s: the balls slid up "
            f"to {length_text(scene, before)} in a contact, now {length_text(scene, after)}; max error "
            f"{length_text(scene, report.max_error)}"
        ]
        if report.found_feet:
            lines.append(f"Found the feet: {', '.join(foot.foot for foot in report.feet)} (add them to name others)")
        if settings.hips_bone:
            bob = " -> ".join(length_text(scene, value) for value in report.hips_bob)
            lines.append(
                f"Hips '{settings.hips_bone}' lowered by up to {length_text(scene, report.max_hips_drop)} "
                f"(their bob {bob})"
            )
        for foot in report.feet:
            source = "marked" if foot.marked else "found"
            missed = "; ".join(f"{cause} on {_frames_text(frames)}" for cause, frames in foot.off_target.items())
            missed = f"; off its goal: {missed}" if missed else ""
            lines.append(f"{foot.foot}: {len(foot.contacts)} contacts ({source}){missed}")
        if any(foot.out_of_reach_frames for foot in report.feet) and not settings.hips_bone:
            lines.append("Name the Hips bone to lower them where a pin is out of reach")
        for warning in report.warnings:
            self.report({"WARNING"}, sentence(warning))
        return "\n".join(lines)


def _frames_text(frames: tuple[int, ...]) -> str:
    """Frames as runs, ``3 frames (20-22)``, the first few runs named."""
    runs: list[list[int]] = []
    for frame in frames:
        if runs and frame == runs[-1][1] + 1:
            runs[-1][1] = frame
        else:
            runs.append([frame, frame])
    named = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:4]) + (", ..." if len(runs) > 4 else "")
    return f"{len(frames)} frame{'s' if len(frames) != 1 else ''} ({named})"


class FABRIK_OT_foot_add(ArmatureOperator):
    """Add a foot to plant"""

    bl_idname = "fabrik.foot_add"
    bl_label = "Add Foot"

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        settings_of(armature).planting.feet.add()
        return {"FINISHED"}


class FABRIK_OT_foot_remove(ArmatureOperator):
    """Remove this foot from the feet to plant"""

    bl_idname = "fabrik.foot_remove"
    bl_label = "Remove Foot"

    index: IntProperty(name="Foot", description="The foot's place in the list", min=0)  # type: ignore[valid-type]

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        feet = settings_of(armature).planting.feet
        if self.index >= len(feet):
            self.report({"ERROR"}, f"There is no foot {self.index + 1}: the list has {len(feet)}")
            return {"CANCELLED"}
        feet.remove(self.index)
        return {"FINISHED"}


class FABRIK_PT_planting(ArmatureSubpanel):
    """Plant Feet: the feet, the hips, the contacts' rules, and Detect Contacts and Plant Feet."""

    bl_label = "Plant Feet"
    bl_options = {"DEFAULT_CLOSED"}  # noqa: RUF012 (Blender reads it from the class)

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        assert layout is not None
        layout.use_property_split, layout.use_property_decorate = True, False
        armature = context.active_object
        assert armature is not None
        assert isinstance(armature.data, bpy.types.Armature)
        planting = settings_of(armature).planting
        column = layout.column(align=True)
        for index, foot in enumerate(planting.feet):
            row = column.row(align=True)
            row.prop_search(foot, "bone", armature.data, "bones", text=f"Foot {index + 1}", icon="BONE_DATA")
            row.operator("fabrik.foot_remove", text="", icon="X").index = index
        if not planting.feet:
            column.label(text="Feet: found in the animation", icon="INFO")
        column.operator("fabrik.foot_add", icon="ADD")
        layout.prop(planting, "chain_length")
        layout.prop_search(planting, "hips_bone", armature.data, "bones", icon="BONE_DATA")
        contacts = layout.column(heading="Contacts", align=True)
        # Lengths in leg lengths, as their labels say: a value in the scene's unit would be far off.
        contacts.prop(planting, "contact_height", text=f"Height ({LEGS})")
        contacts.prop(planting, "contact_speed", text=f"Speed ({LEGS}/s)")
        contacts.prop(planting, "contact_seconds")
        contacts.prop(planting, "contact_gap")
        row = layout.row(heading="Floor")
        row.prop(planting, "use_floor", text="")
        sub = row.row()
        sub.active = planting.use_floor
        sub.prop(planting, "floor", text="")
        layout.prop(planting, "use_marks")
        held = layout.column(align=True)
        held.prop(planting, "pin_at")
        held.prop(planting, "blend_seconds")
        held.prop(planting, "soft_reach", text=f"Soft Reach ({LEGS})")
        hips = held.row()
        hips.active = bool(planting.hips_bone)
        hips.prop(planting, "hips_speed", text=f"Hips Speed ({LEGS}/s)")
        hips = held.row()
        hips.active = bool(planting.hips_bone)
        hips.prop(planting, "hips_seconds")
        row = layout.row(align=True)
        row.operator("fabrik.detect_contacts", icon="KEYFRAME")
        row.operator("fabrik.plant_feet", icon="PINNED")


CLASSES = (
    FABRIK_OT_detect_contacts,
    FABRIK_OT_plant_feet,
    FABRIK_OT_foot_add,
    FABRIK_OT_foot_remove,
    FABRIK_PT_planting,
)
