"""Run by test_readme.py in a fresh Blender (bpy) process whose BLENDER_USER_RESOURCES is a folder of the test,
in the folder the README's commands run in: the README's lines that need Blender itself.

- ``install ARGS``: Blender's own ``blender -c extension ARGS``, through the function its bl_pkg add-on
  registers for that command. It saves the preferences, so a later Blender start finds the extension enabled.
- ``blocks SPEC.json``: run the spec's ``blocks`` of Python in turn, as written (the README's way to install
  the extension with the bpy module, or to enable it in a new process), and say whether the extension is
  enabled after them.
- ``run SPEC.json``: start with the spec's ``start`` block (the README's: load the saved preferences, which
  enables the extension, as a Blender start does), then run the spec's ``commands`` (the arguments of the
  README's ``blender -c fabrik_bake`` lines) through the command the extension registered, and each of its
  ``blocks`` of Python as written, as a script run inside Blender (each opens the file it bakes).

Prints what happened as one JSON line and leaves through os._exit (bpy's teardown may crash).

    python readme_run.py install install-file -r user_default --enable dist/fabrik_addon-0.1.0.zip
    python readme_run.py blocks spec.json
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


def blocks(codes: list[str]) -> dict[str, Any]:
    """Each of ``codes`` run as a script: None, or the traceback it raised."""
    done: list[str | None] = []
    for code in codes:
        try:
            exec(compile(code, "<README block>", "exec"), {"__name__": "__main__"})
            done.append(None)
        except Exception:
            done.append(traceback.format_exc())
    return {"blocks": done, "enabled": EXTENSION in bpy.context.preferences.addons}


def run(spec: dict[str, Any]) -> dict[str, Any]:
    started = blocks([spec["start"]])
    assert started["blocks"] == [None], started["blocks"][0]
    seen: dict[str, Any] = {"enabled": started["enabled"]}
    extension = importlib.import_module(EXTENSION)
    seen["command_registered"] = extension._command is not None
    command = importlib.import_module(f"{EXTENSION}.cli.command")
    seen["commands"] = [command.execute(list(args)) for args in spec["commands"]]
    seen["blocks"] = blocks(spec["blocks"])["blocks"]
    return seen


def main(what: str, *args: str) -> dict[str, Any]:
    if what == "install":
        return install(list(args))
    with open(args[0], encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    return blocks(spec["blocks"]) if what == "blocks" else run(spec)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # for tests.blender.addon.fresh_process
    from tests.blender.addon.fresh_process import report_and_leave

    report_and_leave(lambda: main(*sys.argv[1:]))
