"""The pure core (the solver and the settings value, and the command line's modules but the one that bakes a
file) imports and works in a Python where bpy and mathutils cannot be imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BLOCKED_RUN = textwrap.dedent(
    """
    import importlib.abc, sys

    class NoBlender(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"bpy", "mathutils", "bmesh", "bpy_extras"}:
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, NoBlender())
    try:
        import bpy
    except ImportError:
        pass
    else:
        raise SystemExit("the block did not work: bpy imported")

    import fabrik_addon
    import fabrik_addon.solver
    import fabrik_addon.planting
    from fabrik_addon.settings import BakeSettings  # the command line checks its jobs before it imports bpy

    assert BakeSettings.from_keywords("Rig", "Target", tip_bone="hand.L").solver.tolerance > 0
    from fabrik_addon.solver import solve, solve_frames

    result = solve([[0, 0, 0], [0, 0, 1], [0, 0, 2]], [1, 0, 1])
    assert result.reached, result
    frames = solve_frames([[0, 0, 0], [0, 0, 1], [0, 0, 2]], [[1, 0, 1], [0, 1, 1]])
    assert frames.reached.all(), frames
    # The command line checks its arguments, plans its files and reports without Blender.
    import fabrik_addon.cli.cancel, fabrik_addon.cli.command, fabrik_addon.cli.files, fabrik_addon.cli.jobs
    import fabrik_addon.cli.config, fabrik_addon.cli.options, fabrik_addon.cli.parallel, fabrik_addon.cli.report
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"bpy", "mathutils"})
    assert not loaded, loaded
    print("core ok without blender")
    """
)


def test_solver_imports_and_runs_without_bpy_or_mathutils() -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKED_RUN], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "core ok without blender" in done.stdout
