"""The Flamenco job type: its own tests in Node's test runner against a stand-in of Flamenco, and the command
lines its tasks give a Worker, read by the fabrik_bake command's own argument parser."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabrik_addon.cli.jobs import ChainListJob, PlantJob, TargetsJob
from fabrik_addon.cli.options import Request, parse_args
from fabrik_addon.solver import METHODS

from .node import HERE, compile_job, job_type, node


def test_the_job_type_and_the_stand_in_of_flamenco_pass_their_node_tests() -> None:
    files = [str(HERE / name) for name in ("fabrik-bake.test.mjs", "flamenco_standin.test.mjs")]
    run = subprocess.run([node(), "--test", *files], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    passed = re.search(r"^# pass (\d+)$", run.stdout, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", run.stdout, re.MULTILINE)
    assert passed is not None, run.stdout
    assert failed is not None, run.stdout
    assert (int(passed[1]), int(failed[1])) == (19, 0), run.stdout


def command_requests(settings: dict[str, Any], *, addon: bool) -> list[Request]:
    """Each task's arguments for the fabrik_bake command, as a Worker passes them, read by its parser (a usage
    error raises)."""
    requests = []
    for task in compile_job(settings, addon=addon):
        argv = task["argv"]
        assert argv[:6] == ["blender", "-b", "-y", "--disable-autoexec", "-c", "fabrik_bake"]
        requests.append(parse_args(argv[6:]))
    return requests


CHAIN = {"armature": "Rig", "tip": "hand.L", "target": "Hand.IK"}
TUNED = {"chain_length": 2, "frames": "1-10", "step": 2, "tolerance": 1e-4, "max_iterations": 50, "method": "ccd"}


@pytest.mark.parametrize("addon", [True, False], ids=["from-blender", "from-the-api"])
def test_a_submission_left_at_its_defaults_gives_the_command_its_own(addon: bool) -> None:
    requests = command_requests({"folder": "/shots", "files": "a.blend;b.blend", **CHAIN}, addon=addon)
    assert [r.inputs for r in requests] == [(Path("/shots/a.blend"),), (Path("/shots/b.blend"),)]
    for request in requests:
        assert request.defaults == {}  # nothing given: the command's defaults apply
        assert request.chain is not None
        assert request.chain.settings.chains[0].chain_length == 0
        assert (request.output, request.in_place, request.report, request.processes) == (None, False, None, 1)


@pytest.mark.parametrize("addon", [True, False], ids=["from-blender", "from-the-api"])
def test_bake_settings_given_reach_the_command(addon: bool) -> None:
    (request,) = command_requests({"folder": "/shots", "files": "a.blend", **CHAIN, **TUNED}, addon=addon)
    assert request.defaults == {
        "frame_start": 1,
        "frame_end": 10,
        "frame_step": 2,
        "tolerance": 1e-4,
        "max_iterations": 50,
        "method": "ccd",
    }
    assert request.chain is not None
    assert request.chain.settings.chains[0].chain_length == 2


@pytest.mark.parametrize("addon", [True, False], ids=["from-blender", "from-the-api"])
def test_overwrite_and_strict_reach_the_command(addon: bool) -> None:
    given = {"folder": "/shots", "files": "a.blend", **CHAIN}
    (request,) = command_requests({**given, "overwrite": True, "strict": True}, addon=addon)
    assert (request.overwrite, request.strict) == (True, True)
    (request,) = command_requests(given, addon=addon)
    assert (request.overwrite, request.strict) == (False, False)


@pytest.mark.parametrize("addon", [True, False], ids=["from-blender", "from-the-api"])
def test_a_folder_task_with_a_config_file_an_output_and_a_report(addon: bool) -> None:
    settings = {"folder": "/shots", "processes": 3, "config": "/c.toml", "output": "/out", "report_dir": "/r"}
    (request,) = command_requests(settings, addon=addon)
    assert request.inputs == (Path("/shots"),)
    assert (request.chain, request.config, request.output) == (None, Path("/c.toml"), Path("/out"))
    assert (request.report, request.processes) == (Path("/r/shots.json"), 3)


def test_every_method_of_the_command_is_a_choice_after_the_default() -> None:
    choices = next(s["choices"] for s in job_type()["settings"] if s["key"] == "method")
    assert choices[0] == "default"
    assert sorted(choices[1:]) == sorted(METHODS)
    for method in METHODS:
        (request,) = command_requests({"folder": "/s", "files": "a.blend", **CHAIN, "method": method}, addon=True)
        assert request.defaults == {"method": method}


@pytest.mark.parametrize("addon", [True, False], ids=["from-blender", "from-the-api"])
def test_feet_to_plant_reach_the_command_as_a_planting(addon: bool) -> None:
    feet = {"armature": "Walk", "plant_feet": "LeftFoot,RightFoot", "hips": "Hips", "chain_length": 4}
    (request,) = command_requests({"folder": "/mocap", "files": "walk.blend", **feet, "tolerance": 1e-4}, addon=addon)
    assert isinstance(request.chain, PlantJob)
    settings = request.chain.settings
    assert (settings.feet, settings.hips_bone, settings.chain_length) == (("LeftFoot", "RightFoot"), "Hips", 4)
    assert settings.rules.tolerance == 1e-4  # leg lengths


@pytest.mark.parametrize("addon", [True, False], ids=["from-blender", "from-the-api"])
def test_the_chain_lists_saved_in_the_files_and_targets_reach_the_command_as_its_jobs(addon: bool) -> None:
    """A file set up in the sidebar: the job with no chain named bakes its saved chain lists (as a layer with
    ``layer``), or makes their targets from the animation; the command reads each as that job."""
    (saved,) = command_requests({"folder": "/shots", "files": "a.blend", "layer": True}, addon=addon)
    assert saved.chain == ChainListJob(None, {"output": "layer"})
    (made,) = command_requests(
        {"folder": "/shots", "files": "a.blend", "armature": "Rig", "targets_from_animation": True}, addon=addon
    )
    assert made.chain == TargetsJob("Rig", {})
