"""The Python API for scripts, with keyword arguments: ``bake``, ``bake_chains`` (an armature's saved chain
list), ``bake_ik_constraints`` and ``clear`` (``chains``); ``targets_from_animation``, ``apply_layer`` and
``reduce_keys``, editing animation (``editing``); ``plant_feet`` and ``detect_contacts`` (``feet``).

>>> import bpy
>>> from fabrik_addon import api
>>> report = api.bake(bpy.data.objects["Armature"], bpy.data.objects["Empty"], tip_bone="hand.L", chain_length=3)
>>> report.max_error, report.unreachable_frames

Works with the ``bpy`` module or inside ``blender -b --python``, with or without the add-on enabled. The
keywords become a ``fabrik_addon.settings.BakeSettings``, the one value every entry point (the panel, the
command line) hands to the bake; ``bake_settings`` takes such a value directly, with several chains.
Every function checks its keywords as a config file's keys are checked: a misspelt one is refused naming the
one meant (``bake() got an unexpected keyword argument 'chain_lenght' (did you mean 'chain_length'?)``).
"""

from __future__ import annotations

from .. import blender
from ..blender import AppliedLayer, BakeReport, FootReport, PlantReport, RigBakeReport, TargetsReport
from ..planting import PlantSettings
from ..reduction import KeysReport
from ..setting_checks import keywords_checked
from ..settings import OUTPUTS, BakeSettings, ChainSettings, FrameRange, SolverSettings
from .chains import armatures_with_chains, bake, bake_chains, bake_ik_constraints, clear
from .editing import apply_layer, reduce_keys, targets_from_animation
from .feet import detect_contacts, plant_feet

bake_settings = keywords_checked(blender.bake, "bake_settings")
clear_settings = keywords_checked(blender.clear, "clear_settings")

__all__ = [
    "OUTPUTS",
    "AppliedLayer",
    "BakeReport",
    "BakeSettings",
    "ChainSettings",
    "FootReport",
    "FrameRange",
    "KeysReport",
    "PlantReport",
    "PlantSettings",
    "RigBakeReport",
    "SolverSettings",
    "TargetsReport",
    "apply_layer",
    "armatures_with_chains",
    "bake",
    "bake_chains",
    "bake_ik_constraints",
    "bake_settings",
    "clear",
    "clear_settings",
    "detect_contacts",
    "plant_feet",
    "reduce_keys",
    "targets_from_animation",
]
