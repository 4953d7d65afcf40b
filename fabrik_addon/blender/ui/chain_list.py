"""The active armature's list of chains in the sidebar: the list itself and the operators that add, remove and
reorder its chains (each an undo step)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
from bpy.props import EnumProperty

from ..properties import FABRIK_PG_chain, FABRIK_PG_settings, chain_label, enabled_chains, settings_of
from ..rig import Limb, chain_bone_names, groups_sharing, limb
from ..setting_changes import notify
from ..versioning import migrate
from .operators import ArmatureOperator

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems


class FABRIK_UL_chains(bpy.types.UIList):
    """The chains of an armature: whether each is enabled, and its name (its tip bone until renamed)."""

    def draw_item(
        self,
        context: bpy.types.Context,
        layout: bpy.types.UILayout,
        data: object,
        item: object,
        icon: int | None,
        active_data: object,
        active_property: str | None,
        index: int | None = 0,
        flt_flag: int | None = 0,
    ) -> None:
        assert isinstance(item, FABRIK_PG_chain)
        row = layout.row(align=True)
        row.prop(item, "enabled", text="")
        name = row.row()
        name.active = item.enabled
        name.prop(item, "name", text="", emboss=False, icon="CON_KINEMATIC", placeholder=chain_label(item, index or 0))
        armature = item.id_data
        tree = tree_numbers(armature).get(index or 0) if isinstance(armature, bpy.types.Object) else None
        if tree is not None:  # solved with the chains it shares bones with
            row.label(text=f"Tree {tree}", icon="OUTLINER_DATA_ARMATURE")


def tree_numbers(armature: bpy.types.Object) -> dict[int, int]:
    """Which enabled chains are solved together as a tree (they share bones): a tree number (1, 2...) by the
    chain's place in the list; chains solved alone are not listed."""
    places, bones = [], []
    for index, chain in enabled_chains(armature):
        try:
            bones.append(chain_bone_names(armature, chain.tip_bone, chain.chain_length))
        except (TypeError, ValueError):
            continue  # no chain yet: the panel says why
        places.append(index)
    trees = [group for group in groups_sharing(bones) if len(group) > 1]
    return {places[i]: number for number, group in enumerate(trees, start=1) for i in group}


class _ChainListOperator(ArmatureOperator):
    """What the chain list's operators share (not registered itself): the poll (an armature with enough chains)
    and the settings of the active armature, brought to the current layout first so that an old chain keeps
    its place."""

    #: The fewest chains the operator works on.
    fewest_chains = 0

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        problem = super().problem(context)
        if problem is not None or context.active_object is None:
            return problem
        chains = len(settings_of(context.active_object).chains)
        if chains < cls.fewest_chains:
            return "The armature has no chain" if chains == 0 else "The armature has only one chain"
        return None

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature = context.active_object
        assert armature is not None
        migrate(armature)
        settings = settings_of(armature)
        result = self.act(context, settings)
        if result == {"FINISHED"}:
            notify(settings, "chains")
        return result

    def act(self, context: bpy.types.Context, settings: FABRIK_PG_settings) -> set[OperatorReturnItems]:
        raise NotImplementedError


class FABRIK_OT_chain_add(_ChainListOperator):
    """Add a chain to the active armature, after the selected one (in Pose Mode, ending at the active bone, as
    long as its limb: up to where the bones part or a bone stands apart from its parent)"""

    bl_idname = "fabrik.chain_add"
    bl_label = "Add Chain"

    @classmethod
    def description(cls, context: bpy.types.Context, properties: object) -> str:
        """The tooltip: what the chain will be, and why, where the active bone ends it (else the class's)."""
        picked = _suggested(context)
        if picked is None:
            return ""  # Blender shows the docstring
        tip, found = picked
        return f"Add a chain ending at the active bone {tip!r}, {found.words()}"

    def act(self, context: bpy.types.Context, settings: FABRIK_PG_settings) -> set[OperatorReturnItems]:
        chain = settings.chains.add()
        picked = _suggested(context)
        if picked is not None:
            tip, found = picked
            chain.tip_bone, chain.chain_length = tip, found.length
            self.report({"INFO"}, f"Chain {tip!r}: {found.words()}; set Chain Length to change it")
        place = min(settings.active_chain + 1, len(settings.chains) - 1)
        settings.chains.move(len(settings.chains) - 1, place)
        settings.active_chain = place
        return {"FINISHED"}


def _suggested(context: bpy.types.Context) -> tuple[str, Limb] | None:
    """The active bone and the chain its limb suggests (``rig.limb``), in Pose Mode on the active armature."""
    bone, armature = context.active_pose_bone, context.active_object
    if context.mode != "POSE" or bone is None or armature is None or bone.id_data != armature:
        return None
    return bone.name, limb(armature, bone.name)


class FABRIK_OT_chain_remove(_ChainListOperator):
    """Remove the selected chain from the active armature (its keys stay)"""

    bl_idname = "fabrik.chain_remove"
    bl_label = "Remove Chain"
    fewest_chains = 1

    def act(self, context: bpy.types.Context, settings: FABRIK_PG_settings) -> set[OperatorReturnItems]:
        index = settings.active_chain
        if not 0 <= index < len(settings.chains):
            self.report({"ERROR"}, "No chain is selected in the list")
            return {"CANCELLED"}
        settings.chains.remove(index)
        settings.active_chain = max(0, min(index, len(settings.chains) - 1))
        return {"FINISHED"}


class FABRIK_OT_chain_move(_ChainListOperator):
    """Move the selected chain up or down the list (chains are baked and reported in the list's order)"""

    bl_idname = "fabrik.chain_move"
    bl_label = "Move Chain"
    fewest_chains = 2

    direction: EnumProperty(  # type: ignore[valid-type]
        name="Direction",
        items=(("UP", "Up", "Move the chain up the list"), ("DOWN", "Down", "Move the chain down the list")),
    )

    def act(self, context: bpy.types.Context, settings: FABRIK_PG_settings) -> set[OperatorReturnItems]:
        index = settings.active_chain
        place = index - 1 if self.direction == "UP" else index + 1
        if not (0 <= index < len(settings.chains) and 0 <= place < len(settings.chains)):
            return {"CANCELLED"}  # already at that end
        settings.chains.move(index, place)
        settings.active_chain = place
        return {"FINISHED"}


CLASSES = (FABRIK_UL_chains, FABRIK_OT_chain_add, FABRIK_OT_chain_remove, FABRIK_OT_chain_move)
