"""A warning for legs too long to be meant in the scene's units (a clip in centimetres imported at Scale 1 makes
legs of about 90 m in a scene of metres)."""

from __future__ import annotations

import bpy

from ..units import length_text

#: Legs longer than this (metres, hip to ankle) are taken for a clip imported in the wrong unit.
LONGEST_LEG_M = 10.0


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
