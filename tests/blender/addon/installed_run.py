"""Run by test_package.py in a fresh Blender (bpy) process whose BLENDER_USER_RESOURCES is an empty folder:
install the extension zip with Blender's own installer, bake through its operator, disable it, enable it
again. Prints what it saw as one JSON line and leaves through os._exit (bpy's teardown may crash).

    PYTHONPATH=scripts python -m tests.blender.addon.installed_run PATH/TO/fabrik_addon-X.Y.Z.zip
"""

from __future__ import annotations

import sys
from typing import Any

import bpy
import numpy as np
from rigs import keyed_empty, loop_path, make_chain

from tests.blender.addon.fresh_process import report_and_leave

MODULE = "bl_ext.user_default.fabrik_addon"
#: Blender's handler lists the add-on uses (``blend_import_post`` from Blender 4.3).
HANDLER_LISTS = (
    "depsgraph_update_post",
    "frame_change_post",
    "load_post",
    "blend_import_post",
    "load_pre",
    "frame_change_pre",
    "save_pre",
    "save_post",
    "undo_pre",
    "redo_pre",
)


def leftovers() -> list[str]:
    """Whatever of the add-on Blender still holds: classes, operators, the Object and WindowManager properties,
    handlers."""
    classes = [getattr(bpy.types, name) for name in dir(bpy.types) if name.startswith("FABRIK_")]
    classes += [c for c in bpy.types.PropertyGroup.__subclasses__() if c.__name__.startswith("FABRIK_")]
    found = [c.__name__ for c in classes if c.is_registered]
    found += ["bpy.ops.fabrik"] if "fabrik" in dir(bpy.ops) else []
    found += ["Object.fabrik"] if "fabrik" in bpy.types.Object.bl_rna.properties else []
    found += ["WindowManager.fabrik_playback"] if "fabrik_playback" in bpy.types.WindowManager.bl_rna.properties else []
    for name in HANDLER_LISTS:
        found += [f"{name}: {h.__module__}" for h in getattr(bpy.app.handlers, name, ()) if "fabrik" in h.__module__]
    return found


def tip_error(armature: bpy.types.Object, tip: str, target: bpy.types.Object) -> float:
    return float(np.linalg.norm(np.array(armature.matrix_world @ armature.pose.bones[tip].tail - target.location)))


def run(package: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    install: Any = bpy.ops.extensions.package_install_files  # (the stubs miss its return value)
    seen["install"] = sorted(install(filepath=package, repo="user_default", enable_on_install=True))
    seen["enabled"] = MODULE in bpy.context.preferences.addons
    seen["installed_under"] = bpy.utils.user_resource("EXTENSIONS")

    armature, names = make_chain(3)
    target = keyed_empty("Target", loop_path(range(1, 21), (0, 0, 1.05), (1.5, 1.2, 0.75)))
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 20
    settings = armature.fabrik
    seen["chain_add"] = sorted(bpy.ops.fabrik.chain_add())
    chain = settings.chains[0]
    chain.target, chain.tip_bone = target, names[-1]
    seen["bake"] = sorted(bpy.ops.fabrik.bake())
    seen["baked_frames"] = chain.last_bake.frames
    seen["max_error"] = chain.last_bake.max_error
    settings.live_preview = True
    seen["held_while_enabled"] = leftovers()
    seen["import_handlers"] = hasattr(bpy.app.handlers, "blend_import_post")

    bpy.ops.preferences.addon_disable(module=MODULE)
    seen["disabled"] = MODULE not in bpy.context.preferences.addons
    seen["left_after_disable"] = leftovers()

    bpy.ops.preferences.addon_enable(module=MODULE)
    seen["enabled_again"] = MODULE in bpy.context.preferences.addons
    settings = armature.fabrik
    seen["settings_kept"] = settings.chains[0].target == target and settings.live_preview
    seen["clear_again"] = sorted(bpy.ops.fabrik.clear())
    target.animation_data_clear()
    target.location = (1.0, 0.5, 1.5)
    bpy.context.view_layer.update()
    seen["preview_error_again"] = tip_error(armature, names[-1], target)
    settings.live_preview = False
    seen["bake_again"] = sorted(bpy.ops.fabrik.bake())
    return seen


if __name__ == "__main__":
    report_and_leave(lambda: run(sys.argv[1]))
