"""The extension package: built by scripts/tools/build_extension.py with Blender's own builder, then installed,
used, disabled and enabled again with Blender's own extension installer, in a fresh Blender process with an
isolated user folder (BLENDER_USER_RESOURCES is read when bpy is first imported)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]


def test_the_manifest_says_what_blender_needs() -> None:
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert manifest["schema_version"] == "1.0.0"
    assert manifest["id"] == "fabrik_addon"
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    assert manifest["version"] == project["version"]
    assert manifest["type"] == "add-on"
    assert manifest["blender_version_min"] == "4.2.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert manifest["license"] == ["SPDX:" + project["license"]]
    assert manifest["name"] == "FABRIK IK"
    # The fabrik_bake command opens and saves the .blend files it is given; no network, no clipboard.
    assert set(manifest["permissions"]) == {"files"}


def test_the_zip_holds_the_manifest_and_the_add_on_only(package: Path) -> None:
    assert package.name == "fabrik_addon-0.1.0.zip"
    with zipfile.ZipFile(package) as archive:
        names = set(archive.namelist())
        manifest = archive.read("blender_manifest.toml")
    source = REPO / "fabrik_addon"
    wanted = {
        path.relative_to(source).as_posix()
        for path in source.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith(".")
    }
    assert names == wanted | {"blender_manifest.toml"}
    assert {"__init__.py", "api/__init__.py", "solver/__init__.py", "blender/addon.py"} <= names
    assert manifest == (REPO / "blender_manifest.toml").read_bytes()


def test_install_bake_disable_and_enable_again(package: Path, tmp_path: Path) -> None:
    # The run builds its scene with the shared builders in scripts/scenes, on the path as pytest's (pyproject.toml).
    python_path = os.pathsep.join(filter(None, [str(REPO / "scripts" / "scenes"), os.environ.get("PYTHONPATH")]))
    environment = os.environ | {"BLENDER_USER_RESOURCES": str(tmp_path / "user"), "PYTHONPATH": python_path}
    run = [sys.executable, "-m", "tests.blender.addon.installed_run", str(package)]
    done = subprocess.run(run, cwd=REPO, env=environment, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])

    assert seen["install"] == ["FINISHED"]
    assert seen["enabled"]
    assert Path(seen["installed_under"]).is_relative_to(tmp_path)
    assert (Path(seen["installed_under"]) / "user_default" / "fabrik_addon" / "blender_manifest.toml").is_file()
    assert seen["chain_add"] == ["FINISHED"]
    assert seen["bake"] == ["FINISHED"]
    assert seen["baked_frames"] == 20
    assert 0 < seen["max_error"] <= 1e-3
    # panels, operators and the list (with Targets from Animation, Apply Layer and Reduce Keys); Plant Feet's panel
    # and 4 operators; property groups (with the planting's 2 and the keys' 1); bpy.ops.fabrik; Object.fabrik and
    # WindowManager.fabrik_playback; handlers
    handlers = 13 if seen["import_handlers"] else 12  # 6 of them stepping through iterations, 5 the preview's
    assert len(seen["held_while_enabled"]) == 20 + 6 + 4 + 2 + 1 + 2 + handlers, seen["held_while_enabled"]
    assert seen["disabled"]
    assert seen["left_after_disable"] == []
    assert seen["enabled_again"]
    assert seen["settings_kept"]
    assert seen["clear_again"] == ["FINISHED"]
    assert seen["preview_error_again"] <= 1e-3  # the live preview came back with the settings
    assert seen["bake_again"] == ["FINISHED"]
