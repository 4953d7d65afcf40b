"""The ``fabrik_bake`` command (``blender -c fabrik_bake``, or ``scripts/tools/fabrik_bake.py``), in parts that data
flows through one way.

- ``options``: the arguments and config files, checked into a ``Request`` and its jobs before any .blend file
  is opened. Pure Python, no ``bpy``.
- ``jobs``: what to do in each file, bake a chain or an armature's IK constraints or plant feet, from the
  command line or a config file; the one place where a config's shape (each key's kind) is checked.
  ``config`` reads a config file's jobs. Pure Python.
- ``files``: which .blend files the inputs name and where each one's output goes. Pure Python.
- ``bake_file``: one file at a time inside Blender: open it without running its scripts, run its jobs with
  ``fabrik_addon.api``, save the result atomically. ``parallel`` runs files in child processes instead
  (each running ``child.py``).
- ``report``: the per-file results, the JSON report and the lines printed on stderr. Pure Python.
- ``cancel``: Ctrl+C and SIGTERM stop a bake (and its ``-j`` children), leaving no file half-written. Pure
  Python.
- ``command``: the command itself, from arguments to exit status.
"""
