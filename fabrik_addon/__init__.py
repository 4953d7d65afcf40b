"""FABRIK inverse kinematics for Blender, baked into bone rotations.

Layers, lowest first; a module imports only from its own layer or the ones below it, and from another package
only the names its face (``__init__``) lists in ``__all__`` (``scripts/tools/check_layers.py`` checks that, and that
there are no cycles, no module over 400 lines and no package over 12 modules):

1. ``solver`` -- pure numpy: ``core`` (rotations, limits, geometry), ``points`` (FABRIK and CCD on joints),
   ``bones`` (chains and trees of bones on their rotations). Imports nothing of this package outside it.
2. ``settings`` -- pure: the one frozen, validated ``BakeSettings`` value every entry point builds (its checks of
   plain values in ``setting_checks``). Imports ``solver`` (defaults, methods). Beside it, pure too:
   ``planting`` (Plant Feet's arithmetic), ``layer`` (what a layer blended with Combine keys) and ``targets``
   (poles from animation).
3. ``blender`` -- talks to ``bpy``: ``rig`` (the armature read and written), ``bake`` (checks, frame walks,
   the chain-or-tree unit, keys, report), ``layer`` (the bake as an NLA layer), ``targets`` (Targets from
   Animation), ``planting``, ``live`` (preview, Step Through Iterations), ``ui`` (panel, operators). Imports the
   pure packages.
4. ``api`` -- the keyword API for scripts (a package: ``chains``, ``editing``, ``feet``). Imports ``blender``
   and ``settings``.
5. ``cli`` -- the ``fabrik_bake`` command (``blender -c fabrik_bake``). Imports ``api`` and ``settings``; its
   argument and file handling (``options``, ``jobs``, ``files``, ``report``) imports no ``bpy``.

``bpy`` is imported only inside ``register``/``unregister`` here, so ``import fabrik_addon.solver`` (and
``.settings``, ``.cli.options``) works in any Python.
"""

from __future__ import annotations

from typing import Any

#: The handle of the registered ``fabrik_bake`` command, while the add-on is enabled.
_command: Any = None


def register() -> None:
    """Called by Blender when the add-on is enabled: settings, operators, the sidebar panel, live preview,
    and the ``fabrik_bake`` command (``blender -c fabrik_bake ARGS``)."""
    import bpy

    from .blender import addon
    from .cli import command

    global _command
    addon.register()
    # It returns the handle to unregister with (the API stubs say None).
    _command = bpy.utils.register_cli_command(command.PROGRAM, command.execute)  # type: ignore[func-returns-value]


def unregister() -> None:
    """Called by Blender when the add-on is disabled: takes away everything ``register`` added."""
    import bpy

    from .blender import addon

    global _command
    if _command is not None:
        bpy.utils.unregister_cli_command(_command)
        _command = None
    addon.unregister()
