"""Renaming a bone while the Live Preview is on: the preview's plan, made with the old names, is made again;
a chain whose tip or middle bone's name no longer matches shows its problem in the panel, and no handler
raises (a traceback on every frame change)."""

from __future__ import annotations

import sys

import bpy
import numpy as np
import pytest

from fabrik_addon.blender.live import preview
from fabrik_addon.blender.properties import settings_of

from .scenes import chain_scene

TOLERANCE = 1e-3


@pytest.mark.parametrize("which", ["tip", "middle"])
def test_renaming_a_chain_bone_shows_the_problem_and_no_handler_raises(
    which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    armature, names, target, _ = chain_scene(bones=3)
    raised: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, error, trace: raised.append(error))
    settings = settings_of(armature)
    settings.live_preview = True
    bpy.context.view_layer.update()
    bone = names[-1] if which == "tip" else names[-2]
    armature.data.bones[bone].name = "Renamed"
    for frame in (2, 3, 4):
        bpy.context.scene.frame_set(frame)
    assert not raised
    problem = preview.problems(armature).get(0, "")
    if which == "tip":
        assert problem.startswith(f"armature 'Rig' has no bone '{bone}'")
        settings.chains[0].tip_bone = "Renamed"
    bpy.context.scene.frame_set(5)
    assert preview.problems(armature) == {}
    target_at = np.array(target.matrix_world.translation)
    tip = np.array(armature.matrix_world @ armature.pose.bones[settings.chains[0].tip_bone].tail)
    assert np.linalg.norm(tip - target_at) <= TOLERANCE
