"""Lengths as the scene shows them: in its unit system and length unit (Scene Properties, Units: Unit System,
Unit Scale, Length), with the unit's name; and a warning for legs too long to be meant in those units (a clip in
centimetres imported at Scale 1 makes legs of about 90 m in a scene of metres)."""

from __future__ import annotations

import bpy

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
#: Legs longer than this (metres, hip to ankle) are taken for a clip imported in the wrong unit.
LONGEST_LEG_M = 10.0


def named_unit(scene: bpy.types.Scene) -> tuple[str, float]:
    """The unit a planting's report gives small lengths in, as (symbol, scene units per it): the scene's Length
    unit where it is one chosen below the system's base (centimetres, inches...); where it is Adaptive or the base
    (metres, feet: a new scene's), millimetres or inches; with no unit system, Blender units."""
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
        symbol, per = named_unit(scene)
        return f"{_digits(value / per)} {symbol}"
    return str(bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3))


def _chosen(units: bpy.types.UnitSettings) -> str | None:
    """The scene's Length unit where it is a fixed one other than the system's base (metres, feet), else None."""
    length = units.length_unit
    return length if length in _UNITS and length not in ("METERS", "FEET") else None


def _digits(value: float) -> str:
    return f"{value:.1f}" if abs(value) >= 1 else f"{value:.2g}"


def leg_warning(scene: bpy.types.Scene, armature: bpy.types.Object, leg_length: float) -> str | None:
    """A warning where legs ``leg_length`` long (scene units, hip to ankle) are implausibly long in the scene's
    units, naming the likely cause and what to do; None where they are not."""
    units = scene.unit_settings
    metres = leg_length * units.scale_length
    if units.system == "NONE" or metres <= LONGEST_LEG_M:
        return None
    return (
        f"the legs of '{armature.name}' are {length_text(scene, leg_length)} long in this scene's units (Unit Scale "
        f"{units.scale_length:g}): is it a clip in a unit smaller than the scene's (centimetres; CMU's 5.6 cm) "
        "imported at Scale 1? Lengths are reported in the scene's units; import it with the Scale that makes its "
        "unit the scene's (0.01 for centimetres in metres), or set the scene's Unit Scale (Scene Properties, "
        "Units) to its unit (Plant Feet's own settings are in leg lengths and work either way)"
    )
