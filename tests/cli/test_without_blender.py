"""``scripts/tools/fabrik_bake.py`` under a Python without the ``bpy`` module (the system's ``python3``, as the
command's help suggests ``python``) says what to run instead, and leaves with the usage status, whatever the
arguments: no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.pythons import python_without_bpy

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tools" / "fabrik_bake.py"


@pytest.mark.parametrize(
    "args", [["--help"], [], ["shot.blend", "--armature", "Armature", "--tip", "hand.L", "--target", "Empty"]]
)
def test_the_script_under_a_python_without_bpy_says_what_to_run_instead(args: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [*python_without_bpy(), str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "has no bpy module" in done.stderr
    assert "blender -c fabrik_bake ARGS" in done.stderr
    assert f"blender -b --python {SCRIPT} -- ARGS" in done.stderr
    assert "pip install bpy" in done.stderr
    assert done.stdout == ""
    assert not any(tmp_path.iterdir())  # nothing written


def test_the_script_with_bpy_still_runs_the_command() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "--plant-feet" in done.stdout
