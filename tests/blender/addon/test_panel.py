"""The sidebar panels' draw code runs against every state of the settings without error, into a real layout,
and shows what each state calls for (read back with ``UILayout.introspect``)."""

from __future__ import annotations

import itertools
from typing import Any

import bpy
import pytest
from rigs import make_chain

from fabrik_addon.blender.planting.properties import FABRIK_PG_planting
from fabrik_addon.blender.properties import FABRIK_PG_chain, FABRIK_PG_settings, settings_of
from fabrik_addon.blender.reduction.properties import FABRIK_PG_keys
from fabrik_addon.blender.ui import panel
from fabrik_addon.setting_names import LABELS, PLANT_LABELS

from .scenes import activate, chain_scene, two_chain_scene


def draw_panels(context: bpy.types.Context, extra: tuple[type[bpy.types.Panel], ...] = ()) -> dict[str, list[str]]:
    """Draw every FABRIK panel whose poll passes (``panel``'s, then ``extra``), each into the layout of a fresh
    popover, and return what each drew: labels and values, RNA paths and operators, flattened.

    Background Blender has no window to show a popover in (ending one crashes there), but the layout it
    begins with is Blender's own; it is simply never shown. The popovers are begun in the 3D viewport's
    sidebar region of the file's screen, which the chain list (``template_list``) needs to keep its state in.
    """
    area = next(area for area in context.screen.areas if area.type == "VIEW_3D")
    region = next(region for region in area.regions if region.type == "UI")
    drawn: dict[str, list[str]] = {}
    with context.temp_override(area=area, region=region):
        for cls in (*panel.CLASSES, *extra):
            parent = getattr(cls, "bl_parent_id", None)
            if (parent is not None and parent not in drawn) or not cls.poll(context):
                continue  # Blender draws a subpanel only under its parent
            popover = context.window_manager.popover_begin__internal()
            cls.draw(popover, context)  # a panel's draw uses only self.layout
            drawn[cls.__name__] = list(_flatten(popover.layout.introspect()))
    return drawn


def _flatten(items: list[dict[str, Any]]) -> Any:
    for item in items:
        for key in ("draw_string", "rna", "operator"):
            if item.get(key):
                yield str(item[key]).removesuffix("[0]")  # a property's RNA path names its first item
        yield from _flatten(item.get("items", []))


# A missing tip bone close to real names: its message ends "?)". (UILayout.introspect builds a Python literal
# of the layout and cannot read back a label that ends in a quote, as "... has no bone 'hand.R'" does.)
TIPS = ("", "{side}.002", "{side}.9")
SUMMARIES = ("never baked", "on target", "out of reach")
CHAIN_FIELDS = ("tip_bone", "chain_length", "target", "pole_target", "use_stretch", "use_rotation")


def test_every_state_draws(capfd: pytest.CaptureFixture[str]) -> None:
    armature, _, targets, (first, second) = two_chain_scene()
    second.name = "Second"
    settings = settings_of(armature)
    mesh = bpy.data.objects.new("Mesh", bpy.data.meshes.new("Mesh"))
    bpy.context.scene.collection.objects.link(mesh)
    context = bpy.context
    states = 0

    for active in (None, mesh):
        activate(active)
        assert draw_panels(context) == {"FABRIK_PT_main": ["Make an armature the active object"]}
    activate(armature, "EDIT")
    assert draw_panels(context) == {}

    for mode, selected, has_target, tip, live, summary in itertools.product(
        ("OBJECT", "POSE"), (None, 0, 1), (True, False), TIPS, (False, True), SUMMARIES
    ):
        activate(armature, mode)
        settings.live_preview = False
        settings.active_chain = 0 if selected is None else selected
        chain = first if selected is None else settings.chains[selected]
        side = "right" if chain == second else "left"
        chain.target = targets[side] if has_target else None
        chain.tip_bone = tip = tip.format(side=side)
        second.enabled = selected is not None  # the first state: a chain alone, the other one off
        settings.live_preview = live
        last = chain.last_bake
        last.frames = 0 if summary == "never baked" else 20
        last.unreachable, last.unreachable_frames = (3, "5-7") if summary == "out of reach" else (0, "")
        drawn = draw_panels(context)
        states += 1

        main = drawn["FABRIK_PT_main"]
        assert main.count("FABRIK_PG_chain.enabled") == 2  # the list: a checkbox per chain
        for name in CHAIN_FIELDS:
            assert f"FABRIK_PG_chain.{name}" in main
        assert "FABRIK_PG_settings.live_preview" in main
        for operator in ("chain_add()", "chain_remove()", "chain_move(direction='UP')", "bake()", "clear()"):
            assert f"bpy.ops.fabrik.{operator}" in main, main
        label = chain.name or tip or f"Chain {settings.active_chain + 1}"
        problems = [s for s in main if s.startswith(f"{label}: ")]
        assert bool(problems) == (live and (not has_target or tip != f"{side}.002")), main
        assert all("has no bone" in s or "Pick a t" in s for s in problems)
        assert "FABRIK_PG_settings.method" in drawn["FABRIK_PT_solver"]
        assert ("FABRIK_PT_last_bake" in drawn) == (summary != "never baked")
        if summary != "never baked":
            assert drawn["FABRIK_PT_last_bake"][0] == label
        if summary == "out of reach":
            assert drawn["FABRIK_PT_last_bake"][-2:] == ["Out of reach on 3 frames:", "5-7"]
        elif summary == "on target":
            assert drawn["FABRIK_PT_last_bake"][-1] == "On target on every frame"
        last.frames = 0

    assert states == 2 * 3 * 2 * 3 * 2 * 3
    out, err = capfd.readouterr()
    assert "not found" not in out + err  # Blender prints (does not raise) a property or icon it cannot find
    assert "Traceback" not in out + err


@pytest.mark.parametrize("custom", [False, True])
def test_the_frames_drawn_are_the_scenes_or_the_custom_ones(custom: bool) -> None:
    armature, *_ = chain_scene()
    settings_of(armature).use_custom_range = custom
    frames = draw_panels(bpy.context)["FABRIK_PT_frames"]
    owner = "FABRIK_PG_settings" if custom else "Scene"
    assert {f"{owner}.frame_start", f"{owner}.frame_end", "FABRIK_PG_settings.frame_step"} <= set(frames)


def test_messages_name_settings_by_the_labels_the_panel_shows() -> None:
    """``settings.LABELS`` (how messages name a setting) are the properties' names; the Bone below Target and
    the Weight beside Rotation are named with what they belong to."""
    for keyword, label in LABELS.items():
        groups = (FABRIK_PG_chain, FABRIK_PG_settings, FABRIK_PG_keys)  # Key Error: Object.fabrik.keys
        group = next(group for group in groups if keyword in group.bl_rna.properties)
        name = group.bl_rna.properties[keyword].name
        assert label == name or label in {f"Target {name}", f"Rotation {name}"}, (keyword, label, name)
    for keyword, label in PLANT_LABELS.items():  # Plant Feet's, its properties named as api.plant_feet's keywords
        assert FABRIK_PG_planting.bl_rna.properties[keyword].name == label, keyword


def test_an_armature_without_chains_asks_for_one() -> None:
    armature, *_ = chain_scene()
    settings_of(armature).chains.clear()
    main = draw_panels(bpy.context)["FABRIK_PT_main"]
    assert "Add a chain to bake" in main
    assert not any(s.startswith("FABRIK_PG_chain.") for s in main)


def test_bone_fields_follow_the_kind_of_goal() -> None:
    """A target or pole bone is searched among the bones of an armature goal; for any other object it is
    hidden, unless one is named (then shown, in red, so that it can be cleared); the pole angle and the
    rotation weight show when they play a part."""
    armature, _, target, chain = chain_scene()
    other, _ = make_chain(2, name="Other")
    activate(armature)

    def fields() -> set[str]:
        return {s for s in draw_panels(bpy.context)["FABRIK_PT_main"] if s.startswith("FABRIK_PG_chain.")}

    assert not {"FABRIK_PG_chain.target_bone", "FABRIK_PG_chain.pole_bone", "FABRIK_PG_chain.pole_angle"} & fields()
    assert "FABRIK_PG_chain.rotation_weight" not in fields()
    chain.target, chain.pole_target, chain.use_rotation = other, armature, True
    assert {
        "FABRIK_PG_chain.target_bone",
        "FABRIK_PG_chain.pole_bone",
        "FABRIK_PG_chain.pole_angle",
        "FABRIK_PG_chain.rotation_weight",
    } <= fields()
    chain.target_bone, chain.target = "bone.001", target  # a bone named for an Empty: shown, to be cleared
    assert "FABRIK_PG_chain.target_bone" in fields()
    chain.target_bone = ""
    assert "FABRIK_PG_chain.target_bone" not in fields()
