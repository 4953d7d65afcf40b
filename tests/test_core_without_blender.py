"""The pure core (the solver, the settings value, planting, layers and key reduction, and the command line's
modules but the one that bakes a file) imports and works in a Python where bpy and mathutils cannot be
imported."""

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
    import fabrik_addon.reduction
    import fabrik_addon.layer
    from fabrik_addon.settings import BakeSettings  # the command line checks its jobs before it imports bpy

    assert BakeSettings.from_keywords("Rig", "Target", tip_bone="hand.L").solver.tolerance > 0
    from fabrik_addon.solver import solve, solve_frames

    result = solve([[0, 0, 0], [0, 0, 1], [0, 0, 2]], [1, 0, 1])
    assert result.reached, result
    frames = solve_frames([[0, 0, 0], [0, 0, 1], [0, 0, 2]], [[1, 0, 1], [0, 1, 1]])
    assert frames.reached.all(), frames
    # Fewer keys: a pose's keys thinned within an error, in numpy alone.
    import numpy as np
    from fabrik_addon.reduction import Channels, Skeleton, bone_points, thin_keys

    turn = np.stack([np.cos(np.linspace(0, 1, 50)), np.sin(np.linspace(0, 1, 50)), np.zeros(50), np.zeros(50)], 1)
    node = [Channels("rotation", turn, "QUATERNION", turn, (0, 1, 2, 3))]
    kept = thin_keys(np.arange(50.0), Skeleton((-1,), (np.eye(4),), (bone_points(1.0),)), [node], 1e-3)
    assert 2 <= len(kept.keys[0]) < 50 and kept.error.max() <= 1e-3, kept
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
