"""Registering the add-on: the settings, operators, the chain list and panels in order, the ``Object.fabrik``
pointer and the live preview's handlers; unregistering takes them away in reverse order."""

from __future__ import annotations

import bpy

from . import chain_list, operators, panel, preview, properties

CLASSES = (*properties.CLASSES, *operators.CLASSES, *chain_list.CLASSES, *panel.CLASSES)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.fabrik = bpy.props.PointerProperty(  # type: ignore[attr-defined, func-returns-value]
        type=properties.FABRIK_PG_settings, name="FABRIK", override={"LIBRARY_OVERRIDABLE"}
    )
    preview.register()


def unregister() -> None:
    preview.unregister()
    del bpy.types.Object.fabrik  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
