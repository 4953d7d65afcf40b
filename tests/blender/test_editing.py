"""Editing motion capture through IK without losing it, on the committed clips as Blender's BVH importer brings
them (Euler bones) and with quaternion bones: targets made from the animation, the chain list baked toward them
as a layer, an edit that stays where it was made, the animation below untouched and given back by muting the
layer. Blender's evaluation of the keys is the oracle: every bone's head, tail and two points off its axis."""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import edit_scenes
import mocap
import numpy as np
import pytest

from fabrik_addon import api
from fabrik_addon.blender import compat

from .oracle import FloatArray

CLIPS = list(mocap.CLIPS)
MODES = ["NATIVE", "QUATERNION"]


@pytest.fixture(autouse=True)
def registered() -> None:
    """The chain list is the add-on's settings: read as a file set up in the sidebar would be."""
    api.armatures_with_chains()  # registers the settings where the add-on is not enabled


def _keys(action: bpy.types.Action) -> list[tuple[str, int, bytes]]:
    """Every key of every F-curve of ``action``, as bits."""
    rows = []
    for fcurve in compat.action_fcurves(action):
        values = np.empty(6 * len(fcurve.keyframe_points), dtype=np.float32)
        for k, point in enumerate(fcurve.keyframe_points):
            values[6 * k : 6 * k + 6] = (*point.co, *point.handle_left, *point.handle_right)
        rows.append((fcurve.data_path, fcurve.array_index, values.tobytes()))
    return sorted(rows)


@dataclass
class _Clip:
    """A clip with its chain list, as it was before anything was baked: its Action and keys, every chain bone's
    points on every frame, the shortest chain's length."""

    armature: bpy.types.Object
    frames: range
    bones: list[str]
    action: bpy.types.Action
    keys: list[tuple[str, int, bytes]]
    points: FloatArray
    shortest: float

    @classmethod
    def imported(cls, clip: str, mode: str) -> _Clip:
        armature = edit_scenes.clip_with_chains(clip, rotate_mode=mode)
        frames, bones = mocap.scene_frames(), edit_scenes.chain_bones(armature)
        action = armature.animation_data.action
        points = edit_scenes.bone_points(armature, bones, frames)
        shortest = min(edit_scenes.chain_lengths(armature).values())
        return cls(armature, frames, bones, action, _keys(action), points, shortest)

    def now(self) -> FloatArray:
        return edit_scenes.bone_points(self.armature, self.bones, self.frames)


def _misses(after: FloatArray, before: FloatArray, scale: float) -> float:
    """The largest distance between the same points of two poses, in lengths of ``scale``."""
    return float(np.linalg.norm(after - before, axis=-1).max() / scale)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("clip", CLIPS)
def test_targets_from_the_animation_baked_as_a_layer_give_the_animation_back(clip: str, mode: str) -> None:
    """Every chain bone's head, tail and points off its axis within 1e-4 of the shortest chain's length (0.1 mm
    on a 1 m chain) of the animation on every frame; the Action below keeps every key, bit for bit."""
    clip_ = _Clip.imported(clip, mode)
    armature = clip_.armature
    made = api.targets_from_animation(armature)
    assert sorted(made.targets) == sorted(made.poles) == sorted(c.tip_bone for c in armature.fabrik.chains)
    report = api.bake_chains(armature, output="layer")
    assert all(chain.on_target for chain in report.chains)
    assert _misses(clip_.now(), clip_.points, clip_.shortest) <= 1e-4
    assert _keys(clip_.action) == clip_.keys
    anim = armature.animation_data
    assert anim.action is None  # pushed down, beneath the layer
    layer = report.chains[0].action
    assert [[s.action for s in track.strips] for track in anim.nla_tracks] == [[clip_.action], [layer]]
    assert anim.nla_tracks[1].strips[0].blend_type == "COMBINE"


@pytest.mark.parametrize("mode", MODES)
def test_an_edit_stays_where_it_was_made_and_muting_the_layer_gives_the_animation_back(mode: str) -> None:
    """One hand's target moved 5 cm on 30 frames: elsewhere every bone within 1e-4 of a chain's length of the
    animation, there the hand on the moved target; still one layer; muted (or at influence 0) the animation
    exactly as it was; the Action's keys bit for bit as before."""
    clip = _Clip.imported("walk", mode)
    armature, frames, bones, before = clip.armature, clip.frames, clip.bones, clip.points
    made = api.targets_from_animation(armature)
    api.bake_chains(armature, output="layer")
    hand = mocap.arms(armature)["Left"].forearm
    moved = range(100, 130)
    offset = np.array([0.0, -0.05, 0.02]) / mocap.CMU_UNIT
    edit_scenes.offset_keys(made.targets[hand], moved, offset)
    report = api.bake_chains(armature, output="layer")
    after = clip.now()
    outside = [i for i, frame in enumerate(frames) if frame not in moved]
    assert _misses(after[outside], before[outside], clip.shortest) <= 1e-4
    (left,) = [chain for chain in report.chains if chain.tip_bone == hand]
    inside = [i for i, frame in enumerate(left.frames.tolist()) if frame in moved]
    assert left.error[inside].max() <= left.tolerance
    hand_points = after[:, bones.index(hand), 1]  # the tail
    assert (
        np.linalg.norm(hand_points[inside] - before[inside, bones.index(hand), 1], axis=-1).min()
        > 0.04 / mocap.CMU_UNIT
    )
    anim = armature.animation_data
    assert len(anim.nla_tracks) == 2  # the clip's and one FABRIK layer
    layer = anim.nla_tracks[-1]
    layer.mute = True
    assert np.array_equal(clip.now(), before)
    layer.mute = False
    layer.strips[0].influence = 0.0
    for fcurve in layer.strips[0].fcurves:  # the influence is keyable: key it 0
        for point in fcurve.keyframe_points:
            point.co[1] = point.handle_left[1] = point.handle_right[1] = 0.0
    assert np.array_equal(clip.now(), before)
    assert _keys(clip.action) == clip.keys


@pytest.mark.parametrize("mode", MODES)
def test_a_layer_at_influence_1_poses_the_chains_as_an_action_bake_does(mode: str) -> None:
    """The same chains toward the same (edited) targets, baked into a layer and into the Action: every bone
    within 1e-5 of a chain's length (0.01 mm on 1 m) apart on every frame."""
    poses = {}
    for output in ("layer", "action"):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        api.armatures_with_chains()
        armature = edit_scenes.clip_with_chains("hop", rotate_mode=mode)
        made = api.targets_from_animation(armature)
        hand = mocap.arms(armature)["Right"].forearm
        edit_scenes.offset_keys(made.targets[hand], range(60, 200), np.array([0.05, 0.0, 0.08]) / mocap.CMU_UNIT)
        api.bake_chains(armature, output=output)
        poses[output] = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), mocap.scene_frames())
    shortest = min(edit_scenes.chain_lengths(armature).values())
    assert _misses(poses["layer"], poses["action"], shortest) <= 1e-5
