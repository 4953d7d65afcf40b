"""Bake FABRIK IK into bone rotation keys in .blend files, without a screen: the ``fabrik_bake`` command run
from this repository, with the ``bpy`` module or inside a Blender binary (reading only the arguments after
``--``). With the extension installed, Blender runs the same command itself: ``blender -c fabrik_bake ARGS``.

    python scripts/fabrik_bake.py shots/ --armature Rig --tip hand.L --chain-length 3 --target Hand.IK
    blender -b --python scripts/fabrik_bake.py -- shots/ --config chains.toml -j 4 --report bake.json

Exit status: 0 when every file baked, 1 when any failed, 2 for a usage error (then nothing is opened), 3 with
--strict when every file baked but a frame of a chain is off target.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from fabrik_addon.cli.command import run_script  # noqa: E402

if __name__ == "__main__":
    run_script(sys.argv)
