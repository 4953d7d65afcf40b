"""The README's main job: build a scene, bake it with FABRIK, save it, render a contact sheet, print a summary.

A 48-bone tentacle follows a moving target with FABRIK; beside it, the same tentacle with Blender's own IK
constraint chases the same path (and gives up: from about 28 bones it misses by a good part of its length);
and a Rigify metarig reaches for a third target with its left arm. Both FABRIK chains are baked into
rotation keys; the file is saved as ``demo/fabrik_demo.blend`` and a few frames rendered with Cycles on the
CPU are laid out in one picture, ``demo/fabrik_demo.png``.

Run ``scripts/demo`` (it sets up the environment first), or with the bpy module:
``.venv/bin/python scripts/demo.py [--quick] [--output-dir DIR]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import bpy
import numpy as np
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import demo_scene as ds
import rigs

from fabrik_addon import api

FRAMES = range(1, 121)
#: The targets' closed paths go round once in x and twice in y and z over the frames.
PATH_FREQUENCIES = (1, 2, 2)
TENTACLE_BONES = 48
TENTACLE_LENGTH = 2.4
TOLERANCE = 1e-3
SHEET_FRAMES = (10, 28, 46, 64, 82, 100)
SHEET_COLUMNS = 3
HUMAN_SCALE = 1.3


def build() -> tuple[list[ds.Chain], ds.Chain]:
    """The scene; returns the chains FABRIK bakes and the tentacle left to Blender's IK constraint."""
    rigs.new_file(FRAMES)
    red = ds.material("Target", (0.85, 0.08, 0.05))
    ink = ds.material("Label", (0.02, 0.02, 0.03))

    human = ds.rigify_human(0.0)
    human.scale = (HUMAN_SCALE,) * 3  # as tall as the tentacles
    bpy.context.view_layer.update()  # for matrix_world
    ds.skin(human, lambda bone: min(0.05, max(0.014, 0.11 * bone.length)), ds.material("Human", (0.25, 0.45, 0.85)))
    shoulder = human.matrix_world @ human.data.bones["upper_arm.L"].head_local
    center = shoulder + Vector((0.22, -0.25, -0.12)) * HUMAN_SCALE
    radius = (0.14 * HUMAN_SCALE, 0.12 * HUMAN_SCALE, 0.16 * HUMAN_SCALE)
    arm_path = rigs.loop_path(FRAMES, (center.x, center.y, center.z), radius, PATH_FREQUENCIES)
    arm = ds.Chain("Rigify arm", human, "hand.L", 3, ds.moving_target("Hand.target", arm_path, red))

    def taper(bone: bpy.types.Bone) -> float:
        return 0.075 * (1.0 - 0.7 * bone.head_local.z / TENTACLE_LENGTH)

    chains = [arm]
    for name, x, color in (("Tentacle", 1.7, (0.95, 0.45, 0.08)), ("BlenderIK", 3.8, (0.42, 0.44, 0.48))):
        rig = ds.tentacle(name, x, TENTACLE_BONES, TENTACLE_LENGTH)
        ds.skin(rig, taper, ds.material(name, color))
        path = rigs.loop_path(FRAMES, (x + 0.2, 0.0, 1.4), (0.8, 0.6, 0.5), PATH_FREQUENCIES)
        chains.append(ds.Chain(name, rig, rig.data.bones[-1].name, 0, ds.moving_target(f"{name}.target", path, red)))
    native = chains.pop()
    ik = native.armature.pose.bones[native.tip_bone].constraints.new("IK")
    ik.target, ik.chain_count, ik.use_tail = native.target, TENTACLE_BONES, True

    ds.label("Rigify arm", (0.0, -1.0, 0.0), ink)
    ds.label("FABRIK", (1.7, -1.0, 0.0), ink)
    ds.label("Blender IK", (3.8, -1.0, 0.0), ink)
    ds.stage(center_x=1.95, width=6.2, height=3.5, center_z=1.2)
    return chains, native


def render_contact_sheet(path: Path, frames: Sequence[int], samples: int, percentage: int) -> None:
    """Render ``frames`` with Cycles on the CPU and lay them out in a grid, left to right, top to bottom."""
    scene = rigs.scene()
    scene.render.engine = "CYCLES"  # type: ignore[assignment]  # the stubs list only EEVEE
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = samples > 1
    scene.render.resolution_percentage = percentage
    scene.render.use_persistent_data = True
    scene.render.image_settings.file_format = "PNG"
    tiles = []
    with tempfile.TemporaryDirectory(prefix="fabrik-demo-") as folder:
        for frame in frames:
            scene.frame_set(frame)
            scene.render.filepath = os.path.join(folder, f"{frame:04d}.png")
            with quiet_stdout():
                bpy.ops.render.render(write_still=True)
            image = bpy.data.images.load(scene.render.filepath)
            width, height = image.size
            pixels = np.empty(width * height * 4, dtype=np.float32)
            pixel_array(image).foreach_get(pixels)
            tiles.append(pixels.reshape(height, width, 4))
            bpy.data.images.remove(image)
    columns = min(SHEET_COLUMNS, len(tiles))
    rows = -(-len(tiles) // columns)
    gap = 4
    height, width = tiles[0].shape[:2]
    sheet = np.ones(((height + gap) * rows - gap, (width + gap) * columns - gap, 4), dtype=np.float32)
    for k, tile in enumerate(tiles):
        row, column = divmod(k, columns)
        y = (rows - 1 - row) * (height + gap)  # Blender's pixel rows start at the bottom
        x = column * (width + gap)
        sheet[y : y + height, x : x + width] = tile
    image = bpy.data.images.new("FABRIK demo", sheet.shape[1], sheet.shape[0], alpha=False)
    pixel_array(image).foreach_set(sheet.ravel())
    image.filepath_raw = str(path)
    image.file_format = "PNG"
    image.save()


def pixel_array(image: bpy.types.Image) -> Any:
    """``image.pixels``, which the stubs type as a float although it is an array with ``foreach_get/set``."""
    return image.pixels


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Silence what Blender's C code prints on stdout (a line per render tile), keeping the summary readable."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parents[1] / "demo")
    parser.add_argument("--quick", action="store_true", help="a tiny, noisy render of two frames (for tests)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    blend, picture = args.output_dir / "fabrik_demo.blend", args.output_dir / "fabrik_demo.png"

    chains, native = build()
    print(f"FABRIK demo with Blender {bpy.app.version_string}: {len(FRAMES)} frames, tolerance {TOLERANCE}")
    for chain in chains:
        report = api.bake(
            chain.armature, chain.target, tip_bone=chain.tip_bone, chain_length=chain.chain_length, tolerance=TOLERANCE
        )
        print(
            f"  {chain.label:<11} {len(report.bones):>2} bones baked in {report.seconds:.2f} s: max tip error "
            f"{report.max_error:.1e}, {len(report.unreachable_frames)} frames out of reach"
        )
    native_errors = rigs.tip_errors(native.armature, native.tip_bone, native.target, FRAMES)
    print(
        f"  Blender's IK constraint on the same {TENTACLE_BONES}-bone tentacle: max tip error "
        f"{native_errors.max():.2f}, within tolerance on {np.mean(native_errors <= TOLERANCE):.0%} of frames"
    )
    if "rigify" in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_disable(module="rigify")  # Rigify left enabled crashes bpy 4.2 at exit
    rigs.scene().frame_set(1)
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)

    render_start = time.perf_counter()
    frames = SHEET_FRAMES[::3] if args.quick else SHEET_FRAMES
    render_contact_sheet(picture, frames, samples=1 if args.quick else 32, percentage=25 if args.quick else 100)
    print(f"  rendered {len(frames)} frames with Cycles in {time.perf_counter() - render_start:.0f} s")
    print(f"saved {blend} and {picture} ({time.perf_counter() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    status = main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # Blender's teardown at interpreter exit can crash; the status is the demo's
