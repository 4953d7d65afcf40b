"""The command line behind ``scripts/fabrik_bake.py``, in four parts that data flows through one way.

- ``options``: the arguments (only those after ``--`` inside a Blender binary) and config files, checked into
  a ``Request`` and its ``Job`` list before any .blend file is opened. Pure Python, no ``bpy``.
- ``files``: which .blend files the inputs name and where each one's output goes. Pure Python.
- ``bake_file``: one file at a time inside Blender: open it without running its scripts, bake its jobs with
  ``fabrik_addon.api.bake``, save the result atomically. ``parallel`` runs files in child processes instead.
- ``report``: the per-file results, the JSON report and the lines printed on stderr. Pure Python.
"""
