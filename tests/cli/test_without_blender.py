"""``scripts/fabrik_bake.py`` under a Python without the ``bpy`` module (the system's ``python3``, as the
command's help suggests ``python``) says what to run instead, and leaves with the usage status, whatever the
arguments: no traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fabrik_bake.py"


def _python_without_bpy() -> list[str]:
    """The system's ``python3`` where it has no ``bpy`` (as on a fresh machine); else this Python without its
    site-packages (``-S``), where no ``bpy`` can be found either."""
    found = shutil.which("python3")
    if found is not None:
        probe = [found, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('bpy') is not None)"]
        if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
            return [found]
    return [sys.executable, "-S"]


@pytest.mark.parametrize(
    "args", [["--help"], [], ["shot.blend", "--armature", "Armature", "--tip", "hand.L", "--target", "Empty"]]
)
def test_the_script_under_a_python_without_bpy_says_what_to_run_instead(args: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [*_python_without_bpy(), str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path, check=False
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
