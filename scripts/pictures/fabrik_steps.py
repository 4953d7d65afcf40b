"""A picture of FABRIK at work: one chain at three steps of its solve, side by side, from the solver's history
(``solve(..., history=True)``): where it starts, after the first pass toward the target (the tip on the
target, the root pulled off its place, shown hollow where it belongs), and solved.

Rendered with Cycles on the CPU at a few samples (a few seconds) to ``demo/out/fabrik_steps.png``, or with
``--commit`` to ``demo/fabrik_steps.png`` (the README's picture).

Run with the bpy module: ``.venv/bin/python scripts/pictures/fabrik_steps.py [--commit]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import bmesh  # (after bpy: the bpy module provides it)
import demo_scene as ds
from rigs import link, scene

from fabrik_addon.solver import FloatArray, solve

REPO = Path(__file__).resolve().parents[2]
#: A planar chain of five bones, bent, and a target within its reach (x right, z up).
START = np.array(
    [[0.0, 0.0, 0.0], [0.5, 0.0, 0.9], [1.3, 0.0, 1.2], [1.9, 0.0, 0.7], [2.2, 0.0, 0.0], [2.7, 0.0, -0.4]]
)
TARGET = np.array([-1.2, 0.0, 2.0])
#: Horizontal distance between the three panels.
SPACING = 5.2


def ball(name: str, location: Vector, radius: float, mat: bpy.types.Material) -> None:
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=radius)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(mat)
    link(bpy.data.objects.new(name, mesh)).location = location


def rod(name: str, a: Vector, b: Vector, radius: float, mat: bpy.types.Material) -> None:
    """A cylinder from ``a`` to ``b``."""
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=radius, radius2=radius, depth=(b - a).length)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(mat)
    obj = link(bpy.data.objects.new(name, mesh))
    obj.location = (a + b) / 2
    obj.rotation_euler = (b - a).to_track_quat("Z", "Y").to_euler()


def label(text: str, location: tuple[float, float, float], mat: bpy.types.Material) -> None:
    """A line of text standing in the scene, facing the camera (which looks along +Y)."""
    curve = bpy.data.curves.new(f"label {text}", "FONT")
    assert isinstance(curve, bpy.types.TextCurve)
    curve.body, curve.size, curve.align_x = text, 0.2, "CENTER"
    curve.materials.append(mat)
    obj = link(bpy.data.objects.new(curve.name, curve))
    obj.location = location
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)


def chain(name: str, joints: FloatArray, offset: float, mats: dict[str, bpy.types.Material]) -> None:
    points = [Vector(p) + Vector((offset, 0.0, 0.0)) for p in joints.tolist()]
    for k, (a, b) in enumerate(itertools.pairwise(points)):
        rod(f"{name}.bone{k}", a, b, 0.06, mats["bone"])
    for k, p in enumerate(points):
        ball(f"{name}.joint{k}", p, 0.11, mats["tip" if k == len(points) - 1 else "joint"])


def build(steps: list[tuple[str, FloatArray]]) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    mats = {
        "bone": ds.material("Bone", (0.85, 0.85, 0.82)),
        "joint": ds.material("Joint", (0.95, 0.45, 0.08)),
        "tip": ds.material("Tip", (0.9, 0.15, 0.1)),
        "target": ds.material("Target", (0.15, 0.75, 0.25)),
        "root": ds.material("Root", (0.3, 0.5, 0.95)),
        "text": ds.material("Text", (0.95, 0.95, 0.95)),
    }
    for i, (text, joints) in enumerate(steps):
        offset = (i - 1) * SPACING
        chain(f"step{i}", joints, offset, mats)
        ball(f"target{i}", Vector(TARGET.tolist()) + Vector((offset, 0.0, 0.0)), 0.16, mats["target"])
        ball(f"root{i}", Vector(START[0].tolist()) + Vector((offset, 0.3, 0.0)), 0.17, mats["root"])  # the root's place
        label(text, (offset + 0.6, 0.0, -1.35), mats["text"])
    world = bpy.data.worlds.new("World")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.12, 0.14, 0.2, 1.0)
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = 2.0
    scene().world = world
    sun = link(bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN")))
    sun.rotation_euler = (math.radians(60), 0.0, math.radians(20))
    sun.data.energy = 3.0
    lens = bpy.data.cameras.new("Camera")
    lens.type, lens.ortho_scale = "ORTHO", 3 * SPACING
    camera = link(bpy.data.objects.new("Camera", lens))
    camera.rotation_euler = (math.pi / 2, 0.0, 0.0)  # looking along +Y
    camera.location = (0.6, -12.0, 0.45)
    scene().camera = camera


def render(path: Path) -> None:
    render = scene().render
    render.engine = "CYCLES"  # type: ignore[assignment]  # the stubs list only EEVEE
    scene().cycles.device = "CPU"
    scene().cycles.samples = 16
    scene().cycles.use_denoising = False
    render.resolution_x, render.resolution_y = 1200, 400
    render.image_settings.file_format = "PNG"
    render.filepath = str(path)
    bpy.ops.render.render(write_still=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", action="store_true", help="write demo/fabrik_steps.png (the README's picture)")
    args = parser.parse_args(argv)
    result = solve(START, TARGET, tolerance=1e-3, history=True)
    assert result.history is not None
    steps = [
        ("0: start", result.history[0]),
        ("1: toward the target, root pulled off", result.history[1]),
        (f"{2 * result.iterations}: solved, {result.iterations} iterations", result.joints),
    ]
    build(steps)
    path = REPO / "demo" / ("fabrik_steps.png" if args.commit else "out/fabrik_steps.png")
    path.parent.mkdir(parents=True, exist_ok=True)
    render(path)
    print(f"{path}: {result.iterations} iterations, error {result.error:.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
