"""scripts/tools/build_extension.py without the test venv: under a Python that has no ``bpy`` module it builds with a
Blender binary's ``--command extension`` (``--blender``, or the ``blender`` on the PATH), and without either it
says what to run instead. The Blender here is the ``bpy`` module running the very handler Blender's
``--command extension`` runs (``bl_pkg``'s ``cli_extension_handler``): no Blender binary is installed."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.pythons import python_without_bpy

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "tools" / "build_extension.py"
#: ``blender --command extension ARGS`` as Blender runs it: bl_pkg's handler, with Blender's valid tags.
BLENDER = f"""#!{sys.executable}
import os, sys
if sys.argv[1:3] != ["--command", "extension"]:
    sys.exit(f"not a --command extension call: {{sys.argv[1:]}}")
import bpy
from bl_pkg import bl_extension_cli
sys.stdout.flush()
os._exit(bl_extension_cli.cli_extension_handler(sys.argv[3:]) or 0)
"""


def _blender(folder: Path) -> Path:
    folder.mkdir()
    blender = folder / "blender"
    blender.write_text(BLENDER, encoding="utf-8")
    blender.chmod(0o755)
    return blender


def _build(tmp_path: Path, *args: str, path: str) -> subprocess.CompletedProcess[str]:
    command = [*python_without_bpy(), str(SCRIPT), "--output-dir", str(tmp_path / "dist"), *args]
    environment = os.environ | {"PATH": path}
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300, check=False)


def test_a_python_without_bpy_builds_with_the_blender_named(tmp_path: Path) -> None:
    blender = _blender(tmp_path / "bin")
    done = _build(tmp_path, "--blender", str(blender), path=os.defpath)
    assert done.returncode == 0, done.stderr
    package = Path(done.stdout.strip())
    assert package == tmp_path / "dist" / "fabrik_addon-0.1.0.zip"
    with zipfile.ZipFile(package) as archive:
        assert {"blender_manifest.toml", "__init__.py", "api/__init__.py"} <= set(archive.namelist())


def test_a_python_without_bpy_builds_with_the_blender_on_the_path(tmp_path: Path) -> None:
    blender = _blender(tmp_path / "bin")
    done = _build(tmp_path, path=os.pathsep.join([str(blender.parent), os.defpath]))
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_file()


def test_without_bpy_or_blender_it_says_what_to_run(tmp_path: Path) -> None:
    done = _build(tmp_path, path=os.defpath)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "has no bpy module and no blender is on the PATH" in done.stderr
    assert "pip install bpy" in done.stderr
    assert "--blender /path/to/blender" in done.stderr
    assert not (tmp_path / "dist").exists()


def test_a_blender_that_fails_is_reported_with_its_output(tmp_path: Path) -> None:
    broken = tmp_path / "blender"
    broken.write_text("#!/bin/sh\necho 'Error: not a Blender' >&2\nexit 1\n", encoding="utf-8")
    broken.chmod(0o755)
    done = _build(tmp_path, "--blender", str(broken), path=os.defpath)
    assert done.returncode == 1
    assert f"{broken} --command extension build failed" in done.stderr
    assert "Error: not a Blender" in done.stderr
    assert not (tmp_path / "dist" / "fabrik_addon-0.1.0.zip").exists()
