"""Solve Now and Key Current Frame: the active armature's enabled chains solved once at the current frame and
posed without keys (the live preview's solve), and that pose keyed, all or nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from . import playback_ui, preview, stepping
from .chain import chain_bone_names
from .channels import keyed_channels
from .keys import KeyWriter
from .operators import ArmatureOperator, chain_problem, length_text, sentence
from .pose_state import PoseSnapshot
from .properties import chain_label, chain_settings, enabled_chains, settings_of, solver_settings

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
        if playback_ui.session() is not None:
            playback_ui.leave()
        view_layer.update()
        snapshot = PoseSnapshot.take(armature)
        followed = preview.pose_chains(armature, scene.frame_current)
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
            error = preview.tip_distance(chain_settings(armature, chain))
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
        if problem is None and stepping.active():
            return stepping.LEAVE_FIRST
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
        self.report({"INFO"}, f"Keyed {len(keyed)} bones at frame {scene.frame_current}")
        return {"FINISHED"}


CLASSES = (FABRIK_OT_solve_now, FABRIK_OT_key_current_frame)
