"""FABRIK inverse kinematics for Blender, baked into bone rotations.

The package has two layers: ``solver`` is pure numpy and imports without Blender; the Blender layer talks
to ``bpy``. ``bpy`` is imported only inside ``register``/``unregister``, so ``import fabrik_addon.solver``
works in any Python.
"""


def register() -> None:
    """Called by Blender when the add-on is enabled: settings, operators, the sidebar panel, live preview."""
    from .blender import addon

    addon.register()


def unregister() -> None:
    """Called by Blender when the add-on is disabled: takes away everything ``register`` added."""
    from .blender import addon

    addon.unregister()
