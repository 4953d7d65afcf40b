"""Bake FABRIK IK into bone rotation keys in .blend files, without a screen: the ``fabrik_bake`` command run
from this repository, with the ``bpy`` module or inside a Blender binary (reading only the arguments after
``--``). With the extension installed, Blender runs the same command itself: ``blender -c fabrik_bake ARGS``.

    python scripts/tools/fabrik_bake.py shots/ --armature Rig --tip hand.L --chain-length 3 --target Hand.IK
    blender -b --python scripts/tools/fabrik_bake.py -- shots/ --config chains.toml -j 4 --report bake.json

Exit status: 0 when every file baked, 1 when any failed, 2 for a usage error (then nothing is opened, and under a
Python without the ``bpy`` module, which says what to run instead), 3 with --strict when every file baked but a
frame of a chain is off target.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
#: The exit status of a usage error, as the command's own.
USAGE_STATUS = 2


def without_bpy(script: str) -> str:
    """What to run instead, for a Python that has no ``bpy`` module (the system's ``python3``, say)."""
    venv = REPOSITORY / ".venv" / "bin" / "python"
    where = "the venv scripts/test made; any" if venv.exists() else "any"
    python = venv if venv.exists() else "python3.11"
    return "\n".join(
        [
            f"fabrik_bake: error: this Python ({sys.executable}) has no bpy module: the command runs in Blender.",
            "Run it as one of:",
            "  blender -c fabrik_bake ARGS",
            "      with the extension installed (Blender 4.2 or later); --help lists the options",
            f"  blender -b --python {script} -- ARGS",
            "      from this repository, with any Blender 4.2 or later",
            f"  {python} {script} ARGS",
            f"      ({where} Python 3.11 with Blender's module: pip install bpy)",
        ]
    )


if __name__ == "__main__":
    if "bpy" not in sys.modules and importlib.util.find_spec("bpy") is None:
        print(without_bpy(sys.argv[0]), file=sys.stderr)
        sys.exit(USAGE_STATUS)
    if str(REPOSITORY) not in sys.path:
        sys.path.insert(0, str(REPOSITORY))
    from fabrik_addon.cli.command import run_script

    run_script(sys.argv)
