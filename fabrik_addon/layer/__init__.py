"""The bake as a layer over the animation, in numpy: what a layer blended with Blender's NLA Combine keys so
that it plays the baked pose, and what Blender plays from it (``combine``). The Blender side (the NLA track,
its Action, keys, Apply Layer) is ``fabrik_addon.blender.layer``.

Imports nothing of Blender.
"""

from .combine import BASE, KINDS, base_values, channel_kind, combined, layer_values, played_as_blender

__all__ = ["BASE", "KINDS", "base_values", "channel_kind", "combined", "layer_values", "played_as_blender"]
