"""The script a ``-j N`` child process runs, with the ``bpy`` module (``python child.py ARGS``) or inside a
Blender binary (``blender -b --python child.py -- ARGS``): it imports the package it lies in, under whatever
name that package has where it is installed (``fabrik_addon``, or the extension's ``bl_ext...`` one), so the
child runs the very code its parent runs."""

from __future__ import annotations

import importlib
import os
import sys

if __name__ == "__main__":
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.dirname(package))
    importlib.import_module(f"{os.path.basename(package)}.cli.command").run_script(sys.argv)
