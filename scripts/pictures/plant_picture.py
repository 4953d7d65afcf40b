"""The README's picture of Plant Feet: the ball of each foot during each contact of the committed walk, seen from
above, before planting (orange: where the capture slides it) and after (green: where Blender's evaluation of
the planted keys puts it), one tile per contact, magnified, with a 1 cm scale bar; rendered by Blender
(Workbench, flat colours) into ``demo/plant_feet.png``.

    .venv/bin/python scripts/pictures/plant_picture.py [--output PATH] [--quick]

The clip is imported in metres (``mocap.CMU_UNIT``); Plant Feet lowers the hips (``Hips``). Prints each contact's
slide before and after.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import mocap
import rigs
from numpy.typing import NDArray

from fabrik_addon import api

OUTPUT = Path(__file__).resolve().parents[2] / "demo" / "plant_feet.png"
#: How much larger than life the tiles show the balls' paths, and how far apart their centres are (metres).
MAGNIFY = 20.0
TILE = 1.3
#: Tiles in a row, and the height of a row (metres).
ACROSS = 4
ROW = 1.55
ORANGE, GREEN, INK = (0.93, 0.45, 0.1), (0.1, 0.62, 0.25), (0.12, 0.12, 0.14)
FloatArray = NDArray[np.float64]


def balls(armature: bpy.types.Object, feet: list[str], frames: range) -> FloatArray:
    """Each foot's ball (its tail) on each frame, (F, L, 3), as Blender evaluates the file now."""
    return mocap.animated_joints(armature, [(foot, "tail") for foot in feet], frames)


def colour(name: str, rgb: tuple[float, float, float]) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    mat.diffuse_color = (*rgb, 1.0)
    return mat


def path(name: str, points: FloatArray, width: float, mat: bpy.types.Material, z: float = 0.0) -> None:
    """A flat line through ``points`` (P, 2) on the ground (or ``z`` above it, drawn over what is lower),
    ``width`` wide."""
    curve = bpy.data.curves.new(name, "CURVE")
    assert isinstance(curve, bpy.types.Curve)
    curve.dimensions, curve.bevel_depth = "3D", width / 2
    spline = curve.splines.new("POLY")
    spline.points.add(len(points) - 1)
    spline.points.foreach_set("co", np.column_stack([points, np.full(len(points), z), np.ones(len(points))]).ravel())
    curve.materials.append(mat)
    rigs.link(bpy.data.objects.new(name, curve))


def dots(name: str, points: FloatArray, radius: float, mat: bpy.types.Material, z: float = 0.001) -> None:
    """A disc of ``radius`` at each of ``points`` (P, 2), ``z`` above the ground."""
    for k, (x, y) in enumerate(points):
        bpy.ops.mesh.primitive_circle_add(vertices=16, radius=radius, fill_type="NGON", location=(x, y, z))
        disc = bpy.context.object
        assert disc is not None
        disc.name = f"{name} {k}"
        disc.data.materials.append(mat)  # type: ignore[union-attr]


def label(body: str, where: tuple[float, float], size: float, mat: bpy.types.Material, align: str = "CENTER") -> None:
    curve = bpy.data.curves.new(f"label {body}", "FONT")
    assert isinstance(curve, bpy.types.TextCurve)
    curve.body, curve.size, curve.align_x, curve.align_y = body, size, align, "CENTER"  # type: ignore[assignment]
    curve.materials.append(mat)
    text = rigs.link(bpy.data.objects.new(curve.name, curve))
    text.location = (where[0], where[1], 0.002)


def walk_picture(argv: list[str], about: str | None, output: Path) -> tuple[argparse.Namespace, bpy.types.Object]:
    """A picture script's arguments (``--output``, by default ``output``; ``--quick``) and the committed walk
    imported in metres into a fresh file, its armature."""
    parser = argparse.ArgumentParser(description=about.splitlines()[0] if about else None)
    parser.add_argument("--output", type=Path, default=output)
    parser.add_argument("--quick", action="store_true", help="a small render (for tests)")
    args = parser.parse_args(argv)
    rigs.new_file(range(1, 2))
    return args, mocap.import_clip("walk", scale=mocap.CMU_UNIT)


def main(argv: list[str]) -> None:
    args, armature = walk_picture(argv, __doc__, OUTPUT)
    feet = [leg.foot for leg in mocap.legs(armature).values()]
    frames = mocap.scene_frames()
    before = balls(armature, feet, frames)
    report = api.plant_feet(armature, feet, hips_bone="Hips")
    after = balls(armature, feet, frames)
    contacts = [(k, first, last) for k, foot in enumerate(report.feet) for first, last in foot.contacts]
    contacts.sort(key=lambda contact: contact[1])
    # The picture: a row of tiles, one per contact in time order, each centred on its pin.
    for mat in list(bpy.data.materials):
        bpy.data.materials.remove(mat)
    orange, green, ink = colour("before", ORANGE), colour("after", GREEN), colour("ink", INK)
    for i, (k, first, last) in enumerate(contacts):
        span = slice(first - frames.start, last - frames.start + 1)
        centre = after[span, k, :2].mean(axis=0)
        shift = np.array([(i % ACROSS) * TILE, -(i // ACROSS) * ROW])
        slid, held = (before[span, k, :2] - centre) * MAGNIFY + shift, (after[span, k, :2] - centre) * MAGNIFY + shift
        path(f"before {i}", slid, 0.012, orange)
        dots(f"before {i}", slid[[0, -1]], 0.018, orange)
        dots(f"after {i}", held[:1], 0.03, green)
        side = feet[k].removesuffix("Ankle")
        label(f"{side} foot, frames {first}-{last}", (shift[0], shift[1] + 0.55), 0.09, ink)
        slid_mm = report.feet[k].skate_before[report.feet[k].contacts.index((first, last))] * 1000
        held_mm = report.feet[k].skate_after[report.feet[k].contacts.index((first, last))] * 1000
        label(f"slid {slid_mm:.0f} mm, now {held_mm:.1f} mm", (shift[0], shift[1] - 0.55), 0.09, ink)
        print(f"{feet[k]} frames {first}-{last}: slid {slid_mm:.1f} mm before, {held_mm:.2f} mm after")
    rows = (len(contacts) + ACROSS - 1) // ACROSS
    bottom = -(rows - 1) * ROW - 0.8
    bar = np.array([[-0.5 * MAGNIFY * 0.01, bottom], [0.5 * MAGNIFY * 0.01, bottom]])
    path("scale bar", bar, 0.012, ink)
    label("1 cm", (0.0, bottom - 0.1), 0.07, ink)
    width = TILE * ACROSS
    label(
        "The ball of each foot from above in each contact of a captured walk (CMU 131_01), 20 times life size",
        (width / 2 - TILE / 2, 0.85),
        0.09,
        ink,
    )
    label("orange: as captured;  green: after Plant Feet", (width / 2 - TILE / 2, 0.72), 0.09, ink)
    armature.hide_render = True
    render_from_above(args.output, (-TILE / 2, width - TILE / 2), (bottom - 0.2, 0.95), quick=args.quick)


def render_from_above(output: Path, across: tuple[float, float], up: tuple[float, float], *, quick: bool) -> None:
    """Render what the scene shows from above, the rectangle ``across`` (x from, to) by ``up`` (y from, to) in
    world units, with Blender's Workbench in flat colours on white, into the PNG ``output`` (1600 pixels wide,
    400 when ``quick``)."""
    scene = rigs.scene()
    width = across[1] - across[0]
    camera_data = bpy.data.cameras.new("Top")
    camera_data.type, camera_data.ortho_scale = "ORTHO", width
    camera = rigs.link(bpy.data.objects.new("Top", camera_data))
    camera.location = ((across[0] + across[1]) / 2, (up[0] + up[1]) / 2, 5.0)
    camera.rotation_euler = (0.0, 0.0, 0.0)
    scene.camera = camera
    scene.render.engine = "BLENDER_WORKBENCH"  # type: ignore[assignment]
    display, views = scene.display, scene.view_settings
    assert display is not None
    assert display.shading is not None
    assert views is not None
    display.shading.light, display.shading.color_type = "FLAT", "MATERIAL"
    world = bpy.data.worlds.new("White")
    world.color = (1.0, 1.0, 1.0)
    scene.world = world
    views.view_transform = "Standard"  # type: ignore[assignment]  # the stubs know only the first item
    scene.render.resolution_x = 1600 if not quick else 400
    scene.render.resolution_y = int(scene.render.resolution_x * (up[1] - up[0]) / width)
    scene.render.resolution_percentage = 100
    scene.render.filepath = str(output)
    scene.render.image_settings.file_format = "PNG"
    output.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.render.render(write_still=True)
    print(f"rendered {output} ({scene.render.resolution_x} x {scene.render.resolution_y})")


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
