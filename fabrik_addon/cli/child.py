"""The script a ``-j N`` child process runs, with the ``bpy`` module (``python child.py ARGS``) or inside a
Blender binary (``blender -b --python child.py -- ARGS``): it imports the package it lies in, under whatever
name that package has where it is installed (``fabrik_addon``, or the extension's ``bl_ext...`` one), so the
child runs the very code its parent runs."""

from __future__ import annotations

import importlib
import os
import sys


def run() -> int:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.dirname(package))
    command = importlib.import_module(f"{os.path.basename(package)}.cli.command")
    inside_blender = bool(getattr(sys.modules.get("bpy"), "app", None) and sys.modules["bpy"].app.binary_path)
    args = sys.argv[sys.argv.index("--") + 1 :] if inside_blender and "--" in sys.argv else sys.argv[1:]
    status: int = command.main(args)
    return status


if __name__ == "__main__":
    exit_status = run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_status)  # at once, with the real status: Blender's teardown at exit can crash
