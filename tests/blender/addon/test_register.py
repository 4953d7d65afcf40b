"""Register and unregister in this process: unregistering leaves no class, handler or property behind, the
settings saved in the file survive it, and registering again works."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest

import fabrik_addon
from fabrik_addon.blender import addon
from fabrik_addon.blender.properties import settings_of

from .scenes import chain_scene

#: Blender's handler lists the add-on uses (``blend_import_post`` from Blender 4.3).
HANDLER_LISTS = ("depsgraph_update_post", "frame_change_post", "load_post", "blend_import_post", "undo_pre", "redo_pre")


def ours() -> list[str]:
    """Everything of the add-on's that Blender holds: classes, operators, the Object property, handlers."""
    found = [cls.__name__ for cls in addon.CLASSES if cls.is_registered]
    found += ["bpy.ops.fabrik"] if "fabrik" in dir(bpy.ops) else []
    found += ["Object.fabrik"] if "fabrik" in bpy.types.Object.bl_rna.properties else []
    for name in HANDLER_LISTS:
        found += [
            f"{name}: {h.__name__}" for h in getattr(bpy.app.handlers, name, ()) if h.__module__.startswith("fabrik")
        ]
    return found


def test_the_settings_are_one_overridable_pointer_on_objects() -> None:
    prop = bpy.types.Object.bl_rna.properties["fabrik"]
    assert prop.type == "POINTER"
    assert prop.fixed_type.identifier == "FABRIK_PG_settings"
    assert prop.is_overridable  # editable on a library override of a linked rig


def test_every_setting_is_overridable_and_chains_can_be_added_on_an_override() -> None:
    armature, *_ = chain_scene()
    settings = settings_of(armature)
    groups = {"FABRIK_PG_settings": settings, "FABRIK_PG_chain": settings.chains[0]}
    for name, group in groups.items():
        for prop in group.bl_rna.properties:
            if prop.identifier not in {"rna_type", "name", "active_chain"}:
                assert prop.is_overridable, f"{name}.{prop.identifier}"
    chains = settings.bl_rna.properties["chains"]
    assert chains.type == "COLLECTION"
    assert chains.fixed_type.identifier == "FABRIK_PG_chain"


def test_unregister_leaves_nothing_and_register_again_works() -> None:
    armature, _, target, chain = chain_scene()
    chain.name = "Arm"
    settings_of(armature).live_preview = True
    handlers = 9 if hasattr(bpy.app.handlers, "blend_import_post") else 8
    assert len(ours()) == len(addon.CLASSES) + 1 + 1 + handlers  # bpy.ops.fabrik, Object.fabrik, the handlers

    fabrik_addon.unregister()
    assert ours() == []
    assert not hasattr(armature, "fabrik")
    with pytest.raises(KeyError):
        bpy.ops.fabrik.bake.get_rna_type()

    fabrik_addon.register()
    settings = settings_of(armature)  # the settings were kept in the file meanwhile
    assert [(chain.name, chain.target) for chain in settings.chains] == [("Arm", target)]
    assert settings.live_preview
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    assert settings.chains[0].last_bake.frames == 20


def test_a_library_override_of_a_linked_rig_keeps_its_own_chains_and_settings(tmp_path: Path) -> None:
    """A rig linked from a library and overridden in a shot: its chains and settings can be changed and chains
    added there, and the override keeps them through a save and reload (Blender stores the changes as override
    operations on the linked data)."""
    armature, _, target, chain = chain_scene()
    chain.name = "Arm"
    rig = bpy.data.collections.new("Rig")
    bpy.context.scene.collection.children.link(rig)
    for obj in (armature, target):
        rig.objects.link(obj)
        bpy.context.scene.collection.objects.unlink(obj)
    library = tmp_path / "rig.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_, linked):
        linked.collections = ["Rig"]
    bpy.context.scene.collection.children.link(linked.collections[0])
    linked.collections[0].override_hierarchy_create(bpy.context.scene, bpy.context.view_layer, do_fully_editable=True)

    def overridden() -> bpy.types.Object:
        return next(obj for obj in bpy.data.objects if obj.override_library is not None and obj.type == "ARMATURE")

    settings = settings_of(overridden())
    settings.chains["Arm"].chain_length = 2
    settings.tolerance = 0.01
    added = settings.chains.add()
    added.name, added.tip_bone = "Added", "bone.001"
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "shot.blend"))

    settings = settings_of(overridden())
    assert [(c.name, c.tip_bone, c.chain_length) for c in settings.chains] == [
        ("Arm", "bone.002", 2),
        ("Added", "bone.001", 0),
    ]
    assert settings.tolerance == pytest.approx(0.01)
    assert settings.chains["Arm"].target.name == "Target"
