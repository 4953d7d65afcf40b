"""Files saved with one chain's settings on ``Object.fabrik`` (layout 0, before the chain list) open with that
chain first in the list, once, and keep the old values where they were."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from rigs import make_chain

import fabrik_addon
from fabrik_addon.blender.properties import SETTINGS_VERSION, settings_of

from .scenes import activate

#: Saved by the add-on at commit 4ab2888 with Blender 4.2 (``data/make_single_chain_file.py`` made it).
OLD_FILE = Path(__file__).parent / "data" / "single_chain_4ab2888.blend"


def old_chain(armature: bpy.types.Object, target: bpy.types.Object, pole: bpy.types.Object) -> None:
    """Set the armature's settings as the add-on of layout 0 did: the chain on the settings themselves (those
    properties stay registered, hidden, for this)."""
    settings = settings_of(armature)
    assert settings.version == 0  # never set up with the chain list
    settings.target, settings.tip_bone, settings.chain_length = target, "bone.002", 2
    settings.pole_target, settings.pole_angle, settings.use_stretch = pole, 0.5, True
    settings.tolerance, settings.live_preview = 1e-4, False
    settings.last_bake.frames, settings.last_bake.max_error = 20, 2e-4


def chain_values(armature: bpy.types.Object) -> list[tuple[object, ...]]:
    return [
        (
            c.target.name,
            c.tip_bone,
            c.chain_length,
            c.pole_target.name,
            round(c.pole_angle, 6),
            c.use_stretch,
            c.enabled,
        )
        for c in settings_of(armature).chains
    ]


EXPECTED = [("Target", "bone.002", 2, "Pole", 0.5, True, True)]


def old_scene() -> tuple[bpy.types.Object, bpy.types.Object]:
    """An armature "Rig" set up as in layout 0, and an armature "Bare" never set up."""
    armature, _ = make_chain(3)
    bare, _ = make_chain(2, name="Bare")
    target, pole = (bpy.data.objects.new(name, None) for name in ("Target", "Pole"))
    for obj in (target, pole):
        bpy.context.scene.collection.objects.link(obj)
    old_chain(armature, target, pole)
    return armature, bare


def test_a_file_saved_with_one_chain_opens_with_it_as_the_first_chain_once(tmp_path: Path) -> None:
    old_scene()
    path = tmp_path / "old.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))

    armature = bpy.data.objects["Rig"]
    settings = settings_of(armature)
    assert chain_values(armature) == EXPECTED
    assert settings.chains[0].last_bake.frames == 20
    assert settings.chains[0].last_bake.max_error == pytest.approx(2e-4)
    assert settings.tolerance == pytest.approx(1e-4)  # the armature's own settings are where they were
    assert settings.version == SETTINGS_VERSION
    assert settings.tip_bone == "bone.002"  # the old values stay, for an older add-on that opens the file
    bare = settings_of(bpy.data.objects["Bare"])
    assert (len(bare.chains), bare.version) == (0, 0)  # nothing to bring: left as it was

    settings.chains[0].chain_length = 3  # changed with the new layout; saved and opened again: not redone
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    armature = bpy.data.objects["Rig"]
    assert [(c.tip_bone, c.chain_length) for c in settings_of(armature).chains] == [("bone.002", 3)]


def test_registering_the_add_on_with_an_old_file_open_brings_it_up_to_date() -> None:
    armature, _ = old_scene()
    assert len(settings_of(armature).chains) == 0
    fabrik_addon.unregister()
    fabrik_addon.register()
    assert chain_values(armature) == EXPECTED
    fabrik_addon.unregister()
    fabrik_addon.register()
    assert len(settings_of(armature).chains) == 1


def test_adding_a_chain_to_an_old_armature_keeps_the_old_chain_first() -> None:
    armature, _ = old_scene()  # set up by a script in this session: no file was loaded
    activate(armature)
    assert bpy.ops.fabrik.chain_add() == {"FINISHED"}
    settings = settings_of(armature)
    assert [c.tip_bone for c in settings.chains] == ["bone.002", ""]
    assert settings.active_chain == 1


def test_the_file_saved_by_the_add_on_before_the_chain_list_opens_and_bakes() -> None:
    bpy.ops.wm.open_mainfile(filepath=str(OLD_FILE))

    armature = bpy.data.objects["Rig"]
    settings = settings_of(armature)
    assert chain_values(armature) == EXPECTED
    assert settings.chains[0].last_bake.frames == 10  # its bake there
    assert (settings.tolerance, settings.max_iterations) == (pytest.approx(1e-4), 150)
    assert (len(settings_of(bpy.data.objects["Bare"]).chains), settings_of(bpy.data.objects["Bare"]).version) == (0, 0)
    activate(armature)
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    assert settings.chains[0].last_bake.max_error <= 1e-4


@pytest.mark.skipif(not hasattr(bpy.app.handlers, "blend_import_post"), reason="Blender 4.3 and later")
def test_a_rig_appended_from_an_old_file_is_brought_up_to_date() -> None:
    with bpy.data.libraries.load(str(OLD_FILE), link=False) as (_, appended):
        appended.objects = ["Rig"]
    armature = appended.objects[0]
    assert armature.library is None
    assert [(c.tip_bone, c.chain_length, round(c.pole_angle, 6)) for c in settings_of(armature).chains] == [
        ("bone.002", 2, 0.5)
    ]
