"""The ending of the scripts test_package.py and test_readme.py run in a fresh Blender (bpy) process."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any


def report_and_leave(run: Callable[[], dict[str, Any]]) -> None:
    """Print what ``run`` saw as one JSON line (the test reads the last line of the output), then leave at once
    through os._exit: status 0, or 1 with the traceback on stderr if ``run`` raised. Blender's teardown at
    interpreter exit may crash, which would hide the status."""
    status = 0
    try:
        print(json.dumps(run()))
    except Exception:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
