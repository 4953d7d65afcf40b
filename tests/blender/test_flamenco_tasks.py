"""The Flamenco job type's tasks bake their files: each task's command line, as a Worker builds it (the stand-in
of Flamenco in tests/flamenco), hands the fabrik_bake command arguments that bake the file (run here through
scripts/fabrik_bake.py with the bpy module, the same code, since no Blender binary is installed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..flamenco.node import compile_job
from .cli_scenes import TOLERANCE, run_cli, save_scene, tip_errors

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
