"""Planting feet on an armature's animation: the feet found where none are named (``find``), the frames planted
(``frames``), the legs checked and their bake planned (``feet``), contacts and the hips' drop as keys (``marks``),
Plant Feet and Detect Contacts (``run``) and what they report (``report``; ``units`` warns of settings and legs
that look given in another unit), and the settings an armature stores for them (``properties``).

Imports ``bake``, ``rig``, ``compat``, and the planting core's and settings' public names; the operators and
the API import only the names below.
"""

from .marks import MARK, mark_path, marks_fcurve, read_marks
from .properties import CLASSES as PLANTING_CLASSES
from .properties import FABRIK_PG_foot, FABRIK_PG_planting, plant_settings
from .report import FootReport, PlantReport
from .run import detect_contacts, plant_feet

__all__ = [
    "MARK",
    "PLANTING_CLASSES",
    "FABRIK_PG_foot",
    "FABRIK_PG_planting",
    "FootReport",
    "PlantReport",
    "detect_contacts",
    "mark_path",
    "marks_fcurve",
    "plant_feet",
    "plant_settings",
    "read_marks",
]
