"""Editing animation through IK in the sidebar: Targets from Animation (under the chain list) makes each enabled
chain's target and pole from where the animation has them, so that a Bake gives the animation back and moving
them edits it; Apply Layer merges the FABRIK layer down into the Action below it. Each is one undo step."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import bpy
from bpy.props import BoolProperty

from ...settings import FrameRange
from ...words import counted
from .. import compat
from ..layer import apply_layer, find_layer
from ..live import LEAVE_FIRST, LIVE
from ..properties import enabled_chains, frame_range, key_error_of, no_chain_text, settings_of
from ..reduce_keys import reduce_keys
from ..targets import targets_from_animation
from .messages import sentence
from .operators import ArmatureOperator, armature_problem, progress_bar

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems


_NO_LAYER = "the armature has no FABRIK layer: Bake with Output Layer first"


def _problem(context: bpy.types.Context, lacks: Callable[[bpy.types.Object], str | None]) -> str | None:
    """Why an editing operator cannot act on the active armature (``lacks`` says what it needs of it), or None."""
    problem = LEAVE_FIRST if LIVE.stepping else armature_problem(context)
    armature = context.active_object
    if problem is None and armature is not None:
        missing = lacks(armature)
        return None if missing is None else sentence(missing)
    return problem


class FABRIK_OT_targets_from_animation(ArmatureOperator):
    """Key an Empty where each enabled chain's tip is in the animation on every frame (and a pole where it bends),
    and make them the chains' targets and poles: a Bake then gives the animation back, and moving them edits it"""

    bl_idname = "fabrik.targets_from_animation"
    bl_label = "Targets from Animation"

    replace: BoolProperty(  # type: ignore[valid-type]
        name="Replace",
        description="Give chains that have a target or pole new ones (Empties made here before are keyed again)",
        default=False,
    )
    poles: BoolProperty(  # type: ignore[valid-type]
        name="Poles",
        description="Give chains of two bones or more a pole Empty, with the pole angle that keeps their bend",
        default=True,
    )

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        return _problem(context, lambda armature: None if enabled_chains(armature) else no_chain_text(armature))

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        assert context.scene is not None
        frames = frame_range(armature, context.scene)
        try:
            with progress_bar(context) as progress:
                report = targets_from_animation(
                    armature,
                    frames=FrameRange(frames.start, frames.end),
                    poles=self.poles,
                    replace=self.replace,
                    key_error=key_error_of(armature),
                    progress=progress,
                )
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        poles = f" and {counted(len(report.poles), 'pole')}" if report.poles else ""
        kept = "" if report.keys is None else f" ({report.keys.words()})"
        self.report(
            {"INFO"},
            f"Made {counted(len(report.targets), 'target')}{poles} from the animation, keyed on frames "
            f"{report.frames[0]}-{report.frames[1]}{kept}, in the collection '{report.collection.name}': Bake to "
            "follow them, move them to edit",
        )
        return {"FINISHED"}


class FABRIK_OT_apply_layer(ArmatureOperator):
    """Merge the FABRIK layer down into the Action below it and remove the layer: the armature plays as it does
    now, from the Action alone"""

    bl_idname = "fabrik.apply_layer"
    bl_label = "Apply Layer"

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        return _problem(context, lambda armature: None if find_layer(armature) else _NO_LAYER)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        try:
            applied = apply_layer(armature)
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        first, last = applied.frames
        self.report(
            {"INFO"},
            f"Merged the FABRIK layer ({counted(applied.channels, 'channel')}, frames {first}-{last}) into the Action "
            f"'{applied.action.name}'",
        )
        return {"FINISHED"}


class FABRIK_OT_reduce_keys(ArmatureOperator):
    """Thin the keys of the active armature's bones (or the selected ones, with Selected Bones) in the frame range
    to the fewest frames that keep every bone within Key Error of where its keys put it, as Blender plays them"""

    bl_idname = "fabrik.reduce_keys"
    bl_label = "Reduce Keys"

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        def keyless(armature: bpy.types.Object) -> str | None:
            if armature.animation_data is None or armature.animation_data.action is None:
                layered = " (its keys are in the FABRIK layer: Apply Layer first)" if find_layer(armature) else ""
                return f"The armature '{armature.name}' has no Action to reduce the keys of{layered}"
            if key_error_of(armature) <= 0.0:
                return "Set a Key Error above 0: how far the fewer keys may move a bone"
            return None

        return _problem(context, keyless)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        assert context.scene is not None
        keys = settings_of(armature).keys
        bones = compat.selected_bones(armature) if keys.only_selected else None
        frames = frame_range(armature, context.scene)
        try:
            with progress_bar(context) as progress:
                report = reduce_keys(armature, bones, key_error=keys.key_error, frames=frames, progress=progress)
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Reduced the keys of frames {frames.start}-{frames.end}: {report.words()}")
        return {"FINISHED"}


CLASSES = (FABRIK_OT_targets_from_animation, FABRIK_OT_apply_layer, FABRIK_OT_reduce_keys)
