"""The command line on files set up in the sidebar (``scripts/tools/fabrik_bake.py`` with the bpy module, as a farm
runs it): the chain lists saved in a file baked as they are, with nothing but the file named; targets made from
the animation; ``--layer``. Outputs re-opened and evaluated by Blender."""

from __future__ import annotations

import json
from pathlib import Path

import bpy
import edit_scenes
import mocap
import numpy as np

from fabrik_addon import api
from fabrik_addon.blender.layer import find_layer

from .cli_scenes import digest, run_cli
from .oracle import FloatArray


def _set_up(path: Path, *, targets: bool) -> tuple[FloatArray, float]:
    """The committed hop with its four chains in the sidebar's list (Output: Layer, the sidebar's default), and
    with ``targets`` their targets made from the animation, saved as ``path``: every chain bone's points on every
    frame, and the shortest chain's length."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    api.armatures_with_chains()
    armature = edit_scenes.clip_with_chains("hop")
    if targets:
        api.targets_from_animation(armature)
    points = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), mocap.scene_frames())
    shortest = min(edit_scenes.chain_lengths(armature).values())
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return points, shortest


def _reopened(path: Path) -> bpy.types.Object:
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False, use_scripts=False)
    api.armatures_with_chains()
    (armature,) = [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]
    return armature


def test_a_file_set_up_in_the_sidebar_bakes_as_it_is_with_only_its_name(tmp_path: Path) -> None:
    """``fabrik_bake shot.blend``: every armature's chain list, with its saved settings (a layer, as the sidebar
    bakes it); the animation given back, the input unchanged, the report listing each chain."""
    source = tmp_path / "shot.blend"
    before, shortest = _set_up(source, targets=True)
    unchanged = digest(source)
    run = run_cli(source, "--report", tmp_path / "report.json")
    assert run.returncode == 0, run.stderr
    assert digest(source) == unchanged
    report = json.loads((tmp_path / "report.json").read_text())
    assert sorted(c["tip_bone"] for c in report["files"][0]["chains"]) == [
        "LeftAnkle",
        "LeftElbow",
        "RightAnkle",
        "RightElbow",
    ]
    assert "shot.blend: */chain list: baking" in run.stderr
    armature = _reopened(tmp_path / "shot_baked.blend")
    assert find_layer(armature) is not None
    after = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), mocap.scene_frames())
    assert np.linalg.norm(after - before, axis=-1).max() <= 1e-4 * shortest


def test_targets_from_the_animation_then_a_layer_bake_over_a_list_saved_for_the_action(tmp_path: Path) -> None:
    """``--targets-from-animation`` makes the targets of every chain list; then, on a list saved with Output
    Action, ``--layer`` bakes a layer all the same, giving the animation back."""
    source = tmp_path / "take.blend"
    before, shortest = _set_up(source, targets=False)
    made = tmp_path / "take_targets.blend"
    run = run_cli(source, "--targets-from-animation", "--output", made)
    assert run.returncode == 0, run.stderr
    assert "made targets for 4 chains of cmu_131_03_hop (4 poles), frames 1-300" in run.stderr
    armature = _reopened(made)
    assert all(chain.target is not None and chain.pole_target is not None for chain in armature.fabrik.chains)
    armature.fabrik.output = "ACTION"
    bpy.ops.wm.save_as_mainfile(filepath=str(made))
    run = run_cli(made, "--armature", armature.name, "--layer", "--output", tmp_path / "take_baked.blend")
    assert run.returncode == 0, run.stderr
    armature = _reopened(tmp_path / "take_baked.blend")
    assert find_layer(armature) is not None
    after = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), mocap.scene_frames())
    assert np.linalg.norm(after - before, axis=-1).max() <= 1e-4 * shortest


def test_a_file_with_no_chain_list_says_what_to_do(tmp_path: Path) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    mocap.import_clip("hop")
    source = tmp_path / "raw.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    run = run_cli(source, "--layer")
    assert run.returncode == 1
    assert "no armature of the file has an enabled chain in its FABRIK chain list" in run.stderr
    assert not (tmp_path / "raw_baked.blend").exists()
