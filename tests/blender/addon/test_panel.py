"""The sidebar panels' draw code runs against every state of the settings without error, into a real layout,
and shows what each state calls for (read back with ``UILayout.introspect``)."""

from __future__ import annotations

import itertools
from typing import Any

import bpy
import pytest

from fabrik_addon.blender import panel

from .scenes import activate, chain_scene


def draw_panels(context: bpy.types.Context) -> dict[str, list[str]]:
    """Draw every FABRIK panel whose poll passes, each into the layout of a fresh popover, and return what
    each drew: labels and values, RNA paths and operators, flattened.

    Background Blender has no window to show a popover in (ending one crashes there), but the layout it
    begins with is Blender's own; it is simply never shown.
    """
    drawn: dict[str, list[str]] = {}
    for cls in panel.CLASSES:
        parent = getattr(cls, "bl_parent_id", None)
        if (parent is not None and parent not in drawn) or not cls.poll(context):
            continue  # Blender draws a subpanel only under its parent
        popover = bpy.context.window_manager.popover_begin__internal()
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
TIPS = ("", "bone.002", "bone.9")
SUMMARIES = ("never baked", "on target", "out of reach")


def test_every_state_draws(capfd: pytest.CaptureFixture[str]) -> None:
    armature, _, target, settings = chain_scene()
    mesh = bpy.data.objects.new("Mesh", bpy.data.meshes.new("Mesh"))
    bpy.context.scene.collection.objects.link(mesh)
    context = bpy.context
    states = 0

    for active in (None, mesh):
        activate(active)
        assert draw_panels(context) == {"FABRIK_PT_main": ["Make an armature the active object"]}
    activate(armature, "EDIT")
    assert draw_panels(context) == {}

    for mode, has_target, tip, custom, live, summary, method in itertools.product(
        ("OBJECT", "POSE"), (True, False), TIPS, (False, True), (False, True), SUMMARIES, ("FABRIK", "CCD")
    ):
        activate(armature, mode)
        settings.live_preview = False
        settings.target = target if has_target else None
        settings.tip_bone, settings.use_custom_range, settings.method = tip, custom, method
        settings.live_preview = live
        last = settings.last_bake
        last.frames = 0 if summary == "never baked" else 20
        last.unreachable, last.unreachable_frames = (3, "5-7") if summary == "out of reach" else (0, "")
        drawn = draw_panels(context)
        states += 1

        main = drawn["FABRIK_PT_main"]
        for name in ("target", "tip_bone", "chain_length", "live_preview"):
            assert f"FABRIK_PG_settings.{name}" in main
        assert "bpy.ops.fabrik.bake()" in main
        assert "bpy.ops.fabrik.clear()" in main
        problem = live and (not has_target or tip != "bone.002")
        assert any("has no bone" in s or "Pick a t" in s for s in main) == problem, main
        assert "FABRIK_PG_settings.method" in drawn["FABRIK_PT_solver"]
        frames = drawn["FABRIK_PT_frames"]
        owner = "FABRIK_PG_settings" if custom else "Scene"
        assert {f"{owner}.frame_start", f"{owner}.frame_end", "FABRIK_PG_settings.frame_step"} <= set(frames)
        assert ("FABRIK_PT_last_bake" in drawn) == (summary != "never baked")
        if summary == "out of reach":
            assert drawn["FABRIK_PT_last_bake"][-2:] == ["Out of reach on 3 frames:", "5-7"]
        elif summary == "on target":
            assert drawn["FABRIK_PT_last_bake"][-1] == "On target on every frame"

    assert states == 2 * 2 * 3 * 2 * 2 * 3 * 2
    out, err = capfd.readouterr()
    assert "not found" not in out + err  # Blender prints (does not raise) a property or icon it cannot find
    assert "Traceback" not in out + err
