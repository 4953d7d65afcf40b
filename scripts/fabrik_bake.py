"""Bake FABRIK IK into bone rotation keys in .blend files, without a screen: the ``fabrik_bake`` command run
from this repository, with the ``bpy`` module or inside a Blender binary (reading only the arguments after
``--``). With the extension installed, Blender runs the same command itself: ``blender -c fabrik_bake ARGS``.

    python scripts/fabrik_bake.py shots/ --armature Rig --tip hand.L --chain-length 3 --target Hand.IK
    blender -b --python scripts/fabrik_bake.py -- shots/ --config chains.toml -j 4 --report bake.json

Exit status: 0 when every file baked, 1 when any failed, 2 for a usage error (then nothing is opened), 3 with
--strict when every file baked but a frame of a chain is off target.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# A Blender binary has imported bpy before it runs the script; the bpy module is imported only when needed.
INSIDE_BLENDER = "bpy" in sys.modules
REPOSITORY = Path(__file__).resolve().parents[1]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from fabrik_addon.cli.command import main  # noqa: E402
from fabrik_addon.cli.options import script_args  # noqa: E402


def _open_file() -> Path | None:
    """The file a Blender binary was started with (``blender -b scene.blend --python ...``), if any."""
    if not INSIDE_BLENDER:
        return None
    path: str = sys.modules["bpy"].data.filepath
    return Path(path) if path else None


if __name__ == "__main__":
    exit_status = main(script_args(sys.argv, inside_blender=INSIDE_BLENDER), open_file=_open_file())
    # Leave at once with the real status: Blender's teardown at interpreter exit can crash (bpy 4.2 after
    # Rigify), and inside a Blender binary a script's status would otherwise be lost.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_status)
