"""The Flamenco job type's tasks bake their files: each task's command line, as a Worker builds it (the stand-in
of Flamenco in tests/flamenco), hands the fabrik_bake command arguments that bake the file (run here through
scripts/tools/fabrik_bake.py with the bpy module, the same code, since no Blender binary is installed)."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import bpy

from ..flamenco.node import compile_job, job_type
from .cli_scenes import TOLERANCE, run_cli, save_scene, save_walk, tip_errors

CHAIN = {"armature": "Rig", "tip": "bone.002", "target": "Target"}


def bake(tasks: list[dict[str, Any]]) -> None:
    """Run each task's command line (Blender opens no file itself: everything after "-c fabrik_bake" is the
    command's, which Blender hands to the function the extension registered)."""
    for task in tasks:
        argv = task["argv"]
        assert argv[:6] == ["blender", "-b", "-y", "--disable-autoexec", "-c", "fabrik_bake"]
        run = run_cli(*argv[6:])
        assert run.returncode == 0, run.stderr


def test_each_task_bakes_its_file_through_the_command_line(tmp_path: Path) -> None:
    files = [save_scene(tmp_path / "shots" / f"{name}.blend") for name in ("a", "b")]
    settings = {"folder": str(tmp_path / "shots"), "files": "a.blend; b.blend", "frames": "2-11", **CHAIN}
    tasks = compile_job({**settings, "output": str(tmp_path / "baked"), "report_dir": str(tmp_path / "reports")})
    assert [task["argv"][6] for task in tasks] == [str(file) for file in files]
    bake(tasks)
    for source in files:
        assert (tmp_path / "reports" / f"{source.stem}.json").exists()
        assert tip_errors(tmp_path / "baked" / source.name)[1:11].max() <= TOLERANCE * 1.001  # frames 2-11


def test_a_task_run_again_replaces_its_baked_file_with_overwrite(tmp_path: Path) -> None:
    """A re-queued task finds the file it baked before: without overwrite it fails, naming the option."""
    save_scene(tmp_path / "shots" / "a.blend")
    settings = {"folder": str(tmp_path / "shots"), "files": "a.blend", "frames": "2-11", **CHAIN}
    bake(compile_job(settings))
    again = run_cli(*compile_job(settings)[0]["argv"][6:])
    assert again.returncode == 1
    assert "--overwrite" in again.stderr
    bake(compile_job({**settings, "overwrite": True}))
    assert tip_errors(tmp_path / "shots" / "a_baked.blend")[1:11].max() <= TOLERANCE * 1.001


def test_a_task_plants_feet(tmp_path: Path) -> None:
    """plant_feet on the committed walk: the task's report holds each ball within 2 mm through its contacts."""
    name = save_walk(tmp_path / "mocap" / "walk.blend")
    settings = {"folder": str(tmp_path / "mocap"), "files": "walk.blend", "armature": name, "hips": "Hips"}
    tasks = compile_job({**settings, "plant_feet": "LeftAnkle,RightAnkle", "report_dir": str(tmp_path / "r")})
    bake(tasks)
    (entry,) = json.loads((tmp_path / "r" / "walk.json").read_text())["files"]
    ((first, second),) = [planting["feet"] for planting in entry["plantings"]]
    assert (first["foot"], second["foot"]) == ("LeftAnkle", "RightAnkle")
    for foot in (first, second):
        assert foot["contacts"]
        assert max(foot["skate_after"]) <= 0.002  # metres: the walk is saved in metres
        assert foot["out_of_reach_frames"] == []
    assert Path(entry["output"]) == tmp_path / "mocap" / "walk_baked.blend"


def addon_form(settings: list[dict[str, Any]]) -> type[bpy.types.PropertyGroup]:
    """The form Flamenco's Blender add-on makes of a job type's settings (its job_types_propgroup.py): a
    property per setting, of its type (an enum for text with choices), with the setting's description,
    default, subtype (in capitals) and propargs as keywords."""
    kinds = {"string": bpy.props.StringProperty, "int32": bpy.props.IntProperty, "float": bpy.props.FloatProperty}
    kinds["bool"] = bpy.props.BoolProperty
    annotations: dict[str, Any] = {}
    for setting in settings:
        keywords: dict[str, Any] = {"name": setting["key"].title().replace("_", " "), "options": set()}
        keywords.update({k: setting[k] for k in ("description", "default") if k in setting})
        if "subtype" in setting:
            keywords["subtype"] = setting["subtype"].upper()
        keywords.update(setting.get("propargs", {}))
        if "choices" in setting:
            items = [(choice, choice, "") for choice in setting["choices"]]
            annotations[setting["key"]] = bpy.props.EnumProperty(items=items, **keywords)
        else:
            annotations[setting["key"]] = kinds[setting["type"]](**keywords)
    return type("FabrikBakeJobForm", (bpy.types.PropertyGroup,), {"__annotations__": annotations})


def addon_submission(form: Any, settings: list[dict[str, Any]]) -> dict[str, Any]:
    """What the add-on submits: every setting's value in the form, then each hidden setting's ``eval``
    evaluated in Blender with the names the add-on gives it (Flamenco's documentation lists them)."""

    def abspath(path: str | Path) -> Path:  # the add-on's: Blender's // resolved, and .. entries
        return Path(os.path.abspath(bpy.path.abspath(str(path))))

    names = {"bpy": bpy, "C": bpy.context, "jobname": "bake", "Path": Path, "abspath": abspath, "settings": form}
    submitted = {setting["key"]: getattr(form, setting["key"]) for setting in settings}
    for setting in settings:
        if setting.get("visible", "visible") not in ("visible", "submission") and "eval" in setting:
            submitted[setting["key"]] = eval(setting["eval"], {}, names)
    return submitted


def test_a_job_submitted_from_blender_bakes_its_files(tmp_path: Path) -> None:
    files = [save_scene(tmp_path / "shots" / f"{name}.blend") for name in ("a", "b")]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "submitting.blend"))  # the add-on wants it saved
    settings = job_type()["settings"]
    form_type = addon_form(settings)
    bpy.utils.register_class(form_type)
    bpy.types.Scene.flamenco_job_settings = bpy.props.PointerProperty(type=form_type)
    try:
        form = bpy.context.scene.flamenco_job_settings
        # What an artist fills in, with paths relative to the open file (//). Blender 4.5+ warns that the
        # add-on's path properties do not take // paths (they lack PATH_SUPPORTS_BLEND_RELATIVE), and keeps them.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "[^ ]* does not support blend relative", RuntimeWarning)
            form.folder, form.output, form.report_dir = "//shots/", "//baked/", "//reports/"
        form.files, form.frames, form.tolerance = "a.blend;b.blend", "2-11", 1e-4
        form.armature, form.tip, form.target = CHAIN["armature"], CHAIN["tip"], CHAIN["target"]
        submitted = addon_submission(form, settings)
    finally:
        del bpy.types.Scene.flamenco_job_settings
        bpy.utils.unregister_class(form_type)
    # Blender's values for what was left alone, and the folder the // paths are relative to:
    assert (submitted["step"], submitted["max_iterations"], submitted["method"]) == (0, 0, "default")
    assert submitted["blend_dir"] == str(tmp_path)
    tasks = compile_job(submitted)
    assert [task["argv"][6] for task in tasks] == [str(file) for file in files]
    tolerance = tasks[0]["argv"][tasks[0]["argv"].index("--tolerance") + 1]
    assert tolerance != "0.0001"  # the form's float is single precision
    assert abs(float(tolerance) - 1e-4) < 1e-11
    bake(tasks)
    for source in files:
        assert (tmp_path / "reports" / f"{source.stem}.json").exists()
        assert tip_errors(tmp_path / "baked" / source.name)[1:11].max() <= TOLERANCE * 1.001
