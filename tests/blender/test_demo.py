"""scripts/demo.py, in its quick variant (a tiny two-frame render) to keep CI short: it bakes, saves, renders."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import bpy
from rigs import scene

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_bakes_both_chains_on_target_saves_and_renders(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py"), "--quick", "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    baked = re.findall(
        r"(Rigify arm|Tentacle) +(\d+) bones baked in .* max tip error (\S+), (\d+) frames out", run.stdout
    )
    assert [(name, int(bones)) for name, bones, _, _ in baked] == [("Rigify arm", 3), ("Tentacle", 48)], run.stdout
    assert all(float(error) <= 1e-3 and out == "0" for _, _, error, out in baked), run.stdout
    native = re.search(r"Blender's IK constraint on the same 48-bone tentacle: max tip error (\S+),", run.stdout)
    assert native is not None
    assert float(native[1]) > 0.1, "the demo's claim: Blender's IK gives up on this chain"

    sheet = bpy.data.images.load(str(tmp_path / "fabrik_demo.png"))
    width, height = sheet.size
    tile_width, tile_height = 480 // 4, round(480 * 3.5 / 6.2) // 4
    assert (width, height) == (2 * tile_width + 4, tile_height)

    # The saved file holds the bake: Blender puts the tentacle's tip on its target.
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "fabrik_demo.blend"), load_ui=False, use_scripts=False)
    tentacle, target = bpy.data.objects["Tentacle"], bpy.data.objects["Tentacle.target"]
    for frame in (7, 50, 93):
        scene().frame_set(frame)
        tip = tentacle.matrix_world @ tentacle.pose.bones[-1].tail
        assert (tip - target.matrix_world.translation).length <= 1e-3
