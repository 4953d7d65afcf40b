"""Register and unregister in this process: unregistering leaves no class, handler or property behind, the
settings saved in the file survive it, and registering again works."""

from __future__ import annotations

import bpy
import pytest

import fabrik_addon
from fabrik_addon.blender import addon
from fabrik_addon.blender.properties import settings_of

from .scenes import chain_scene

HANDLER_LISTS = ("depsgraph_update_post", "frame_change_post", "load_post")


def ours() -> list[str]:
    """Everything of the add-on's that Blender holds: classes, operators, the Object property, handlers."""
    found = [cls.__name__ for cls in addon.CLASSES if cls.is_registered]
    found += ["bpy.ops.fabrik"] if "fabrik" in dir(bpy.ops) else []
    found += ["Object.fabrik"] if "fabrik" in bpy.types.Object.bl_rna.properties else []
    for name in HANDLER_LISTS:
        found += [f"{name}: {h.__name__}" for h in getattr(bpy.app.handlers, name) if h.__module__.startswith("fabrik")]
    return found


def test_the_settings_are_one_overridable_pointer_on_objects() -> None:
    prop = bpy.types.Object.bl_rna.properties["fabrik"]
    assert prop.type == "POINTER"
    assert prop.fixed_type.identifier == "FABRIK_PG_settings"
    assert prop.is_overridable  # editable on a library override of a linked rig


def test_unregister_leaves_nothing_and_register_again_works() -> None:
    armature, _, target, settings = chain_scene()
    settings.live_preview = True
    assert len(ours()) == len(addon.CLASSES) + 1 + 1 + 3

    fabrik_addon.unregister()
    assert ours() == []
    assert not hasattr(armature, "fabrik")
    with pytest.raises(KeyError):
        bpy.ops.fabrik.bake.get_rna_type()

    fabrik_addon.register()
    settings = settings_of(armature)  # the settings were kept in the file meanwhile
    assert settings.target == target
    assert settings.live_preview
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    assert settings.last_bake.frames == 20
