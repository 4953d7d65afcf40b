"""The FABRIK tab of the 3D viewport's sidebar, in Object and Pose Mode: the chain list and the selected chain's
settings, Bake and Clear, the solver and frames, each chain's last bake."""

from __future__ import annotations

import bpy

from ...words import counted
from ..layer import find_layer
from ..live import LIVE, player, problems
from ..properties import FABRIK_PG_chain, chain_label, settings_of
from ..units import length_text
from .chain_list import tree_numbers
from .messages import sentence, target_text


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
    bl_category = "FABRIK IK"


class ArmatureSubpanel(_Sidebar):
    bl_parent_id = "FABRIK_PT_main"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _armature(context) is not None


class FABRIK_PT_main(_Sidebar):
    """The chain list with the selected chain's settings below it, the live preview, Bake and Clear."""

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
        row = layout.row()
        row.template_list("FABRIK_UL_chains", "", settings, "chains", settings, "active_chain", rows=3)
        buttons = row.column(align=True)
        buttons.operator("fabrik.chain_add", icon="ADD", text="")
        buttons.operator("fabrik.chain_remove", icon="REMOVE", text="")
        buttons.separator()
        buttons.operator("fabrik.chain_move", icon="TRIA_UP", text="").direction = "UP"
        buttons.operator("fabrik.chain_move", icon="TRIA_DOWN", text="").direction = "DOWN"
        layout.operator("fabrik.targets_from_animation", icon="EMPTY_AXIS")
        if not settings.chains:
            layout.label(text="Add a chain to bake", icon="INFO")
        elif 0 <= settings.active_chain < len(settings.chains):
            _draw_chain(layout.column(), armature, settings.chains[settings.active_chain])
        for index, problem in sorted(problems(armature).items()):
            if index < len(settings.chains):  # (a script may have shortened the list since)
                layout.label(text=f"{chain_label(settings.chains[index], index)}: {sentence(problem)}", icon="ERROR")
        layout.prop(settings, "live_preview", icon="HIDE_OFF")
        layout.row().prop(settings, "output", expand=True)
        layout.prop(settings.keys, "key_error")
        row = layout.row(align=True)
        row.scale_y = 1.4
        row.operator("fabrik.bake", icon="ACTION")
        row.operator("fabrik.clear", icon="X")
        row = layout.row(align=True)
        if find_layer(armature) is not None:
            row.operator("fabrik.apply_layer", icon="NLA_PUSHDOWN")
        row.operator("fabrik.reduce_keys", icon="IPO_BEZIER")
        row.prop(settings.keys, "only_selected", text="", icon="RESTRICT_SELECT_OFF")
        row = layout.row(align=True)
        row.operator("fabrik.solve_now", icon="CON_KINEMATIC")
        row.operator("fabrik.key_current_frame", icon="KEY_HLT")
        layout.operator("fabrik.bake_ik_constraints", icon="CON_KINEMATIC")


def _draw_chain(column: bpy.types.UILayout, armature: bpy.types.Object, chain: FABRIK_PG_chain) -> None:
    """The settings of one chain: its bones, its target and pole (a bone of either when it is an armature),
    stretch and rotation."""
    column.active = chain.enabled
    assert isinstance(armature.data, bpy.types.Armature)
    column.prop_search(chain, "tip_bone", armature.data, "bones", icon="BONE_DATA")
    column.prop(chain, "chain_length")
    column.separator()
    _draw_goal(column, chain, "target", "target_bone")
    _draw_goal(column, chain, "pole_target", "pole_bone")
    if chain.pole_target is not None:
        column.prop(chain, "pole_angle")
    column.separator()
    column.prop(chain, "use_stretch")
    row = column.row()
    row.active = not chain.use_stretch  # stretching reaches farther instead
    row.prop(chain, "soft_reach")
    column.prop(chain, "use_rotation")
    if chain.use_rotation:
        column.prop(chain, "rotation_weight")
    index = list(settings_of(armature).chains).index(chain)
    if index in tree_numbers(armature):  # shares bones with other chains: solved with them as one tree
        column.prop(chain, "weight")


def _draw_goal(column: bpy.types.UILayout, chain: FABRIK_PG_chain, goal: str, bone: str) -> None:
    """A target or pole field, and below it its bone: searched among the goal's bones when it is an armature;
    a bone named for an object of another kind is shown in red (the bake refuses it) so it can be cleared."""
    column.prop(chain, goal)
    obj = getattr(chain, goal)
    if obj is not None and obj.type == "ARMATURE":
        column.prop_search(chain, bone, obj.data, "bones", icon="BONE_DATA")
    elif getattr(chain, bone):
        row = column.row()
        row.alert = True
        row.prop(chain, bone)


class FABRIK_PT_solver(ArmatureSubpanel):
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


class FABRIK_PT_frames(ArmatureSubpanel):
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


class FABRIK_PT_last_bake(ArmatureSubpanel):
    """What the last bake of each of the armature's chains did (greyed out: a chain not enabled now)."""

    bl_label = "Last Bake"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        armature = _armature(context)
        return armature is not None and any(chain.last_bake.frames > 0 for chain in settings_of(armature).chains)

    def draw(self, context: bpy.types.Context) -> None:
        layout = _split(self.layout)
        armature = _armature(context)
        assert armature is not None
        assert context.scene is not None
        for index, chain in enumerate(settings_of(armature).chains):
            summary = chain.last_bake
            if summary.frames == 0:
                continue
            column = layout.column(align=True)
            column.active = chain.enabled
            missed = summary.off_target or summary.unreachable
            column.label(text=chain_label(chain, index), icon="ERROR" if missed else "CHECKMARK")
            column.label(text=f"Frames {summary.frame_start}-{summary.frame_end}: {summary.frames} keyed")
            column.label(text=f"{counted(summary.bones, 'bone')} in {summary.seconds:.2f} s")
            column.label(text=f"Max error: {length_text(context.scene, summary.max_error)}")
            if missed:
                words, frames = target_text(summary).split(": ", 1)
                column.label(text=f"{sentence(words)}:")
                column.label(text=frames)
            else:
                column.label(text="On target on every frame")


class FABRIK_PT_playback(ArmatureSubpanel):
    """Step Through Iterations: the step's slider, its name, the tip's distance, Play and Leave."""

    bl_label = "Step Through Iterations"
    bl_options = {"DEFAULT_CLOSED"}  # noqa: RUF012 (Blender reads it from the class)

    def draw(self, context: bpy.types.Context) -> None:
        layout = _split(self.layout)
        armature = _armature(context)
        session = LIVE.session
        if session is None or armature is None or session.armature != armature:
            layout.operator("fabrik.step_through", icon="FRAME_NEXT")
            if session is not None:
                layout.operator("fabrik.step_leave", icon="X")
            return
        assert context.scene is not None
        state = context.window_manager.fabrik_playback  # type: ignore[union-attr]
        steps = session.steps
        step = LIVE.step
        chains = settings_of(armature).chains
        if session.chain_index < len(chains):
            layout.label(text=f"{chain_label(chains[session.chain_index], session.chain_index)}, frame {session.frame}")
        layout.prop(state, "step", slider=True, text=f"Iteration (0-{len(steps.names) - 1})")
        layout.label(text=f"Step: {steps.names[step]}")
        distance = float(steps.distances[step])
        within = distance <= steps.tolerance
        layout.label(
            text=f"Tip to target: {length_text(context.scene, distance)}",
            icon="CHECKMARK" if within else "DOT",
        )
        layout.label(text="Within tolerance" if within else "Not within tolerance")
        row = layout.row(align=True)
        row.operator(
            "fabrik.step_play",
            icon="PAUSE" if player.playing() else "PLAY",
            text="Pause" if player.playing() else "Play",
        )
        row.prop(state, "seconds_per_step")
        layout.operator("fabrik.step_leave", icon="X")


CLASSES = (FABRIK_PT_main, FABRIK_PT_solver, FABRIK_PT_frames, FABRIK_PT_last_bake, FABRIK_PT_playback)
