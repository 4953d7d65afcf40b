"""The Bake and Clear operators, acting on the active armature's enabled chains, and the poll that all the
add-on's operators share (``ArmatureOperator``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import bpy
from bpy.props import EnumProperty

from ..settings import BakeSettings
from . import stepping
from .bake import BakeReport, bake
from .clear import clear
from .ik_constraints import bake_ik_constraints
from .properties import (
    FABRIK_PG_bake_summary,
    bake_settings,
    chain_label,
    enabled_chains,
    frame_range,
    no_chain_text,
    solver_settings,
)

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

#: How many runs of frames a summary names before it stops with "...".
_MOST_RUNS = 6


def armature_problem(context: bpy.types.Context) -> str | None:
    """Why the active object's FABRIK settings cannot be acted on, or None."""
    obj = context.active_object
    if obj is None:
        return "No active object: select an armature"
    if obj.type != "ARMATURE" or not isinstance(obj.data, bpy.types.Armature):
        return f"The active object '{obj.name}' is not an armature"
    library: bpy.types.Library | None = obj.library
    if library is not None:
        return f"The armature '{obj.name}' is linked from a library: make it local or a library override first"
    if obj.mode == "EDIT":
        return "Switch to Object or Pose Mode"
    return None


def chain_problem(context: bpy.types.Context, *, need_target: bool) -> str | None:
    """Why Bake (``need_target``) or Clear cannot act on the active armature's enabled chains, or None."""
    problem = armature_problem(context)
    obj = context.active_object
    if problem is not None or obj is None:
        return problem
    assert isinstance(obj.data, bpy.types.Armature)
    chains = enabled_chains(obj)
    if not chains:
        return sentence(no_chain_text(obj))
    for index, chain in chains:
        if need_target and chain.target is None:
            return f"Pick a target object for '{chain_label(chain, index)}' in the FABRIK panel"
        if not chain.tip_bone:
            return f"Pick a tip bone for '{chain_label(chain, index)}' in the FABRIK panel"
        if chain.tip_bone not in obj.data.bones:
            return f"Armature '{obj.name}' has no bone '{chain.tip_bone}'"
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


def bake_text(summaries: Sequence[tuple[str, FABRIK_PG_bake_summary]], scene: bpy.types.Scene) -> str:
    """What a bake of the named chains did, from their summaries: for one chain its line; for several a first
    line on them all ("on target on every frame" only when every chain is), then a line per chain."""
    if len(summaries) == 1:
        return summary_text(summaries[0][1], scene)
    missed = [label for label, summary in summaries if summary.off_target or summary.unreachable]
    worst = max(summary.max_error for _, summary in summaries)
    verdict = f"off target in {len(missed)} of them ({', '.join(missed)})" if missed else "on target on every frame"
    head = (
        f"Baked {len(summaries)} chains in {summaries[0][1].seconds:.2f} s: max error {length_text(scene, worst)}; "
        f"{verdict}"
    )
    return "\n".join([head, *(f"{label}: {summary_text(summary, scene)}" for label, summary in summaries)])


def summarise(summary: FABRIK_PG_bake_summary, report: BakeReport, frames: range) -> None:
    """Write what a bake did to one chain (``report``, over ``frames``) into the chain's summary."""
    summary.frames = len(report.frames)
    summary.frame_start, summary.frame_end = frames.start, frames.stop - 1
    summary.bones = len(report.bones)
    summary.max_error = report.max_error
    summary.unreachable = len(report.unreachable_frames)
    summary.unreachable_frames = frame_runs(report.unreachable_frames, frames.step)
    summary.off_target = len(report.off_target_frames)
    summary.off_target_frames = frame_runs(report.off_target_frames, frames.step)
    summary.seconds = report.seconds


class ArmatureOperator(bpy.types.Operator):
    """What the add-on's operators share (not registered itself): one poll that says why the operator cannot
    run (``problem``, which each operator may extend), and an undo step."""

    bl_options = {"REGISTER", "UNDO"}  # noqa: RUF012 (Blender reads it from the class)

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        """Why the operator cannot act on the context, or None."""
        return armature_problem(context)

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        problem = cls.problem(context)
        if problem is not None:
            cls.poll_message_set(problem)
        return problem is None


class _ChainOperator(ArmatureOperator):
    """What Bake and Clear share (not registered itself): reading the active armature's enabled chains and
    frame range, and bad settings reported as an error, with nothing written."""

    needs_target = True

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        return stepping.LEAVE_FIRST if stepping.active() else chain_problem(context, need_target=cls.needs_target)

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
    """Key the rotations of the active armature's enabled chains so that each tip follows its target on every
    frame: one walk through the frames, all chains or none"""

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
            reports = bake(settings, progress=window_manager.progress_update).chains
        finally:
            window_manager.progress_end()
        frames = settings.frames.resolved(context.scene.frame_start, context.scene.frame_end)
        summaries = []
        for (index, chain), report in zip(enabled_chains(armature), reports, strict=True):
            summarise(chain.last_bake, report, frames)
            summaries.append((chain_label(chain, index), chain.last_bake))
        self.report({"INFO"}, bake_text(summaries, context.scene))
        return {"FINISHED"}


class FABRIK_OT_clear(_ChainOperator):
    """Remove the rotation (and stretch) keys of the active armature's enabled chains in the frame range"""

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
        one = len(settings.chains) == 1
        chains = "the chain" if one else f"the {len(settings.chains)} chains"
        if not removed:
            self.report({"INFO"}, f"{sentence(chains)} {'has' if one else 'have'} no rotation keys in {frames}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Removed {removed} rotation keys of {chains} in {frames}")
        return {"FINISHED"}


class FABRIK_OT_bake_ik_constraints(ArmatureOperator):
    """Bake every IK constraint of the active armature that is on with FABRIK, in one walk through the frames
    (the armature's frame range and solver settings), then mute them so the keys show"""

    bl_idname = "fabrik.bake_ik_constraints"
    bl_label = "Bake IK Constraints"

    after: EnumProperty(  # type: ignore[valid-type]
        name="Then",
        description="What becomes of the IK constraints once their keys are baked",
        items=(
            ("mute", "Mute", "Mute them (one whose mute a driver sets is switched off by its influence)"),
            ("remove", "Remove", "Remove them"),
            ("keep", "Keep", "Keep them on (they override the keys)"),
        ),
        default="mute",
    )

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        return stepping.LEAVE_FIRST if stepping.active() else armature_problem(context)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        window_manager = context.window_manager
        assert armature is not None
        assert window_manager is not None
        assert context.scene is not None
        try:
            frames = frame_range(armature, context.scene)
            solver = replace(solver_settings(armature), method="fabrik")  # IK constraints are baked with FABRIK
            window_manager.progress_begin(0.0, 1.0)
            try:
                progress = window_manager.progress_update
                report = bake_ik_constraints(armature, frames, solver, after=self.after, progress=progress)
            finally:
                window_manager.progress_end()
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        worst = length_text(context.scene, report.max_error)
        missed = [chain.tip_bone for chain in report.chains if not chain.on_target]
        verdict = f"off target in {len(missed)} ({', '.join(missed)})" if missed else "on target on every frame"
        lines = [f"Baked {len(report.chains)} IK constraints in {report.seconds:.2f} s: max error {worst}; {verdict}"]
        lines += [
            f"{chain.tip_bone}: max error {length_text(context.scene, chain.max_error)}" for chain in report.chains
        ]
        self.report({"INFO"}, "\n".join(lines))
        return {"FINISHED"}


CLASSES = (FABRIK_OT_bake, FABRIK_OT_clear, FABRIK_OT_bake_ik_constraints)
