"""Registering the add-on: the settings, operators, the chain list and panels in order, the ``Object.fabrik``
pointer, the live preview's handlers and the bringing of older settings up to date; unregistering takes them
away in reverse order."""

from __future__ import annotations

import bpy

from . import chain_list, operators, panel, playback_ui, preview, properties, solve_now, versioning

CLASSES = (
    *properties.CLASSES,
    *operators.CLASSES,
    *solve_now.CLASSES,
    *playback_ui.CLASSES,
    *chain_list.CLASSES,
    *panel.CLASSES,
)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.fabrik = bpy.props.PointerProperty(  # type: ignore[attr-defined, func-returns-value]
        type=properties.FABRIK_PG_settings, name="FABRIK", override={"LIBRARY_OVERRIDABLE"}
    )
    versioning.register()
    preview.register()
    playback_ui.register()


def unregister() -> None:
    playback_ui.unregister()
    preview.unregister()
    versioning.unregister()
    del bpy.types.Object.fabrik  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
