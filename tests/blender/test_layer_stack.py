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
from fabrik_addon.blender import compat
from fabrik_addon.blender.layer import find_layer

from .oracle import FloatArray, file_digest, file_summary

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
        ("trimmed", "strip of 'Rig' plays only part of its keys"),
        ("held", "strip of 'Rig' holds its keys past them"),
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
    elif arrange == "trimmed":
        layer.strip.action_frame_start = layer.strip.frame_start = 10
    elif arrange == "held":
        layer.strip.extrapolation = "HOLD_FORWARD"
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
    with pytest.raises(ValueError, match="plays its Action's frames 1-25 and Apply Layer would key frames 1-40"):
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


def _euler_values(armature: bpy.types.Object, names: list[str], frames: range) -> FloatArray:
    rows = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        rows.append([value for name in names for value in armature.pose.bones[name].rotation_euler])
    return np.array(rows)


def test_apply_keeps_each_channel_playing_as_it_did_around_the_layer_whatever_frames_the_others_are_keyed_on() -> None:
    """Euler X keyed on frames 1 and 40 only, Z every fifth frame: X's long segment is kept around a layer over
    13-24 (keyed from its own nearest keys; pooled with Z's it bent by 0.09 rad on frames far from the layer)."""
    armature, names = make_chain(3)
    for i, name in enumerate(names):
        bone = armature.pose.bones[name]
        bone.rotation_mode = "XYZ"
        for frame in (1, 40):
            bone.rotation_euler = (0.5 * (-1) ** (frame + i), 0.0, 0.0)
            bone.keyframe_insert("rotation_euler", index=0, frame=frame)
        for frame in FRAMES[::5]:
            bone.rotation_euler = (0.0, 0.0, 0.2 * np.cos(frame / 5 + i))
            bone.keyframe_insert("rotation_euler", index=2, frame=frame)
    api.bake(
        armature,
        keyed_empty("Target", reach_loop(3.0, FRAMES)),
        tip_bone=names[-1],
        output="layer",
        frame_start=13,
        frame_end=24,
    )
    playing = _euler_values(armature, names, FRAMES)
    api.apply_layer(armature)
    np.testing.assert_allclose(_euler_values(armature, names, FRAMES), playing, rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    ("arrange", "message"),
    [
        ("cycles", "goes on past its keys \\(a Cycles modifier or extrapolation that is not Constant\\)"),
        ("linear", "goes on past its keys"),
        ("muted", "rotation_euler\\[0\\] of the Action 'RigAction' below the FABRIK layer of 'Rig' is muted"),
        ("noise", "has a Noise modifier"),
        ("trimmed at the layer's end", "plays its Action's frames 1-25 and Apply Layer would key frames .*ends before"),
        ("active above, nothing below", "has an active Action, 'Tweaks', above its FABRIK layer .* and nothing below"),
        ("no keys left", "has no keys left to apply: Clear it, or bake it again"),
    ],
)
def test_apply_refuses_what_a_merge_would_change_and_changes_nothing(arrange: str, message: str) -> None:
    armature, names = _keyed_chain()
    anim = armature.animation_data
    first = compat.action_fcurves(anim.action)[0]
    if arrange == "cycles":
        first.modifiers.new("CYCLES")
    elif arrange == "linear":
        first.extrapolation = "LINEAR"
    elif arrange == "trimmed at the layer's end":
        strip = anim.nla_tracks.new().strips.new("A", 1, anim.action)
        anim.action = None
        strip.action_frame_end = strip.frame_end = 25
    elif arrange in ("active above, nothing below", "no keys left"):
        anim.action = None
    frames = (13, 25) if arrange == "trimmed at the layer's end" else (1, 40)
    api.bake(
        armature,
        keyed_empty("Target", reach_loop(3.0, FRAMES)),
        tip_bone=names[-1],
        output="layer",
        frame_start=frames[0],
        frame_end=frames[1],
    )
    layer = find_layer(armature)
    assert layer is not None
    if arrange == "muted":
        compat.action_fcurves(anim.nla_tracks[0].strips[0].action)[0].mute = True
    elif arrange == "noise":
        compat.action_fcurves(anim.nla_tracks[0].strips[0].action)[0].modifiers.new("NOISE")
    elif arrange == "active above, nothing below":
        anim.action = bpy.data.actions.new("Tweaks")
        armature.pose.bones[names[0]].keyframe_insert("rotation_euler", frame=5)
    elif arrange == "no keys left":
        for fcurve in layer.fcurves():
            fcurve.keyframe_points.clear()
    before = file_digest()
    with pytest.raises(ValueError, match=message):
        api.apply_layer(armature)
    assert file_digest() == before


def test_a_bake_refuses_a_layer_at_an_influence_below_1() -> None:
    armature, names = _layered()
    layer = find_layer(armature)
    assert layer is not None
    curve = next(f for f in layer.strip.fcurves if f.data_path == "influence")
    curve.keyframe_points[0].co[1] = 0.5
    before = file_digest()
    with pytest.raises(ValueError, match=r"plays at an influence below 1 \(0.5\), and a bake keys what it plays at"):
        _retry(armature, names)
    assert file_digest() == before


def test_ctrl_c_while_apply_takes_the_layer_away_leaves_the_file_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted once the track of the Action pushed down is removed (making that Action active): every track
    and strip back as it was (it crashed Blender: the strip below was spanned again after its track was gone)."""
    armature, names = _layered()
    playing = _euler_values(armature, names, FRAMES)
    before = _stack(armature)

    real = compat.restore_action_assignment
    calls = []

    def interrupted(*args: object) -> None:
        calls.append(args)
        if len(calls) == 1:  # the first: making the pushed-down Action active; the rollback's go through
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(compat, "restore_action_assignment", interrupted)
    with pytest.raises(KeyboardInterrupt):
        api.apply_layer(armature)
    monkeypatch.undo()
    assert _stack(armature) == before
    np.testing.assert_array_equal(_euler_values(armature, names, FRAMES), playing)


def _stack(armature: bpy.types.Object) -> object:
    """The armature's animation as the file holds it: every datablock, key and pose (``file_summary``), the
    active Action, and each NLA track's strips with their Actions, frames, blending and influence."""
    anim = armature.animation_data
    tracks = [
        (
            track.name,
            track.mute,
            [
                (
                    strip.action.name,
                    strip.action_frame_start,
                    strip.action_frame_end,
                    strip.frame_start,
                    strip.frame_end,
                    strip.blend_type,
                    strip.extrapolation,
                    strip.use_animated_influence,
                )
                for strip in track.strips
            ],
        )
        for track in anim.nla_tracks
    ]
    return file_summary(), anim.action, tracks
