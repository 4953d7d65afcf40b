"""Fewer keys from the command line: ``--key-error`` on a bake and on planting feet, ``--reduce-keys`` on the
committed walk saved as a .blend file and a config job's ``reduce_keys``; the saved output re-opened and evaluated
by Blender keeps every bone within the error, as the JSON report says."""

from __future__ import annotations

import json
from pathlib import Path

import bpy
import key_scenes
import mocap
import numpy as np
import pytest

from fabrik_addon.blender import compat

from .cli_scenes import CHAIN, digest, run_cli, save_scene, save_walk

#: 1 mm: the walk is saved in metres.
MM = 1e-3


def _opened(path: Path, armature: str) -> tuple[bpy.types.Object, list[str], range]:
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False, use_scripts=False)
    rig = bpy.data.objects[armature]
    return rig, [bone.name for bone in rig.data.bones], mocap.scene_frames()


def test_reduce_keys_thins_a_saved_clip_within_the_error_the_report_gives(tmp_path: Path) -> None:
    source = tmp_path / "walk.blend"
    name = save_walk(source)
    armature, bones, frames = _opened(source, name)
    before = key_scenes.bone_points(armature, bones, frames)
    keys_before = key_scenes.keys_in(armature, frames.start, frames.stop - 1)
    report = tmp_path / "report.json"
    run = run_cli(source, "--armature", name, "--reduce-keys", "--key-error", MM, "--report", report)
    assert run.returncode == 0, run.stderr
    assert f"reduced the keys of {name}: kept" in run.stderr
    (reduced,) = json.loads(report.read_text())["files"][0]["reduced"]
    armature, bones, frames = _opened(tmp_path / "walk_baked.blend", name)
    error = np.linalg.norm(key_scenes.bone_points(armature, bones, frames) - before, axis=-1)
    assert error.max() <= MM
    keys = reduced["keys"]
    assert keys["max_error"] == pytest.approx(error.max(), abs=1e-6)
    assert keys["keys"] == key_scenes.keys_in(armature, frames.start, frames.stop - 1) < keys_before
    assert (keys["dense_keys"], keys["key_error"]) == (keys_before, MM)
    assert reduced["frames"] == [frames.start, frames.stop - 1]


def test_a_config_reduces_some_bones_keys_and_a_bake_and_a_planting_take_key_error(tmp_path: Path) -> None:
    walk = tmp_path / "walk.blend"
    name = save_walk(walk)
    config = tmp_path / "jobs.json"
    job = {"armature": name, "reduce_keys": True, "bones": ["LeftHip", "LeftKnee"], "key_error": MM}
    config.write_text(json.dumps({"jobs": [job]}))
    run = run_cli(walk, "--config", config, "--output", tmp_path / "reduced")
    assert run.returncode == 0, run.stderr
    armature, _, frames = _opened(tmp_path / "reduced" / "walk.blend", name)
    for fcurve in compat.assigned_fcurves(armature):
        thinned = '"LeftHip"' in fcurve.data_path or '"LeftKnee"' in fcurve.data_path
        assert (len(fcurve.keyframe_points) < len(frames)) == thinned
    report = tmp_path / "plant.json"
    run = run_cli(
        walk,
        "--armature",
        name,
        "--plant-feet",
        "LeftAnkle,RightAnkle",
        "--hips",
        "Hips",
        "--key-error",
        MM,
        "--report",
        report,
        "--output",
        tmp_path / "planted",
    )
    assert run.returncode == 0, run.stderr
    (planting,) = json.loads(report.read_text())["files"][0]["plantings"]
    assert planting["keys"]["keys"] < planting["keys"]["dense_keys"]
    assert planting["keys"]["max_error"] <= MM
    shot = save_scene(tmp_path / "shot.blend")
    report = tmp_path / "bake.json"
    run = run_cli(shot, *CHAIN, "--key-error", 0.01, "--report", report)
    assert run.returncode == 0, run.stderr
    (chain,) = json.loads(report.read_text())["files"][0]["chains"]
    assert chain["keys"]["keys"] < chain["keys"]["dense_keys"]
    assert chain["keys"]["max_error"] <= 0.01


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--armature", "Rig", "--reduce-keys"], "reducing keys needs --key-error"),
        (["--armature", "Rig", "--reduce-keys", "--key-error", "-1"], "--key-error must be a distance"),
        (["--reduce-keys", "--key-error", "0.1"], "--reduce-keys thins the keys of --armature NAME: give --armature"),
        (["--armature", "Rig", "--bones", "a"], "--bones applies to --reduce-keys"),
        ([*CHAIN, "--reduce-keys", "--key-error", "0.1"], "--reduce-keys thins the keys of --armature NAME: leave out"),
    ],
)
def test_reduce_keys_usage_errors_exit_2_naming_the_options(tmp_path: Path, args: list[str], message: str) -> None:
    source = save_scene(tmp_path / "shot.blend")
    before = digest(source)
    run = run_cli(source, *args)
    assert run.returncode == 2
    assert message in run.stderr
    assert digest(source) == before
    assert not (tmp_path / "shot_baked.blend").exists()
