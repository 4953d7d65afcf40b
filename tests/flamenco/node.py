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


def _run(argument: str) -> Any:
    run = subprocess.run([node(), str(HERE / "compile.mjs"), argument], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def compile_job(
    settings: dict[str, Any],
    *,
    addon: bool = False,
    submitter: str = "linux",
    worker: str = "linux",
    variables: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The tasks scripts/flamenco/fabrik-bake.js compiles for ``settings``, each with the ``argv`` a Worker on
    ``worker`` runs for it (see compile.mjs): ``settings`` as an API call sends them, or with ``addon``
    completed as Flamenco's Blender add-on sends them."""
    submission = {"settings": settings, "addon": addon, "submitter": submitter, "worker": worker}
    tasks: list[dict[str, Any]] = _run(json.dumps({**submission, "variables": variables or {}}))
    return tasks


def job_type() -> dict[str, Any]:
    """The job type's JOB_TYPE."""
    found: dict[str, Any] = _run("--job-type")
    return found
