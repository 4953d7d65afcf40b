"""Settings saved by earlier versions of the add-on, brought to today's layout: a file whose armatures hold
one chain's settings on ``Object.fabrik`` itself (layout 0) opens with that chain first in their chain list.

This runs when a file is loaded (a persistent ``load_post`` handler), when objects are appended from another
file (``blend_import_post``, from Blender 4.3) and when the add-on is registered with a file open. Each
armature so brought up to date is marked with ``SETTINGS_VERSION``, so it is never done twice; the old values
stay where they were (hidden), so an older version of the add-on still finds them. Linked armatures (and
library overrides of them) cannot be changed here: they are brought up to date in their own file.
"""

from __future__ import annotations

import bpy
from bpy.app.handlers import persistent

from . import compat
from .properties import LEGACY_CHAIN_SETTINGS, SETTINGS_VERSION, FABRIK_PG_settings, settings_of


def migrate(armature: bpy.types.Object) -> bool:
    """Bring the armature's settings to the current layout, if they are older: a chain set up in layout 0
    becomes the first chain of the list (with its last bake), and the settings are marked as current.

    Returns
    -------
    bool
        Whether a chain was made from old settings.
    """
    settings = settings_of(armature)
    if settings.version >= SETTINGS_VERSION:
        return False
    made = _has_old_chain(settings)
    if made:
        chain = settings.chains.add()
        for name in LEGACY_CHAIN_SETTINGS:
            setattr(chain, name, getattr(settings, name))
        for prop in settings.last_bake.bl_rna.properties:
            if not prop.is_readonly and prop.identifier != "name":
                setattr(chain.last_bake, prop.identifier, getattr(settings.last_bake, prop.identifier))
        settings.chains.move(len(settings.chains) - 1, 0)
        settings.active_chain = 0
    settings.version = SETTINGS_VERSION
    return made


def migrate_file() -> list[str]:
    """Bring every local armature of the open file that holds layout 0 settings up to date (leaving those that
    were never set up as they are); the names of those that got a chain so."""
    outdated = [obj for obj in bpy.data.objects if _local_armature(obj) and _has_old_chain(settings_of(obj))]
    return [obj.name for obj in outdated if migrate(obj)]


def _local_armature(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` is an armature of this file (not linked, nor a library override of a linked one)."""
    library: bpy.types.Library | None = obj.library
    override: bpy.types.IDOverrideLibrary | None = obj.override_library
    return obj.type == "ARMATURE" and library is None and override is None


def _has_old_chain(settings: FABRIK_PG_settings) -> bool:
    """Whether layout 0 settings of a chain were ever set (an armature never set up has none to bring)."""
    return any(settings.is_property_set(name) for name in LEGACY_CHAIN_SETTINGS)


@persistent  # type: ignore[untyped-decorator]
def _on_load(*_: object) -> None:
    migrate_file()


def register() -> None:
    for handlers in compat.file_handlers():
        if _on_load not in handlers:
            handlers.append(_on_load)
    if isinstance(bpy.data, bpy.types.BlendData):
        migrate_file()
    # else Blender is starting and the file is not loaded yet (``bpy.data`` is restricted): load_post will run


def unregister() -> None:
    for handlers in compat.file_handlers():
        while _on_load in handlers:
            handlers.remove(_on_load)
