"""The add-on as Blender runs it: registered in this process (after the parent conftest's clean file), and
unregistered after each test, so every test starts and ends without it; and the extension's zip, built once
per test process by scripts/tools/build_extension.py (Blender's own builder)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import bpy
import pytest

import fabrik_addon

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    fabrik_addon.register()
    yield
    if hasattr(bpy.types, "FABRIK_OT_bake"):  # a test may have unregistered it already
        fabrik_addon.unregister()


@pytest.fixture(scope="session")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("dist")
    build = [sys.executable, str(REPO / "scripts" / "tools" / "build_extension.py"), "--output-dir", str(output)]
    done = subprocess.run(build, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    return Path(done.stdout.strip())
