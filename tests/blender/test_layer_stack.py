"""The FABRIK layer among the NLA tracks a user arranges: a strip moved, reversed or blended otherwise, a track
above it, a strip below it that is trimmed or an Action other objects play. A bake or Apply Layer that could not
play as baked is refused with the remedy and changes nothing; Apply Layer keeps what plays on every frame."""

from __future__ import annotations

import bpy
import edit_scenes
import numpy as np
import pytest
from rigs import keyed_empty, make_chain, new_file, reach_loop

from fabrik_addon import api
from fabrik_addon.blender.layer import find_layer

from .oracle import file_digest

FRAMES = range(1, 41)


@pytest.fixture(autouse=True)
def registered() -> None:
    new_file(FRAMES)
    api.armatures_with_chains()  # the chain list's settings, where the add-on is not enabled


def _keyed_chain(name: str = "Rig") -> tuple[bpy.types.Object, list[str]]:
    """A three-bone chain keyed every fifth frame with a smooth swing (Euler X and Z)."""
    armature, names = make_chain(3, name=name)
    for i, bone_name in enumerate(names):
        bone = armature.pose.bones[bone_name]
        bone.rotation_mode = "XYZ"
        for frame in FRAMES[::5]:
            bone.rotation_euler = (0.4 * np.sin(frame / 7 + i), 0.0, 0.2 * np.cos(frame / 5 + i))
            bone.keyframe_insert("rotation_euler", frame=frame)
    return armature, names


def _layered(frames: range = FRAMES) -> tuple[bpy.types.Object, list[str]]:
    armature, names = _keyed_chain()
    target = keyed_empty("Target", reach_loop(3.0, FRAMES))
    api.bake(armature, target, tip_bone=names[-1], output="layer", frame_start=frames.start, frame_end=frames.stop - 1)
    return armature, names


def _retry(armature: bpy.types.Object, names: list[str]) -> None:
    api.bake(armature, bpy.data.objects["Target"], tip_bone=names[-1], output="layer")


@pytest.mark.parametrize(
    ("arrange", "message"),
    [
        ("moved", "strip of 'Rig' was moved"),
        ("reversed", "strip of 'Rig' plays reversed"),
        ("replace", "blends with Replace \\(a layer blends with Combine\\)"),
    ],
)
def test_a_layer_strip_that_no_longer_plays_frame_for_frame_is_refused_by_bake_and_apply(
    arrange: str, message: str
) -> None:
    armature, names = _layered()
    layer = find_layer(armature)
    assert layer is not None
    if arrange == "moved":
        layer.strip.frame_start_ui = 6
    elif arrange == "reversed":
        layer.strip.use_reverse = True
    else:
        layer.strip.blend_type = "REPLACE"
    before = file_digest()
    for attempt in (lambda: _retry(armature, names), lambda: api.apply_layer(armature)):
        with pytest.raises(ValueError, match=f"{message}.*set it back in the NLA editor"):
            attempt()
        assert file_digest() == before


def _tweaks_above(armature: bpy.types.Object, bone: str) -> None:
    """A track above the layer, as a user keys a tweak and pushes it down: Combine, holding."""
    anim = armature.animation_data
    tweaks = bpy.data.actions.new("Tweaks")
    anim.action = tweaks
    armature.pose.bones[bone].rotation_euler = (0.3, 0.0, 0.0)
    armature.pose.bones[bone].keyframe_insert("rotation_euler", frame=1)
    strip = anim.nla_tracks.new().strips.new("Tweaks", 1, tweaks)
    strip.blend_type, strip.extrapolation = "COMBINE", "HOLD"
    anim.action = None


def test_a_track_above_the_layer_on_its_channels_refuses_a_bake_and_apply_keeps_what_plays() -> None:
    armature, names = _layered()
    _tweaks_above(armature, names[0])
    before = file_digest()
    with pytest.raises(ValueError, match=r"NLA track 'NlaTrack' above the FABRIK layer of 'Rig' animates .*: move it"):
        _retry(armature, names)
    assert file_digest() == before
    playing = edit_scenes.bone_points(armature, names, FRAMES)
    api.apply_layer(armature)
    anim = armature.animation_data
    assert [track.name for track in anim.nla_tracks] == ["RigAction", "NlaTrack"]
    assert anim.action is None  # the Action applied into stays in its strip, below the tweaks
    np.testing.assert_allclose(edit_scenes.bone_points(armature, names, FRAMES), playing, rtol=0, atol=1e-5)


def test_apply_refuses_an_action_another_object_plays() -> None:
    armature, names = _keyed_chain()
    other, _ = make_chain(3, name="Other")
    other.animation_data_create()
    other.animation_data.action = armature.animation_data.action
    if hasattr(other.animation_data, "action_slot"):  # Blender 4.4+: the same slot
        other.animation_data.action_slot = armature.animation_data.action_slot
    api.bake(armature, keyed_empty("Target", reach_loop(3.0, FRAMES)), tip_bone=names[-1], output="layer")
    before = file_digest()
    with pytest.raises(ValueError, match="also plays on 'Other': Apply Layer would move them too; make it single"):
        api.apply_layer(armature)
    assert file_digest() == before


@pytest.mark.parametrize("extrapolation", ["HOLD", "NOTHING"])
def test_apply_refuses_a_strip_below_that_does_not_play_the_layers_frames(extrapolation: str) -> None:
    armature, names = _keyed_chain()
    anim = armature.animation_data
    strip = anim.nla_tracks.new().strips.new("A", 1, anim.action)
    anim.action = None
    strip.action_frame_end = strip.frame_end = 25  # plays the Action's frames 1-25 only
    strip.extrapolation = extrapolation
    api.bake(armature, keyed_empty("Target", reach_loop(3.0, FRAMES)), tip_bone=names[-1], output="layer")
    before = file_digest()
    with pytest.raises(ValueError, match="plays its Action's frames 1-25 and the layer's keys reach frames 1-40"):
        api.apply_layer(armature)
    assert file_digest() == before


def test_apply_of_a_layer_over_part_of_the_clip_leaves_every_frame_playing_as_it_did() -> None:
    """The layer keys frames 13-24 of a clip keyed every fifth frame: applied, those play the layer and the frames
    around them play the clip as before (the merged keys would have bent its curves out to its next keys)."""
    armature, names = _layered(range(13, 25))
    playing = edit_scenes.bone_points(armature, names, FRAMES)
    applied = api.apply_layer(armature)
    assert applied.frames == (13, 24)
    np.testing.assert_allclose(edit_scenes.bone_points(armature, names, FRAMES), playing, rtol=0, atol=1e-5)
