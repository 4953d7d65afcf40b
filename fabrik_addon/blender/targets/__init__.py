"""Targets from Animation: Empties keyed where each of an armature's chains has its tip (and bends) in the
animation, made the chains' targets and poles (``make``), so that editing motion through IK starts from the
motion as it is. The arithmetic of poles is ``fabrik_addon.targets``'.

Imports ``bake``, ``rig``, ``properties`` and the pure packages' public names; the API and the operators import
only the names below.
"""

from .make import MADE_FOR, TargetsReport, targets_from_animation

__all__ = ["MADE_FOR", "TargetsReport", "targets_from_animation"]
