"""The Bake and Clear operators, acting on the active armature's FABRIK settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import bpy

from ..settings import BakeSettings
from .bake import bake
from .clear import clear
from .properties import FABRIK_PG_bake_summary, bake_settings, settings_of

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

#: How many runs of frames a summary names before it stops with "...".
_MOST_RUNS = 6


def chain_problem(context: bpy.types.Context, *, need_target: bool) -> str | None:
    """Why the operators cannot act on the context, or None: the one poll they share, in words."""
    obj = context.active_object
    if obj is None:
        return "No active object: select an armature"
    if obj.type != "ARMATURE" or not isinstance(obj.data, bpy.types.Armature):
        return f"The active object '{obj.name}' is not an armature"
    if obj.mode == "EDIT":
        return "Switch to Object or Pose Mode"
    settings = settings_of(obj)
    if need_target and settings.target is None:
        return "Pick a target object in the FABRIK panel"
    if not settings.tip_bone:
        return "Pick a tip bone in the FABRIK panel"
    if settings.tip_bone not in obj.data.bones:
        return f"Armature '{obj.name}' has no bone '{settings.tip_bone}'"
    return None


def sentence(message: object) -> str:
    """An error message as a report or label starts: with a capital letter (but for a name like
    ``chain_length``, which stays as the Python API spells it)."""
    text = str(message)
    if "_" in text.split(" ", 1)[0]:
        return text
    return text[:1].upper() + text[1:]


def frame_runs(frames: Sequence[int], step: int = 1) -> str:
    """Frames as runs, e.g. ``"12-15, 30"``; runs advance by ``step``. Long lists end with ``"..."``."""
    runs: list[list[int]] = []
    for frame in frames:
        if runs and frame - runs[-1][1] == step:
            runs[-1][1] = frame
        else:
            runs.append([frame, frame])
    text = ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in runs[:_MOST_RUNS])
    return text + (", ..." if len(runs) > _MOST_RUNS else "")


def length_text(scene: bpy.types.Scene, value: float) -> str:
    """A length in the scene's units, as Blender shows lengths."""
    units = scene.unit_settings
    return str(bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3))


def summary_text(summary: FABRIK_PG_bake_summary, scene: bpy.types.Scene) -> str:
    """One line saying what a bake did: "on target on every frame" only when Blender's evaluation of the keys
    puts the tip within tolerance on every frame."""
    text = (
        f"Baked frames {summary.frame_start}-{summary.frame_end} ({summary.frames} keyed) of {summary.bones} bones "
        f"in {summary.seconds:.2f} s: max error {length_text(scene, summary.max_error)}"
    )
    return f"{text}; {target_text(summary)}"


def target_text(summary: FABRIK_PG_bake_summary) -> str:
    """Whether the tip was on target, and where not: frames out of reach, or off target for some other cause
    (the scene undoing the keys), or both."""
    if summary.off_target and summary.off_target_frames != summary.unreachable_frames:
        reach = f" ({summary.unreachable} out of reach)" if summary.unreachable else ""
        return f"off target on {summary.off_target} frames{reach}: {summary.off_target_frames}"
    if summary.unreachable:
        return f"out of reach on {summary.unreachable} frames: {summary.unreachable_frames}"
    return "on target on every frame"


class _ChainOperator(bpy.types.Operator):
    """What Bake and Clear share (not registered itself): the poll, reading the active armature's settings and
    frame range, and bad settings reported as an error, with nothing written."""

    bl_options = {"REGISTER", "UNDO"}  # noqa: RUF012 (Blender reads it from the class)
    needs_target = True

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        problem = chain_problem(context, need_target=cls.needs_target)
        if problem is not None:
            cls.poll_message_set(problem)
        return problem is None

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        assert context.scene is not None
        try:
            return self.act(context, armature, bake_settings(armature, context.scene))
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}

    def act(
        self, context: bpy.types.Context, armature: bpy.types.Object, settings: BakeSettings[bpy.types.Object]
    ) -> set[OperatorReturnItems]:
        raise NotImplementedError


class FABRIK_OT_bake(_ChainOperator):
    """Key the rotations of the active armature's chain so its tip follows the target on every frame"""

    bl_idname = "fabrik.bake"
    bl_label = "Bake"

    def act(
        self, context: bpy.types.Context, armature: bpy.types.Object, settings: BakeSettings[bpy.types.Object]
    ) -> set[OperatorReturnItems]:
        window_manager = context.window_manager
        assert window_manager is not None
        assert context.scene is not None
        window_manager.progress_begin(0.0, 1.0)
        try:
            report = bake(settings, progress=window_manager.progress_update).chains[0]
        finally:
            window_manager.progress_end()
        summary = settings_of(armature).last_bake
        summary.frames = len(report.frames)
        frames = settings.frames.resolved(context.scene.frame_start, context.scene.frame_end)
        summary.frame_start, summary.frame_end = frames.start, frames.stop - 1
        summary.bones = len(report.bones)
        summary.max_error = report.max_error
        summary.unreachable = len(report.unreachable_frames)
        summary.unreachable_frames = frame_runs(report.unreachable_frames, settings.frames.step)
        summary.off_target = len(report.off_target_frames)
        summary.off_target_frames = frame_runs(report.off_target_frames, settings.frames.step)
        summary.seconds = report.seconds
        self.report({"INFO"}, summary_text(summary, context.scene))
        return {"FINISHED"}


class FABRIK_OT_clear(_ChainOperator):
    """Remove the rotation (and stretch) keys of the active armature's chain in the frame range"""

    bl_idname = "fabrik.clear"
    bl_label = "Clear"
    needs_target = False

    def act(
        self, context: bpy.types.Context, armature: bpy.types.Object, settings: BakeSettings[bpy.types.Object]
    ) -> set[OperatorReturnItems]:
        assert context.scene is not None
        removed = clear(settings)
        frame_range = settings.frames.resolved(context.scene.frame_start, context.scene.frame_end)
        frames = f"frames {frame_range.start}-{frame_range.stop - 1}"
        if not removed:
            self.report({"INFO"}, f"The chain has no rotation keys in {frames}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Removed {removed} rotation keys of the chain in {frames}")
        return {"FINISHED"}


CLASSES = (FABRIK_OT_bake, FABRIK_OT_clear)
