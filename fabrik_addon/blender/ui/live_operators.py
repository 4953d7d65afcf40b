"""The operators of the live side: Solve Now and Key Current Frame (the active armature's enabled chains solved
once at the current frame and posed without keys, as the live preview solves them, and that pose keyed, all or
nothing), and Step Through Iterations with its Play and Leave and the slider and pace it is driven by (on the
window manager, never saved)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np
from bpy.props import FloatProperty, IntProperty, PointerProperty

from ...words import counted
from ..live import LEAVE_FIRST, LIVE, begin_stepping, player, pose_chains, tip_distance
from ..properties import chain_label, chain_settings, enabled_chains, settings_of, solver_settings
from ..rig import KeyWriter, PoseSnapshot, chain_bone_names, keyed_channels
from ..units import length_text
from .messages import sentence
from .operators import ArmatureOperator, chain_problem

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems


class FABRIK_OT_solve_now(ArmatureOperator):
    """Pose the active armature's enabled chains so each tip reaches its target at the current frame, without
    keys (as the live preview does, once)"""

    bl_idname = "fabrik.solve_now"
    bl_label = "Solve Now"

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        return chain_problem(context, need_target=True)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature, scene, view_layer = context.active_object, context.scene, context.view_layer
        assert armature is not None
        assert scene is not None
        assert view_layer is not None
        if LIVE.stepping:
            player.leave()
        view_layer.update()
        snapshot = PoseSnapshot.take(armature)
        followed = pose_chains(armature, scene.frame_current)
        if followed.problems:
            if snapshot.restore():
                armature.update_tag()
            chains = settings_of(armature).chains
            lines = [f"{chain_label(chains[i], i)}: {sentence(p)}" for i, p in sorted(followed.problems.items())]
            self.report({"ERROR"}, "\n".join(lines))
            return {"CANCELLED"}
        view_layer.update()
        solver = solver_settings(armature)
        lines = []
        for index, chain in enabled_chains(armature):
            error = tip_distance(chain_settings(armature, chain))
            spent = followed.iterations.get(index)
            done = "already on target" if spent is None else f"{spent} iterations"
            verdict = "on target" if error <= solver.tolerance else "off target"
            lines.append(f"{chain_label(chain, index)}: {done}, error {length_text(scene, error)} ({verdict})")
        self.report({"INFO"}, f"Solved at frame {scene.frame_current}: " + "; ".join(lines))
        return {"FINISHED"}


class FABRIK_OT_key_current_frame(ArmatureOperator):
    """Key the rotations (and, with stretch, the Y scales) of the active armature's enabled chains at the
    current frame, as they are posed now"""

    bl_idname = "fabrik.key_current_frame"
    bl_label = "Key Current Frame"

    @classmethod
    def problem(cls, context: bpy.types.Context) -> str | None:
        problem = chain_problem(context, need_target=False)
        if problem is None and LIVE.stepping:
            return LEAVE_FIRST
        return problem

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature, scene = context.active_object, context.scene
        assert armature is not None
        assert scene is not None
        assert armature.pose is not None
        try:
            chains = [
                (chain, chain_bone_names(armature, chain.tip_bone, chain.chain_length))
                for _, chain in enabled_chains(armature)
            ]
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        frame = np.array([scene.frame_current])
        keyed: set[str] = set()
        try:
            with KeyWriter(armature) as writer:  # all or nothing, as a bake writes
                for chain, names in chains:
                    for name in names:
                        for path, index in keyed_channels(armature.pose.bones[name], chain.use_stretch):
                            value = armature.path_resolve(path)[index]
                            writer.replace(path, index, name, frame, np.array([value]))
                        keyed.add(name)
        except (RuntimeError, TypeError, ValueError) as error:
            self.report({"ERROR"}, f"Nothing keyed: {sentence(error)}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Keyed {counted(len(keyed), 'bone')} at frame {scene.frame_current}")
        return {"FINISHED"}


def _get_step(_: bpy.types.PropertyGroup) -> int:
    return LIVE.step


def _set_step(_: bpy.types.PropertyGroup, value: int) -> None:
    player.show_step(value)


class FABRIK_PG_playback(bpy.types.PropertyGroup):
    """Stepping through iterations (``WindowManager.fabrik_playback``, not saved)."""

    step: IntProperty(  # type: ignore[valid-type]
        name="Iteration",
        description="The step of the solve to pose the chain at, in half passes (0: the pose it started from)",
        get=_get_step,
        set=_set_step,
        min=0,
    )
    seconds_per_step: FloatProperty(  # type: ignore[valid-type]
        name="Pace",
        description="Seconds each step shows while playing",
        default=0.4,
        min=0.02,
        max=10.0,
        subtype="TIME_ABSOLUTE",
        unit="TIME_ABSOLUTE",
    )


class FABRIK_OT_step_through(ArmatureOperator):
    """Solve the selected chain at the current frame keeping every step, and pose it at the first: then the
    Iteration slider or Play poses it as it was after each step (leaving puts its pose back)"""

    bl_idname = "fabrik.step_through"
    bl_label = "Step Through Iterations"
    bl_options = {"REGISTER"}  # noqa: RUF012 (stepping writes no keys, and leaving puts the pose back)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature, scene, view_layer = context.active_object, context.scene, context.view_layer
        assert armature is not None
        assert scene is not None
        assert view_layer is not None
        player.leave()
        view_layer.update()
        try:
            session = begin_stepping(
                armature, settings_of(armature).active_chain, solver_settings(armature), scene.frame_current
            )
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        player.start(session, draw=not bpy.app.background and context.screen is not None)  # nothing drawn headless
        steps, frame = len(session.steps.names) - 1, scene.frame_current
        if steps == 0 and session.steps.distances[0] <= session.steps.tolerance:
            self.report(
                {"INFO"}, f"The tip is on target at frame {frame} already (within the tolerance): no step to take"
            )
        else:
            self.report({"INFO"}, f"{counted(steps, 'step')} to step through at frame {frame}")
        return {"FINISHED"}


class _SteppingOperator(bpy.types.Operator):
    """What Play and Leave share (not registered itself): a poll that needs a chain being stepped through."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if not LIVE.stepping:
            cls.poll_message_set("Start Step Through Iterations first")
        return LIVE.stepping


class FABRIK_OT_step_play(_SteppingOperator):
    """Play the steps one after another at the chosen pace (from the first, if at the last), or pause"""

    bl_idname = "fabrik.step_play"
    bl_label = "Play"

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        window_manager = context.window_manager
        assert window_manager is not None
        player.play(window_manager.fabrik_playback.seconds_per_step)  # type: ignore[attr-defined]
        return {"FINISHED"}


class FABRIK_OT_step_leave(_SteppingOperator):
    """Stop stepping through iterations and put back the pose the chain had"""

    bl_idname = "fabrik.step_leave"
    bl_label = "Leave"

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        player.leave()
        return {"FINISHED"}


CLASSES = (
    FABRIK_OT_solve_now,
    FABRIK_OT_key_current_frame,
    FABRIK_PG_playback,
    FABRIK_OT_step_through,
    FABRIK_OT_step_play,
    FABRIK_OT_step_leave,
)


def register() -> None:
    """The slider's property group on the window manager (after ``CLASSES`` are registered)."""
    bpy.types.WindowManager.fabrik_playback = PointerProperty(  # type: ignore[attr-defined, func-returns-value]
        type=FABRIK_PG_playback, name="FABRIK Step Through Iterations"
    )


def unregister() -> None:
    del bpy.types.WindowManager.fabrik_playback  # type: ignore[attr-defined]
