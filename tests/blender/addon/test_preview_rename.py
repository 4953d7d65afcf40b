"""Renaming a bone while the Live Preview is on: the preview's plan, made with the old names, is made again;
a chain whose tip or middle bone's name, or its target's or pole's bone's, no longer matches shows its
problem in the panel, and no handler raises (a traceback on every frame change); named back, the chain is
posed again and the problem goes."""

from __future__ import annotations

import sys

import bpy
import numpy as np
import numpy.typing as npt
import pytest
from rigs import make_chain

from fabrik_addon.blender.live import preview
from fabrik_addon.blender.properties import settings_of

from .scenes import activate, chain_scene

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


def _tip_error(armature: bpy.types.Object, goal: npt.NDArray[np.float64]) -> float:
    tip = armature.matrix_world @ armature.pose.bones[settings_of(armature).chains[0].tip_bone].tail
    return float(np.linalg.norm(np.array(tip) - goal))


@pytest.mark.parametrize("role", ["target", "pole"])
def test_renaming_a_goal_bone_shows_the_problem_and_no_handler_raises(
    role: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The target's (or pole's) bone on another armature renamed: every frame change raised a KeyError from the
    handler, and the panel showed nothing; now it shows the problem, and picking the bone again mends it."""
    armature, _, _, chain = chain_scene(bones=3)
    goal, (bone,) = make_chain(1, name="Goal")
    goal.location = (0.5, 0.5, 2.0) if role == "target" else (2.0, 0.0, 1.0)
    if role == "target":
        chain.target, chain.target_bone = goal, bone
    else:
        chain.pole_target, chain.pole_bone = goal, bone
    activate(armature)
    raised: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, error, trace: raised.append(error))
    settings_of(armature).live_preview = True
    bpy.context.view_layer.update()
    goal.data.bones[bone].name = "Renamed"
    for frame in (2, 3, 4):
        bpy.context.scene.frame_set(frame)
    assert not raised
    keyword = "Target Bone (target_bone)" if role == "target" else "Pole Bone (pole_bone)"
    assert preview.problems(armature)[0] == (
        f"the {role}{' target' if role == 'pole' else ''} 'Goal' has no bone '{bone}': pick one of its bones as "
        f"the {keyword}"
    )
    setattr(chain, f"{role}_bone", "Renamed")
    bpy.context.scene.frame_set(5)
    assert preview.problems(armature) == {}


def test_a_bone_named_back_is_posed_again_and_its_problem_goes() -> None:
    """The tip renamed and named back: the problem stayed (the plan made with it was kept), the chain unposed,
    until Live Preview was turned off and on."""
    armature, names, target, _ = chain_scene(bones=3)
    settings_of(armature).live_preview = True
    bpy.context.view_layer.update()
    armature.data.bones[names[-1]].name = "Renamed"
    bpy.context.scene.frame_set(2)
    assert preview.problems(armature)
    armature.data.bones["Renamed"].name = names[-1]
    bpy.context.scene.frame_set(3)
    assert preview.problems(armature) == {}
    assert _tip_error(armature, np.array(target.matrix_world.translation)) <= TOLERANCE
