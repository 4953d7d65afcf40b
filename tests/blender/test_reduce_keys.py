"""Reduce Keys on keys that exist (``api.reduce_keys``): a motion-capture clip thinned within 1 mm, every bone where
its keys had it within the error as Blender evaluates the new keys (the oracle: the clip stepped frame by frame
before and after), the report's error Blender's own; fewer keys than Blender's own Decimate keeps at the same
error in the world; keys outside the range alone; bad input refused with nothing changed."""

from __future__ import annotations

import bpy
import key_scenes
import mocap
import numpy as np
import pytest

from fabrik_addon import api
from fabrik_addon.blender import compat

from .oracle import fcurve_keys, file_digest

#: 1 mm in the committed clips' units (CMU's).
MM = 1e-3 / mocap.CMU_UNIT
#: Blender's evaluation and the report agree to this (world units): float32 rounding of the points.
SAME = 1e-6


def _clip(name: str = "walk") -> tuple[bpy.types.Object, list[str], range]:
    armature = mocap.import_clip(name)
    return armature, [bone.name for bone in armature.data.bones], mocap.scene_frames()


@pytest.mark.parametrize("clip", ["walk", "hop"])
def test_a_clip_keeps_a_fifth_of_its_keys_every_bone_within_the_error(clip: str) -> None:
    armature, bones, frames = _clip(clip)
    before = key_scenes.bone_points(armature, bones, frames)
    keys = key_scenes.keys_in(armature, frames.start, frames.stop - 1)
    report = api.reduce_keys(armature, key_error=MM)
    after = key_scenes.bone_points(armature, bones, frames)
    error = np.linalg.norm(after - before, axis=-1)
    assert error.max() <= MM
    assert report.max_error == pytest.approx(error.max(), abs=SAME)
    assert report.p99_error == pytest.approx(np.percentile(error, 99), abs=SAME)
    assert report.dense_keys == keys  # the clip is keyed on every frame
    assert report.keys == key_scenes.keys_in(armature, frames.start, frames.stop - 1)
    assert report.keys < 0.2 * report.dense_keys


@pytest.mark.slow
def test_fewer_keys_than_blenders_decimate_keeps_at_the_same_error_in_the_world() -> None:
    """Decimate works curve by curve, one margin for all: tuned until the world error is 1 mm, it keeps more keys
    than a reduction that knows a thigh's turn moves the foot more than a toe's does."""
    armature, bones, frames = _clip()
    decimated, error, _ = key_scenes.decimated(armature, bones, frames, MM, rounds=10)
    assert error <= MM
    armature, bones, frames = _clip()
    report = api.reduce_keys(armature, key_error=MM)
    assert report.max_error <= MM
    assert report.keys <= 0.8 * decimated


@pytest.mark.slow
def test_planting_keeps_fewer_keys_than_decimate_keeps_of_the_planted_keys() -> None:
    armature, _, frames = _clip()
    feet = [mocap.naming(armature).ankle.format(side=side) for side in mocap.SIDES]
    planted = api.plant_feet(armature, feet, hips_bone="Hips")
    legs = sorted({*(name for chain in planted.bake.chains for name in chain.bones), "Hips"})
    decimated, error, _ = key_scenes.decimated(armature, legs, frames, MM, rounds=10, only=legs)
    assert error <= MM
    assert decimated < planted.bake.chains[0].frames.size * (3 * len(legs))
    armature, _, frames = _clip()
    report = api.plant_feet(armature, feet, hips_bone="Hips", key_error=MM)
    assert report.keys is not None
    assert report.keys.max_error <= MM
    assert report.keys.keys <= 0.8 * decimated


def test_keys_outside_the_range_stay_and_the_range_keeps_its_ends() -> None:
    armature, _, _ = _clip()
    before = fcurve_keys(armature)
    api.reduce_keys(armature, ["LeftHip", "LeftKnee"], key_error=MM, frame_start=100, frame_end=200)
    after = fcurve_keys(armature)
    for curve, keys in after.items():
        if not curve[0].startswith(('pose.bones["LeftHip"]', 'pose.bones["LeftKnee"]')):
            assert keys == before[curve]  # other bones' keys are left alone
            continue
        assert [k for k in keys if not 100 <= k[0] <= 200] == [k for k in before[curve] if not 100 <= k[0] <= 200]
        inside = [k[0] for k in keys if 100 <= k[0] <= 200]
        assert inside[0] == 100.0
        assert inside[-1] == 200.0
        assert len(inside) < 101


def _noise(armature: bpy.types.Object) -> None:
    fcurve = next(f for f in compat.assigned_fcurves(armature) if f.data_path.endswith('["LeftKnee"].rotation_euler'))
    fcurve.modifiers.new("NOISE")


def _subframe(armature: bpy.types.Object) -> None:
    fcurve = next(f for f in compat.assigned_fcurves(armature) if f.data_path.endswith('["LeftKnee"].rotation_euler'))
    fcurve.keyframe_points.insert(50.5, 0.1)


def _constrained(armature: bpy.types.Object) -> None:
    constraint = armature.pose.bones["LeftKnee"].constraints.new("LIMIT_ROTATION")
    constraint.use_limit_x = True
    constraint.min_x = constraint.max_x = 0.0
    constraint.owner_space = "LOCAL"


def _muted(armature: bpy.types.Object) -> None:
    next(
        f for f in compat.assigned_fcurves(armature) if f.data_path.endswith('["LeftKnee"].rotation_euler')
    ).mute = True


def _not_inheriting(armature: bpy.types.Object) -> None:
    """LeftKnee turned in the world, not within its thigh: the reduction measured it elsewhere, and the refusal
    blamed a constraint, a driver or NLA strips (36 cm away)."""
    armature.data.bones["LeftKnee"].use_inherit_rotation = False


def _keyless(armature: bpy.types.Object) -> None:
    for fcurve in [f for f in compat.assigned_fcurves(armature) if '"LeftToe"' in f.data_path]:
        compat.remove_fcurve(armature, fcurve)


@pytest.mark.parametrize(
    ("change", "arguments", "message"),
    [
        (None, {"key_error": -1.0}, r"Key Error \(key_error\) must be a distance"),
        (None, {"key_error": float("nan")}, r"Key Error \(key_error\) must be a distance"),
        (None, {"key_error": "1mm"}, r"Key Error \(key_error\) must be a distance"),
        (None, {"key_error": 0.0}, r"must be above 0 to reduce keys"),
        (None, {"key_error": MM, "bones": ["Nose"]}, r"has no bone 'Nose'"),
        (_keyless, {"key_error": MM, "bones": ["LeftToe"]}, r"bone 'LeftToe' of .* has no keys"),
        (
            _noise,
            {"key_error": MM},
            r"has a Noise modifier, which changes the values its keys play: remove it, or "
            r"mute it, before reducing keys",
        ),
        (_muted, {"key_error": MM}, r"is muted, so its keys do not play: unmute it before reducing keys"),
        (
            _not_inheriting,
            {"key_error": MM},
            r"bone 'LeftKnee' of .* does not inherit its parent's rotation \(Inherit "
            r"Rotation is off\), which Reduce Keys does not measure: turn Inherit Rotation on, or leave the bone out",
        ),
        (
            None,
            {"key_error": MM, "frame_start": 500, "frame_end": 600},
            r"the Action .* has no keys of the bones to "
            r"reduce in frames 500-600 \(its keys are on frames 1-360\): set Start \(frame_start\) and End "
            r"\(frame_end\) to frames with keys",
        ),
        (_subframe, {"key_error": MM}, r"has a key between frames \(on frame 50.5\)"),
        (_constrained, {"key_error": MM}, r"bone 'LeftKnee' .* is not where its keys put it"),
        (None, {"key_error": MM, "frame_start": 9, "frame_end": 2}, r"end before they start"),
    ],
)
def test_bad_input_is_refused_by_name_and_nothing_changes(
    change: object, arguments: dict[str, object], message: str
) -> None:
    armature, _, _ = _clip()
    if callable(change):
        change(armature)
    before = file_digest()
    bones = arguments.pop("bones", None)
    with pytest.raises((TypeError, ValueError), match=message):
        api.reduce_keys(armature, bones, **arguments)
    assert file_digest() == before
