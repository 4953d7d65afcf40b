"""Running Node.js for the Flamenco job type's tests: Node is required (CI has it), never silently skipped."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail(
            "Node.js is needed to test the Flamenco job type (scripts/flamenco/fabrik-bake.js) and was not found "
            "on PATH: install it (Debian: apt-get install nodejs)"
        )
    return found


def compile_job(settings: dict[str, Any]) -> list[dict[str, Any]]:
    """The tasks scripts/flamenco/fabrik-bake.js compiles for ``settings`` (with JOB_TYPE's defaults)."""
    run = subprocess.run(
        [node(), str(HERE / "compile.mjs"), json.dumps(settings)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    tasks: list[dict[str, Any]] = json.loads(run.stdout)
    return tasks
