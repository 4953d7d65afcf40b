"""FABRIK inverse kinematics for Blender, baked into bone rotations.

Layers, lowest first; a module imports only from its own layer or the ones below it, and only their public
names (``python3 ../shared/tools/layers.py`` checks names and cycles):

1. ``solver`` -- pure numpy: FABRIK, CCD, limits, rotations. Imports nothing of this package outside it.
2. ``settings`` -- pure: the one frozen, validated ``BakeSettings`` value every entry point builds. Imports
   ``solver`` (defaults, methods).
3. ``blender`` -- talks to ``bpy``: reads scenes into arrays, calls the solver, writes keys; the add-on's
   properties, operators, panel and live preview. Imports ``settings`` and ``solver``.
4. ``api`` -- the keyword API for scripts. Imports ``blender`` and ``settings``.

The command line (``scripts/fabrik_cli``) sits on top and uses ``settings`` and ``api``. ``bpy`` is imported
only inside ``register``/``unregister`` here, so ``import fabrik_addon.solver`` (and ``.settings``) works in
any Python.
"""


def register() -> None:
    """Called by Blender when the add-on is enabled: settings, operators, the sidebar panel, live preview."""
    from .blender import addon

    addon.register()


def unregister() -> None:
    """Called by Blender when the add-on is disabled: takes away everything ``register`` added."""
    from .blender import addon

    addon.unregister()
