"""Registering the add-on: the settings, operators, the chain list and panels in order, the ``Object.fabrik``
pointer, the live preview's and Step Through Iterations' handlers and the bringing of older settings up to
date; unregistering takes them away in reverse order."""

from __future__ import annotations

import bpy

from . import properties, versioning
from .chain_list import release_chain_lists
from .live import player, preview
from .ui import chain_list, editing, live_operators, operators, panel, planting

CLASSES = (
    *properties.CLASSES,
    *operators.CLASSES,
    *editing.CLASSES,
    *live_operators.CLASSES,
    *chain_list.CLASSES,
    *panel.CLASSES,
    *planting.CLASSES,
)


def register() -> None:
    release_chain_lists()  # a script may have read chain lists before the add-on was enabled
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.fabrik = properties.settings_pointer()  # type: ignore[attr-defined]
    live_operators.register()
    versioning.register()
    preview.register()
    player.register()


def unregister() -> None:
    player.unregister()
    preview.unregister()
    versioning.unregister()
    live_operators.unregister()
    del bpy.types.Object.fabrik  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
