"""Who is told when an armature's FABRIK setting changes: settings are not scene data, so changing one does not
update the scene; the live preview subscribes here (when it registers) and each setting it uses calls the
listeners from its update callback (``watched``)."""

from __future__ import annotations

from collections.abc import Callable

import bpy

#: Called with the armature, the property group whose setting changed (the armature's settings or one of
#: its chains) and the setting's name (see ``subscribe``).
Listener = Callable[[bpy.types.Object, bpy.types.PropertyGroup, str], None]
_listeners: list[Listener] = []


def subscribe(listener: Listener) -> None:
    """Call ``listener(armature, group, name)`` whenever a setting the live preview uses changes."""
    if listener not in _listeners:
        _listeners.append(listener)


def unsubscribe(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def notify(group: bpy.types.PropertyGroup, name: str) -> None:
    """Tell the listeners that ``name`` of ``group`` changed (also called for changes to the chain list)."""
    armature = group.id_data
    assert isinstance(armature, bpy.types.Object)
    for listener in tuple(_listeners):
        listener(armature, group, name)


def watched(name: str) -> Callable[[bpy.types.PropertyGroup, bpy.types.Context], None]:
    """The update callback of the setting ``name``: settings are not scene data, so changing one does not
    update the scene; the listeners are told instead."""

    def changed(group: bpy.types.PropertyGroup, context: bpy.types.Context) -> None:
        notify(group, name)

    return changed
