"""Bakes with a ``key_error``: fewer keys, every baked bone's head, tail and points off its axis within the error of
where a key on every frame puts them, as Blender evaluates the keys (the oracle: a bake of the same scene keyed on
every frame, stepped frame by frame), the report's error Blender's own; for every output, trees and chains below
chains, stepped frames, stretch, the legs and hips of a planting and the Empties of Targets from Animation."""

from __future__ import annotations

from collections.abc import Callable

import bpy
import key_scenes
import mocap
import numpy as np
import pytest
from rigs import make_chain, new_file, scene, y_rig

from fabrik_addon import api
from fabrik_addon.blender import compat

from .oracle import FloatArray, fcurve_keys

#: The goal's bound, and the bake's tolerance, in lengths of the chain.
KEY_ERROR, TOLERANCE = 5e-4, 1e-5
#: Blender's evaluation and the report agree to this (world units): float32 rounding of the points.
SAME = 1e-6
FRAMES = range(1, 251)


def _baked_twice(
    build: Callable[[], tuple[bpy.types.Object, list[str], Callable[..., object]]], **options: object
) -> tuple[FloatArray, FloatArray, object, bpy.types.Object]:
    """Build a scene and bake it keyed on every frame, then build it again and bake it with ``options``: each
    bake's points as Blender evaluates them (F, bones, 5, 3), the second bake's report and armature."""
    armature, bones, bake = build()
    bake()
    dense = key_scenes.bone_points(armature, bones, FRAMES)
    armature, bones, bake = build()
    report = bake(**options)
    return dense, key_scenes.bone_points(armature, bones, FRAMES), report, armature


def _eased(
    bones: int, output: str = "action"
) -> Callable[[], tuple[bpy.types.Object, list[str], Callable[..., object]]]:
    def build() -> tuple[bpy.types.Object, list[str], Callable[..., object]]:
        armature, names, target = key_scenes.eased_chain(bones)

        def bake(**options: object) -> object:
            return api.bake(armature, target, tip_bone=names[-1], tolerance=TOLERANCE, output=output, **options)

        return armature, names, bake

    return build


@pytest.mark.parametrize("output", ["action", "layer"])
@pytest.mark.parametrize("bones", [2, 16])
def test_smooth_targets_keep_a_tenth_of_the_keys_every_point_within_the_error(bones: int, output: str) -> None:
    dense, thinned, report, _ = _baked_twice(_eased(bones, output), key_error=KEY_ERROR)
    keys = report.keys
    error = np.linalg.norm(thinned - dense, axis=-1)
    assert keys.keys <= 0.10 * keys.dense_keys
    assert keys.dense_keys == len(FRAMES) * bones * 4  # a quaternion on every frame
    assert error.max() <= KEY_ERROR
    assert keys.max_error == pytest.approx(error.max(), abs=SAME)
    assert keys.p99_error == pytest.approx(np.percentile(error, 99), abs=SAME)
    assert keys.max_error <= KEY_ERROR
    if output == "action":
        assert keys.rounding == 0.0
    # The tip meets its target within the tolerance and the error allowed (and a layer's rounding: a bake keyed
    # on every frame misses by that too).
    assert report.max_error <= TOLERANCE + keys.rounding + KEY_ERROR


def test_kept_keys_are_bezier_keys_of_the_dense_values_with_free_handles_a_third_of_the_way() -> None:
    armature, names, target = key_scenes.eased_chain(2)
    api.bake(armature, target, tip_bone=names[-1], tolerance=TOLERANCE)
    dense = fcurve_keys(armature)
    armature, names, target = key_scenes.eased_chain(2)
    api.bake(armature, target, tip_bone=names[-1], tolerance=TOLERANCE, key_error=KEY_ERROR)
    for fcurve in compat.assigned_fcurves(armature):
        points = fcurve.keyframe_points
        frames = np.array([p.co[0] for p in points])
        assert frames[0] == FRAMES.start
        assert frames[-1] == FRAMES.stop - 1
        assert len(points) < len(FRAMES)
        values = dict(dense[(fcurve.data_path, fcurve.array_index)])
        for p in points:
            assert p.co[1] == pytest.approx(values[p.co[0]], abs=1e-7)  # the value the dense bake keys there
            assert (p.handle_left_type, p.handle_right_type) == ("FREE", "FREE")
        assert [p.interpolation for p in points] == ["BEZIER"] * (len(points) - 1) + ["LINEAR"]
        gaps = np.diff(frames) / 3
        np.testing.assert_allclose([p.handle_right[0] for p in points][:-1], frames[:-1] + gaps, atol=1e-4)
        np.testing.assert_allclose([p.handle_left[0] for p in points][1:], frames[1:] - gaps, atol=1e-4)


def test_keys_outside_the_range_stay_and_without_a_key_error_every_frame_is_keyed() -> None:
    armature, names, target = key_scenes.eased_chain(4)
    api.bake(armature, target, tip_bone=names[-1], tolerance=TOLERANCE)
    before = fcurve_keys(armature)
    report = api.bake(
        armature, target, tip_bone=names[-1], tolerance=TOLERANCE, key_error=KEY_ERROR, frame_start=60, frame_end=180
    )
    assert report.keys is not None
    assert report.keys.dense_keys == 121 * 4 * 4
    for curve, keys in fcurve_keys(armature).items():
        outside = [key for key in before[curve] if not 60 <= key[0] <= 180]
        assert [key for key in keys if not 60 <= key[0] <= 180] == outside
        assert 60.0 in [key[0] for key in keys]
        assert 180.0 in [key[0] for key in keys]
    dense = api.bake(armature, target, tip_bone=names[-1], tolerance=TOLERANCE)
    assert dense.keys is None
    assert all(len(keys) == len(FRAMES) for keys in fcurve_keys(armature).values())


def test_a_stepped_bake_keeps_some_of_its_stepped_frames() -> None:
    armature, names, target = key_scenes.eased_chain(3)
    report = api.bake(armature, target, tip_bone=names[-1], tolerance=TOLERANCE, frame_step=4, key_error=KEY_ERROR)
    stepped = {*range(1, 251, 4), 250}
    assert report.keys is not None
    assert report.keys.dense_keys == len(stepped) * 3 * 4
    assert list(report.keys.frames) == sorted(stepped)
    for keys in fcurve_keys(armature).values():
        assert {round(frame) for frame, _ in keys} < stepped


def _two_chains(kind: str) -> Callable[[], tuple[bpy.types.Object, list[str], Callable[..., object]]]:
    """A tree (a Y: two chains sharing a trunk) or a chain hanging below another chain's tip (both baked at
    once, the lower one after the upper), each tip following an eased Empty."""

    def build() -> tuple[bpy.types.Object, list[str], Callable[..., object]]:
        new_file(FRAMES)
        if kind == "tree":
            armature, tips, bones = y_rig(trunk=3, branch=4)
            lengths = (3, 7)
        else:
            armature, bones = make_chain(8, length=0.4)
            tips, lengths = [bones[3], bones[7]], (4, 4)
        targets = []
        for k, tip in enumerate(tips):
            tail = np.array(armature.matrix_world @ armature.pose.bones[tip].tail)
            keys = [
                (f, tuple(tail + 0.3 * np.array(offset) * (k + 1)))
                for f, offset in ((1, (0, 0, 0)), (80, (0.5, -0.3, -0.4)), (170, (-0.4, 0.4, -0.2)), (250, (0, 0, 0)))
            ]
            targets.append(key_scenes.eased_empty(f"Target{k}", keys))

        def bake(**options: object) -> object:
            chains = tuple(
                api.ChainSettings(armature, target, tip, length)
                for target, tip, length in zip(targets, tips, lengths, strict=True)
            )
            settings = api.BakeSettings(
                chains, api.FrameRange(1, 250), api.SolverSettings(tolerance=TOLERANCE), **options
            )
            return api.bake_settings(settings)

        return armature, bones, bake

    return build


@pytest.mark.parametrize("kind", ["tree", "below"])
def test_trees_and_chains_below_chains_keep_every_bone_within_the_error(kind: str) -> None:
    dense, thinned, report, _ = _baked_twice(_two_chains(kind), key_error=2e-3)
    keys = report.keys
    error = np.linalg.norm(thinned - dense, axis=-1)
    assert error.max() <= 2e-3
    assert keys.max_error == pytest.approx(error.max(), abs=SAME)
    assert keys.keys < 0.3 * keys.dense_keys
    for chain in report.chains:
        assert chain.keys.max_error <= keys.max_error
        assert chain.keys.keys < chain.keys.dense_keys


def test_stretched_bones_keep_their_y_scale_keys_within_the_error() -> None:
    def build() -> tuple[bpy.types.Object, list[str], Callable[..., object]]:
        new_file(FRAMES)
        armature, names = make_chain(3, length=0.5)
        for name in names:
            armature.pose.bones[name].ik_stretch = 0.3
        keys = [(1, (0.3, 0.2, 1.2)), (90, (0.9, -0.6, 1.4)), (180, (-0.5, 0.4, 1.1)), (250, (0.3, 0.2, 1.2))]
        target = key_scenes.eased_empty("Target", keys)

        def bake(**options: object) -> object:
            return api.bake(armature, target, tip_bone=names[-1], tolerance=TOLERANCE, use_stretch=True, **options)

        return armature, names, bake

    dense, thinned, report, armature = _baked_twice(build, key_error=1e-3)
    error = np.linalg.norm(thinned - dense, axis=-1)
    assert error.max() <= 1e-3
    assert report.keys.max_error == pytest.approx(error.max(), abs=SAME)
    scales = {k: v for k, v in fcurve_keys(armature).items() if k[0].endswith(".scale")}
    assert scales
    assert all(len(keys) < len(FRAMES) for keys in scales.values())


def test_planted_feet_and_lowered_hips_keep_few_keys_the_balls_on_their_pins() -> None:
    metres = mocap.CMU_UNIT
    key_error = 1e-3 / metres  # 1 mm, in the clip's units
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature = mocap.import_clip("walk")
    feet = [mocap.naming(armature).ankle.format(side=side) for side in mocap.SIDES]
    frames = mocap.scene_frames()
    balls_before = key_scenes.bone_points(armature, feet, frames)[:, :, 1]
    dense_report = api.plant_feet(armature, feet, hips_bone="Hips")
    bones = [*{n for chain in dense_report.bake.chains for n in chain.bones}, "Hips"]
    dense = key_scenes.bone_points(armature, bones, frames)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature = mocap.import_clip("walk")
    report = api.plant_feet(armature, feet, hips_bone="Hips", key_error=key_error)
    thinned = key_scenes.bone_points(armature, bones, frames)
    error = np.linalg.norm(thinned - dense, axis=-1)
    assert report.keys is not None
    assert error.max() <= key_error
    # SAME in metres, as the error allowed is: float32 rounds these points, some 30 units from the origin, by a
    # few millionths of a unit (the report's reference is the pose the keys stand for, in float64).
    assert report.keys.max_error == pytest.approx(error.max(), abs=SAME / metres)
    assert report.keys.keys < 0.25 * report.keys.dense_keys
    hips = [keys for (path, _), keys in fcurve_keys(armature).items() if path == 'pose.bones["Hips"].location']
    assert hips
    assert all(len(keys) < 0.5 * len(frames) for keys in hips)
    # Through each contact the ball stays within key_error of its pin: where the clip had it mid-contact.
    balls = np.asarray(thinned[:, [bones.index(foot) for foot in feet], 1])
    for k, foot in enumerate(report.feet):
        for first, last in foot.contacts:
            pin = balls_before[(first + last) // 2 - frames.start, k]
            held = balls[first - frames.start : last - frames.start + 1, k]
            assert np.linalg.norm(held - pin, axis=-1).max() <= key_error, (foot.foot, first, last)


def test_targets_made_from_the_animation_keep_few_keys_within_the_error() -> None:
    def made(key_error: float) -> tuple[FloatArray, object]:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        api.armatures_with_chains()  # registers the settings where the add-on is not enabled
        armature = mocap.import_clip("walk")
        chain = armature.fabrik.chains.add()
        chain.tip_bone, chain.chain_length = mocap.naming(armature).wrist.format(side="Left"), 3
        chain.use_rotation = True
        report = api.targets_from_animation(armature, key_error=key_error)
        empties = [*report.targets.values(), *report.poles.values()]
        places = []
        for frame in mocap.scene_frames():
            scene().frame_set(frame)
            places.append([np.array(e.matrix_world) for e in empties])
        return np.array(places), report

    dense, _ = made(0.0)
    key_error = 1e-3 / mocap.CMU_UNIT
    thinned, report = made(key_error)
    assert report.keys is not None
    assert report.keys.keys < 0.3 * report.keys.dense_keys
    assert np.linalg.norm(thinned[..., :3, 3] - dense[..., :3, 3], axis=-1).max() <= key_error
    assert report.keys.max_error <= key_error


def test_baked_ik_constraints_and_a_saved_chain_list_take_a_key_error() -> None:
    armature, names, target = key_scenes.eased_chain(3)
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count = target, 3
    report = api.bake_ik_constraints(armature, key_error=KEY_ERROR)
    assert report.keys is not None
    assert report.keys.keys < 0.25 * report.keys.dense_keys
    assert report.keys.max_error <= KEY_ERROR
    with pytest.raises(ValueError, match=r"key_error"):
        api.bake_ik_constraints(armature, key_error=-1.0)


def test_where_blenders_evaluation_finds_a_point_out_of_bounds_the_bake_keys_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The prediction is not the judge: were the thinning to keep too few keys (here a key every 30 frames, as if
    its prediction were wrong), the bake's check by Blender's evaluation finds the points out of bounds, keys
    those frames and checks again, and the report says what Blender evaluates."""
    import fabrik_addon.blender.reduction.thinning as thinning
    from fabrik_addon.reduction import Channels, Thinned, keyed_curve

    def too_few(times: FloatArray, skeleton: object, nodes: list[list[Channels]], bound: object) -> Thinned:
        keyed = [c.keyed for node in nodes for c in node if c.keyed is not None]
        rows = np.unique([*range(0, len(times), 30), len(times) - 1])
        controls = tuple(keyed_curve(times, rows, values)[1] for values in keyed)
        values = tuple(values[rows] for values in keyed)
        return Thinned(tuple(rows for _ in keyed), values, controls, np.zeros((len(times), 1)))

    monkeypatch.setattr(thinning, "thin_keys", too_few)
    dense, thinned, report, _ = _baked_twice(_eased(3), key_error=2e-3)
    error = np.linalg.norm(thinned - dense, axis=-1)
    keys = report.keys
    assert keys.max_error == pytest.approx(error.max(), abs=SAME)
    assert error.max() <= 2e-3
    assert 10 * 3 * 4 < keys.keys < keys.dense_keys  # more than the prediction kept, fewer than all
