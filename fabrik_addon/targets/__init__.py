"""Targets made from animation, in numpy: the pole angle and the pole's place on each frame that make a bake
toward a chain's animated tip bend it as animated (``poles``). The Blender side (reading the animation,
making and keying the Empties, setting the chains) is ``fabrik_addon.blender.targets``.

Imports nothing of Blender; positions are world positions in scene units, angles in radians.
"""

from .poles import pole_angle, pole_places

__all__ = ["pole_angle", "pole_places"]
