"""The Bake and Clear operators, acting on the active armature's enabled chains, and the poll that all the
add-on's operators share (``ArmatureOperator``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

import bpy
from bpy.props import EnumProperty

from ...settings import BakeSettings
from ...words import counted
from ..bake import bake_ik_constraints, clear
from ..chain_list import bake_chains
from ..live import LEAVE_FIRST, LIVE
from ..properties import (
    bake_settings,
    chain_label,
    enabled_chains,
    frame_range,
    key_error_of,
    no_chain_text,
    output_of,
    solver_settings,
)
from ..units import length_text
from .messages import bake_text, in_output, sentence

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems


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


@contextmanager
def progress_bar(context: bpy.types.Context) -> Iterator[Callable[[float], None]]:
    """Blender's progress bar (the cursor's, in the interface) from 0 to 1 while the block runs: yields the
    function that moves it."""
    window_manager = context.window_manager
    assert window_manager is not None
    window_manager.progress_begin(0.0, 1.0)
    try:
        yield window_manager.progress_update
    finally:
        window_manager.progress_end()


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
        return LEAVE_FIRST if LIVE.stepping else chain_problem(context, need_target=cls.needs_target)

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
    frame, into a layer over the animation or into the Action (Output): one walk through the frames, all chains
    or none"""

    bl_idname = "fabrik.bake"
    bl_label = "Bake"

    def act(
        self, context: bpy.types.Context, armature: bpy.types.Object, settings: BakeSettings[bpy.types.Object]
    ) -> set[OperatorReturnItems]:
        assert context.scene is not None
        with progress_bar(context) as progress:
            report = bake_chains(armature, progress=progress)
        summaries = [(chain_label(chain, index), chain.last_bake) for index, chain in enabled_chains(armature)]
        text = bake_text(summaries, context.scene)
        kept = "" if report.keys is None else f"\n{sentence(report.keys.words())}"
        self.report({"INFO"}, in_output(text + kept, settings.output))
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
        where = " in the FABRIK layer" if settings.output == "layer" else ""
        if not removed:
            self.report({"INFO"}, f"{sentence(chains)} {'has' if one else 'have'} no rotation keys{where} in {frames}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Removed {counted(removed, 'rotation key')} of {chains}{where} in {frames}")
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
        return LEAVE_FIRST if LIVE.stepping else armature_problem(context)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        assert context.scene is not None
        try:
            frames = frame_range(armature, context.scene)
            solver = replace(solver_settings(armature), method="fabrik")  # IK constraints are baked with FABRIK
            output = output_of(armature)
            with progress_bar(context) as progress:
                report = bake_ik_constraints(
                    armature,
                    frames,
                    solver,
                    after=self.after,
                    output=output,
                    key_error=key_error_of(armature),
                    progress=progress,
                )
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        worst = length_text(context.scene, report.max_error)
        missed = [chain.tip_bone for chain in report.chains if not chain.on_target]
        verdict = f"off target in {len(missed)} ({', '.join(missed)})" if missed else "on target on every frame"
        baked = counted(len(report.chains), "IK constraint")
        lines = [f"Baked {baked} in {report.seconds:.2f} s: max error {worst}; {verdict}"]
        lines += [
            f"{chain.tip_bone}: max error {length_text(context.scene, chain.max_error)}" for chain in report.chains
        ]
        lines += [] if report.keys is None else [sentence(report.keys.words())]
        self.report({"INFO"}, in_output("\n".join(lines), output))
        return {"FINISHED"}


CLASSES = (FABRIK_OT_bake, FABRIK_OT_clear, FABRIK_OT_bake_ik_constraints)
