"""Test-wide settings.

- hypothesis runs derandomised (seeded), so every run checks the same examples.
- A process that imported ``bpy`` leaves through ``os._exit`` once pytest has reported everything: Blender's
  own teardown at interpreter exit can crash (bpy 4.2 segfaults after Rigify was enabled in the process),
  which would turn a passing run into exit code 139. The status is pytest's own.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "seeded",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("seeded")

_EXIT_STATUS = pytest.StashKey[int]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if "bpy" in sys.modules and _EXIT_STATUS in config.stash:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(config.stash[_EXIT_STATUS])
