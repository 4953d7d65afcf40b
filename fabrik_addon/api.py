"""The Python API for scripts, the command line and the add-on's operators.

>>> import bpy
>>> from fabrik_addon import api
>>> report = api.bake(bpy.data.objects["Armature"], bpy.data.objects["Empty"], tip_bone="hand.L", chain_length=3)
>>> report.max_error, report.unreachable_frames

Works with the ``bpy`` module or inside ``blender -b --python``, with or without the add-on enabled.
"""

from .blender.bake import BakeReport, bake

__all__ = ["BakeReport", "bake"]
