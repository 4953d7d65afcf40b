"""The Flamenco job type's tasks run the command line correctly: each task's Blender command line, as a Worker
would build it, hands fabrik_bake.py arguments that bake the file (run here with the bpy module, since no
Blender binary is installed)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from fabrik_cli.options import script_args

from ..flamenco.node import compile_job
from .cli_scenes import REPO, SCRIPT, TOLERANCE, run_cli, save_scene, tip_errors

# What a Manager would put for its variables: Flamenco's default blenderArgs, this repository as {fabrik}.
VARIABLES = {"{blender}": "/opt/blender/blender", "{blenderArgs}": "-b -y", "{fabrik}": str(REPO)}


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
        # Blender opens no file itself (the script does, with scripts off) and runs the script.
        assert argv[:7] == [
            "/opt/blender/blender",
            "-b",
            "-y",
            "--disable-autoexec",
            "--python-exit-code",
            "1",
            "--python",
        ]
        assert argv[7] == str(SCRIPT)
        args = script_args(argv, inside_blender=True)
        assert args[0] == str(source)
        run = run_cli(*args)
        assert run.returncode == 0, run.stderr
        output = tmp_path / "baked" / source.name
        assert (tmp_path / "reports" / f"{source.stem}.json").exists()
        assert tip_errors(output)[1:11].max() <= TOLERANCE * 1.001  # frames 2-11
