"""The Flamenco job type's own tests, in Node's test runner against a stand-in of Flamenco's ``author`` API."""

from __future__ import annotations

import re
import subprocess

from .node import HERE, node


def test_the_flamenco_job_type_compiles_the_expected_tasks() -> None:
    run = subprocess.run(
        [node(), "--test", str(HERE / "fabrik-bake.test.mjs")], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    passed = re.search(r"^# pass (\d+)$", run.stdout, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", run.stdout, re.MULTILINE)
    assert passed is not None, run.stdout
    assert failed is not None, run.stdout
    assert (int(passed[1]), int(failed[1])) == (6, 0), run.stdout
