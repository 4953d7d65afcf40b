"""The Pythons the command-line tests run scripts with: one without Blender's ``bpy`` module, as a new user's
``python3`` is."""

from __future__ import annotations

import shutil
import subprocess
import sys


def python_without_bpy() -> list[str]:
    """The system's ``python3`` where it has no ``bpy`` module (as on a fresh machine); else this Python without
    its site-packages (``-S``), where no ``bpy`` can be found either."""
    found = shutil.which("python3")
    if found is not None:
        probe = [found, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('bpy') is not None)"]
        if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
            return [found]
    return [sys.executable, "-S"]
