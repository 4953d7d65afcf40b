"""The Flamenco job type's tasks run the command line correctly: each task's Blender command line, as a Worker
would build it, hands the fabrik_bake command arguments that bake the file (run here through
scripts/fabrik_bake.py with the bpy module, the same code, since no Blender binary is installed)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ..flamenco.node import compile_job
from .cli_scenes import TOLERANCE, run_cli, save_scene, tip_errors

# What a Manager would put for its variables: Flamenco's default blenderArgs.
VARIABLES = {"{blender}": "/opt/blender/blender", "{blenderArgs}": "-b -y"}


def worker_argv(parameters: dict[str, Any]) -> list[str]:
    """The command a Worker runs for a blender-render command: {exe} {exeArgs} {argsBefore} {blendfile} {args}."""

    def expand(text: object) -> str:
        out = str(text)
        for name, value in VARIABLES.items():
            out = out.replace(name, value)
        return out

    argv = [expand(parameters["exe"]), *shlex.split(expand(parameters["exeArgs"]))]
    argv += [expand(a) for a in parameters["argsBefore"]]
    argv += [expand(parameters["blendfile"])] if parameters["blendfile"] else []
    return argv + [expand(a) for a in parameters["args"]]


def test_each_task_bakes_its_file_through_the_command_line(tmp_path: Path) -> None:
    files = [save_scene(tmp_path / "shots" / f"{name}.blend") for name in ("a", "b")]
    tasks = compile_job(
        {
            "blendfiles": ";".join(map(str, files)),
            "armature": "Rig",
            "tip": "bone.002",
            "target": "Target",
            "frames": "2-11",
            "output": str(tmp_path / "baked"),
            "report_dir": str(tmp_path / "reports"),
        }
    )
    assert len(tasks) == 2
    for task, source in zip(tasks, files, strict=True):
        (command,) = task["commands"]
        argv = worker_argv(command["parameters"])
        # Blender opens no file itself (the command does, with scripts off): everything after "-c fabrik_bake"
        # is the command's, which Blender hands to the function the extension registered.
        assert argv[:6] == ["/opt/blender/blender", "-b", "-y", "--disable-autoexec", "-c", "fabrik_bake"]
        args = argv[6:]
        assert args[0] == str(source)
        run = run_cli(*args)  # the same command, run from the repository (no Blender binary is at hand)
        assert run.returncode == 0, run.stderr
        output = tmp_path / "baked" / source.name
        assert (tmp_path / "reports" / f"{source.stem}.json").exists()
        assert tip_errors(output)[1:11].max() <= TOLERANCE * 1.001  # frames 2-11
