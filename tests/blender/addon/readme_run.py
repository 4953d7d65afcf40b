"""Run by test_readme.py in a fresh Blender (bpy) process whose BLENDER_USER_RESOURCES is a folder of the test,
in the folder the README's commands run in: the README's lines that need Blender itself.

- ``install ARGS``: Blender's own ``blender -c extension ARGS``, through the function its bl_pkg add-on
  registers for that command. It saves the preferences, so a later Blender start finds the extension enabled.
- ``run SPEC.json``: start as a Blender binary does, loading the saved preferences (which enables the
  extension; Blender 4.2's bpy module cannot, see ``run``), then run the spec's ``commands`` (the arguments
  of the README's ``blender -c fabrik_bake`` lines) through the command the extension registered, and each of
  its ``blocks`` of Python on a fresh copy of its ``scene``, as a script run inside Blender.

Prints what happened as one JSON line and leaves through os._exit (bpy's teardown may crash).

    python readme_run.py install install-file -r user_default --enable dist/fabrik_addon-0.1.0.zip
    python readme_run.py run spec.json
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from pathlib import Path
from typing import Any

import bpy

EXTENSION = "bl_ext.user_default.fabrik_addon"


def install(args: list[str]) -> dict[str, Any]:
    extensions = importlib.import_module("bl_pkg")  # Blender's extensions add-on, enabled in every Blender
    status = extensions.cli_extension(args)
    return {"status": status, "enabled": EXTENSION in bpy.context.preferences.addons}


def run(spec: dict[str, Any]) -> dict[str, Any]:
    # What a Blender start does: load the saved preferences (the bpy module starts with factory ones). The bpy
    # module of Blender 4.2 crashes loading them; there the extension the install enabled is enabled by hand.
    if bpy.app.version >= (4, 5, 0):
        bpy.ops.wm.read_userpref()
    else:
        bpy.ops.preferences.addon_enable(module=EXTENSION)
    seen: dict[str, Any] = {"enabled": EXTENSION in bpy.context.preferences.addons}
    extension = importlib.import_module(EXTENSION)
    seen["command_registered"] = extension._command is not None
    command = importlib.import_module(f"{EXTENSION}.cli.command")
    seen["commands"] = [command.execute(list(args)) for args in spec["commands"]]
    seen["blocks"] = []
    for code in spec["blocks"]:
        bpy.ops.wm.open_mainfile(filepath=spec["scene"], load_ui=False, use_scripts=False)
        try:
            exec(compile(code, "<README block>", "exec"), {"__name__": "__main__"})
            seen["blocks"].append(None)
        except Exception:
            seen["blocks"].append(traceback.format_exc())
    return seen


def main(what: str, *args: str) -> dict[str, Any]:
    if what == "install":
        return install(list(args))
    with open(args[0], encoding="utf-8") as spec_file:
        return run(json.load(spec_file))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # for tests.blender.addon.fresh_process
    from tests.blender.addon.fresh_process import report_and_leave

    report_and_leave(lambda: main(*sys.argv[1:]))
