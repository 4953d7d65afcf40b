"""The Blender layer: everything that talks to ``bpy``."""
