"""scripts/demo and scripts/pictures/demo.py, in the quick variant (a tiny render of two moments) to keep CI short: it
writes into the ignored demo/out/ and nowhere else, prints only its own lines, and the saved file is the scene
as rendered, holding a bake that Blender's own evaluation puts on the targets, with each FABRIK rig's chains in
its chain list, so that pressing Bake in it bakes the same keys again."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import bpy
import numpy as np
import pytest
from rigs import scene

import fabrik_addon
from tests.blender.oracle import fcurve_keys
from tests.readme_blocks import blocks

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "demo" / "out"
README_PICTURE = REPO / "demo" / "fabrik_demo.png"
#: Every line the demo prints: the heading, a line per rig, the render, what it saved.
OUR_LINES = re.compile(
    r"FABRIK demo with Blender [^:]+: 120 frames, tolerance 1(\.0)? mm"
    r"|  (Rigify arm|Tentacle|Tree) +\d+ bones baked in .*"
    r"|  Blender's IK constraints? on the same .*"
    r"|  rendered \d+ frames with Cycles in \d+ s"
    r"|saved demo/out/fabrik_demo\.blend, demo/out/fabrik_demo\.png \(\d+ s in all\)"
)


def metres(length: str) -> float:
    """A length the demo printed with its unit (``0.96 mm``, ``1.4 m``), in metres (the demo's scene units)."""
    number, unit = length.split()
    return float(number) * {"mm": 1e-3, "cm": 1e-2, "m": 1.0}[unit]


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout


@pytest.fixture
def out_folder(tmp_path: Path) -> Iterator[Path]:
    """demo/out/, empty for the test; what was there before (a full render, say) is put back afterwards."""
    kept = tmp_path / "kept"
    if OUT.exists():
        shutil.move(OUT, kept)
    try:
        yield OUT
    finally:
        shutil.rmtree(OUT, ignore_errors=True)
        if kept.exists():
            shutil.move(kept, OUT)


def test_the_demo_writes_only_into_demo_out_prints_only_its_lines_and_saves_the_bake(out_folder: Path) -> None:
    picture_before, status_before = README_PICTURE.read_bytes(), git_status()
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "pictures" / "demo.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    assert README_PICTURE.read_bytes() == picture_before, "only --update-readme-picture may change it"
    assert git_status() == status_before, "the demo left the working tree changed"
    assert sorted(path.name for path in out_folder.iterdir()) == ["fabrik_demo.blend", "fabrik_demo.png"]

    # Quiet: no line from Blender or Rigify ("Reloading ...", "Saved ...", "Info: ...").
    lines = run.stdout.splitlines()
    assert [line for line in lines if not OUR_LINES.fullmatch(line)] == [], run.stdout
    assert run.stderr == ""
    baked = re.findall(
        r"(Rigify arm|Tentacle|Tree) +(\d+) bones .* max tip error (\S+ \S+), (\d+) frames out", run.stdout
    )
    assert [(name, int(bones)) for name, bones, _, _ in baked] == [("Rigify arm", 2), ("Tentacle", 48), ("Tree", 60)]
    assert all(metres(error) <= 1e-3 and out == "0" for _, _, error, out in baked), run.stdout
    native = re.search(r"Blender's IK constraint on the same 48-bone tentacle: max tip error (\S+ \S+),", run.stdout)
    assert native is not None
    assert metres(native[1]) > 0.1, "the demo's claim: Blender's IK gives up on this chain"

    # Two moments a quarter size (1200 x 480), one above the other with a pixel between them.
    sheet = bpy.data.images.load(str(out_folder / "fabrik_demo.png"))
    assert tuple(sheet.size) == (300, 2 * 120 + 1)

    # The saved file is the scene as rendered, and holds the bakes: Blender puts each FABRIK tip on its target.
    # The tree left to Blender's IK keeps its IK constraints, as the tentacle does.
    bpy.ops.wm.open_mainfile(filepath=str(out_folder / "fabrik_demo.blend"), load_ui=False, use_scripts=False)
    assert str(scene().render.engine) == "CYCLES"
    objects = bpy.data.objects
    assert not objects["BlenderIK"].pose.bones[-1].constraints[0].mute
    assert sum(not c.mute for b in objects["BlenderIKTree"].pose.bones for c in b.constraints if c.type == "IK") == 9
    fabrik_addon.register()
    try:
        listed = chain_lists()
        assert listed == {
            "Human": [("forearm.L", 2, "Hand.target", "Elbow.pole")],
            "Tentacle": [("Tentacle.047", 0, "Tentacle.target", None)],
            "Tree": [(tip, 0, f"Tree.{tip}.target", None) for tip, *_ in listed["Tree"]],
        }
        assert len(listed["Tree"]) == 9
        assert {tip for tip, *_ in listed["Tree"]} == {b.name for b in objects["Tree"].data.bones if not b.children}
        tips = [(objects[rig], tip, objects[target]) for rig, chains in listed.items() for tip, _, target, _ in chains]
        for frame in (7, 50, 93):
            scene().frame_set(frame)
            for armature, bone, target in tips:
                tip = armature.matrix_world @ armature.pose.bones[bone].tail
                assert (tip - target.matrix_world.translation).length <= 1e-3, (armature.name, bone, frame)

        # Pressing Bake bakes what the demo baked: after Clear, with the chains back at rest as the demo found
        # them, the same keys. Pressed on the keys that are there, each frame starts from the pose they give:
        # on target on every frame again (the elbow of the arm, whose start is turned to its pole, may land up to
        # 4 cm from where it was).
        for rig in listed:
            armature = objects[rig]
            demo_keys = fcurve_keys(armature)
            bpy.context.view_layer.objects.active = armature
            assert bpy.ops.fabrik.clear() == {"FINISHED"}
            assert not any(path.startswith("pose.bones") for path, _ in fcurve_keys(armature))
            for chain in armature.fabrik.chains:
                bone = armature.pose.bones[chain.tip_bone]
                for _ in range(chain.chain_length or len(bone.parent_recursive) + 1):
                    bone.rotation_quaternion, bone.rotation_euler = (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
                    bone = bone.parent
            assert bpy.ops.fabrik.bake() == {"FINISHED"}
            assert_same_keys(fcurve_keys(armature), demo_keys, rig)
            assert bpy.ops.fabrik.bake() == {"FINISHED"}
            assert all(chain.last_bake.off_target == 0 for chain in armature.fabrik.chains), rig
    finally:
        fabrik_addon.unregister()


def chain_lists() -> dict[str, list[tuple[str, int, str, str | None]]]:
    """Each armature's chain list (``Object.fabrik.chains``) that has chains: tip bone, chain length, target
    and pole target names."""
    return {
        obj.name: [
            (c.tip_bone, c.chain_length, c.target.name, c.pole_target.name if c.pole_target else None)
            for c in obj.fabrik.chains
        ]
        for obj in bpy.data.objects
        if obj.type == "ARMATURE" and len(obj.fabrik.chains)
    }


def assert_same_keys(
    keys: dict[tuple[str, int], list[tuple[float, float]]],
    expected: dict[tuple[str, int], list[tuple[float, float]]],
    rig: str,
) -> None:
    assert keys.keys() == expected.keys(), rig
    for channel, points in expected.items():
        assert np.allclose(keys[channel], points, rtol=0.0, atol=1e-6), (rig, channel)


def test_quick_never_updates_the_readme_picture() -> None:
    picture_before = README_PICTURE.read_bytes()
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "pictures" / "demo.py"), "--quick", "--update-readme-picture"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2
    assert "--quick renders a tiny, noisy picture" in run.stderr
    assert README_PICTURE.read_bytes() == picture_before


def test_scripts_demo_help_prints_its_usage_only() -> None:
    run = subprocess.run([REPO / "scripts" / "demo", "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("The main job")
    for option in ("--blender", "--output-dir", "--quick", "--update-readme-picture"):
        assert any(line.lstrip().startswith(f"scripts/demo {option}") for line in lines), option
    shell = [line for line in lines if re.match(r"\s*(set |source |while |case |usage\(|fabrik_|exec |#)", line)]
    assert shell == [], run.stdout


def test_the_readme_shows_the_lines_the_demo_prints() -> None:
    shown = [block for block in blocks() if block.language == "text" and "FABRIK demo with Blender" in block.text]
    assert len(shown) == 1, "the README shows one run of the demo"
    lines = shown[0].text.splitlines()
    assert [line for line in lines if not OUR_LINES.fullmatch(line)] == [], shown[0]
    # every kind of line the demo prints, as a full run prints them (the quick one renders fewer moments)
    assert [line.split()[0] for line in lines] == [
        "FABRIK",
        "Rigify",
        "Tentacle",
        "Tree",
        "Blender's",
        "Blender's",
        "rendered",
        "saved",
    ]
