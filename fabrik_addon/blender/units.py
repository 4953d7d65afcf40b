"""Lengths as the scene shows them: in its unit system and length unit (Scene Properties, Units: Unit System,
Unit Scale, Length), with the unit's name (``length_text``); and the unit a report gives lengths in
(``named_unit``), which the reports keep so that their words (``fabrik_addon.words``) need no scene."""

from __future__ import annotations

import bpy

from ..words import Unit, length_words

#: Metres in one of each length unit Blender offers, and its symbol.
_UNITS = {
    "MICROMETERS": (1e-6, "µm"),
    "MILLIMETERS": (1e-3, "mm"),
    "CENTIMETERS": (1e-2, "cm"),
    "METERS": (1.0, "m"),
    "KILOMETERS": (1e3, "km"),
    "THOU": (2.54e-5, "thou"),
    "INCHES": (0.0254, "in"),
    "FEET": (0.3048, "ft"),
    "MILES": (1609.344, "mi"),
}


def named_unit(scene: bpy.types.Scene) -> Unit:
    """The unit a report gives lengths in (errors, skate, leg lengths), as (symbol, scene units per it): the
    scene's Length unit where it is one chosen below the system's base (centimetres, inches...); where it is
    Adaptive or the base (metres, feet: a new scene's), millimetres or inches; with no unit system, Blender
    units."""
    units = scene.unit_settings
    if units.system == "NONE":
        return "units", 1.0
    chosen = _chosen(units)
    metres, symbol = _UNITS[chosen or ("MILLIMETERS" if units.system == "METRIC" else "INCHES")]
    return symbol, metres / units.scale_length


def length_text(scene: bpy.types.Scene, value: float) -> str:
    """A length (scene units) as the scene shows it, with the unit's name: in its Length unit where one below
    the base is chosen (``named_unit``), else in the unit Blender picks for the value."""
    units = scene.unit_settings
    if units.system != "NONE" and _chosen(units) is not None:
        return length_words(value, named_unit(scene))
    return str(bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3))


def scene_length(value: float) -> str:
    """A length (scene units) as the current scene shows it (``length_text``), for a message raised where no
    scene is at hand; in Blender units where there is no current scene."""
    scene = bpy.context.scene
    return length_words(value) if scene is None else length_text(scene, value)


def _chosen(units: bpy.types.UnitSettings) -> str | None:
    """The scene's Length unit where it is a fixed one other than the system's base (metres, feet), else None."""
    length = units.length_unit
    return length if length in _UNITS and length not in ("METERS", "FEET") else None
