"""The README's main job: build a scene, bake it with FABRIK, save it, render three moments, print a summary.

Left to right: Rigify's basic human reaches for a target with its left arm (the elbow a hinge, a pole below
it); a 48-bone tentacle whose joints bend at most 5 to 10 degrees each curls after a target on a wobbling
loop, beside the same tentacle under Blender's IK constraint (which gives up on it); a tree of 60 bones whose
joints bend at most 15 degrees each reaches for 9 targets at once (its 9 chains share bones: one tree),
beside the same tree under Blender's IK constraints. Each FABRIK rig's chains are in its chain list
(``Object.fabrik``), and each is baked as the sidebar's Bake button bakes it (``bpy.ops.fabrik.bake``);
the file is saved, set up for Cycles as rendered, as ``demo/out/fabrik_demo.blend`` (open it with the
add-on enabled and press Bake to bake it again), and three frames rendered with Cycles on the CPU are
stacked into ``demo/out/fabrik_demo.png``. ``--update-readme-picture`` also copies the picture to
``demo/fabrik_demo.png``, the one in the README.

The times printed are this run's, measured on the machine it runs on (wall-clock, ``time.perf_counter``).

Run ``scripts/demo`` (it sets up the environment first), or with the bpy module:
``.venv/bin/python scripts/pictures/demo.py [--quick] [--output-dir DIR] [--update-readme-picture]``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bpy
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import demo_scene as ds
import rigs

import fabrik_addon
from fabrik_addon.blender.properties import settings_of
from fabrik_addon.blender.units import named_unit
from fabrik_addon.cli.report import quiet_stdout
from fabrik_addon.words import length_words

REPO = Path(__file__).resolve().parents[2]
FRAMES = range(1, 121)
#: The frames in the picture, top to bottom.
MOMENTS = (28, 52, 84)
TOLERANCE = 1e-3
#: The arm's pole angle: its upper arm's X axis turned this much faces the pole below the elbow.
ARM_POLE_ANGLE = -math.pi / 2
TENTACLE_BONES, TENTACLE_LENGTH = 48, 2.4
#: Each joint of the tentacle swings at most this much (degrees), from root to tip: supple everywhere, more
#: at the tip, stiff enough that the bending spreads along it.
TENTACLE_CONES = (5.0, 10.0)
#: The tentacle's target loops through these points (in tentacle lengths, about its root): high above it,
#: out and down to its right, pulled in close (it curls), back up, and the same on its left, a little in
#: front and behind on the way.
TENTACLE_PATH = (
    (0.05, -0.05, 0.85),
    (0.42, -0.15, 0.6),
    (0.48, 0.05, 0.25),
    (0.2, 0.15, 0.42),
    (0.05, 0.0, 0.72),
    (-0.28, -0.15, 0.75),
    (-0.48, 0.0, 0.3),
    (-0.2, 0.15, 0.45),
)
HUMAN_SCALE = 1.4
#: The human's thickness about each bone (of either side), in the metarig's units; the bones not named have
#: no skin (the breasts', pelvis' and heels').
HUMAN_BODY = {
    "spine": 0.08,
    "spine.001": 0.085,
    "spine.002": 0.09,
    "spine.003": 0.09,
    "spine.004": 0.035,
    "spine.005": 0.035,
    "spine.006": 0.075,
    "shoulder": 0.035,
    "upper_arm": 0.04,
    "forearm": 0.034,
    "hand": 0.03,
    "thigh": 0.06,
    "shin": 0.045,
    "foot": 0.035,
    "toe": 0.028,
}
TREE_SCALE = 0.5
#: Each joint of the trees swings at most this much (degrees): a branch bends, it does not fold.
TREE_BEND = 15.0
#: Each moment's size in pixels, and the gap between them.
PANEL, GAP = (1200, 480), 6
#: The figures' x, left to right: the human, the two tentacles, the two trees.
PLACES = (0.0, 2.3, 4.6, 6.9, 8.85)
#: Under each figure: what it is, and whether FABRIK baked it (or Blender's IK moves it).
LABELS = (
    ("Rigify arm", True),
    ("48-bone tentacle", True),
    ("48-bone tentacle", False),
    ("60-bone tree", True),
    ("60-bone tree", False),
)
README_PICTURE = REPO / "demo" / "fabrik_demo.png"


@dataclass(frozen=True)
class Demo:
    """What ``build`` made: the chains FABRIK bakes (the tree's 9 share its bones), and the rigs left to
    Blender's IK."""

    arm: ds.Chain
    tentacle: ds.Chain
    tree: tuple[ds.Chain, ...]
    native_tentacle: ds.Chain
    native_tree: tuple[ds.Chain, ...]

    @property
    def fabrik_rigs(self) -> list[tuple[str, list[ds.Chain]]]:
        """Each rig FABRIK bakes, as the summary names it, with its chains."""
        return [("Rigify arm", [self.arm]), ("Tentacle", [self.tentacle]), ("Tree", list(self.tree))]


def build() -> Demo:
    """The rigs and their targets; the chains of the FABRIK rigs in their chain lists, and IK constraints on
    the rigs left to Blender's IK."""
    rigs.new_file(FRAMES)
    arm = ds.rigify_arm(PLACES[0], HUMAN_SCALE)
    cones = np.radians(np.linspace(*TENTACLE_CONES, TENTACLE_BONES))
    path = ds.loop_through(FRAMES, TENTACLE_PATH, TENTACLE_LENGTH)
    tentacle, native_tentacle = (
        ds.tentacle(name, x, TENTACLE_BONES, TENTACLE_LENGTH, cones, path)
        for name, x in (("Tentacle", PLACES[1]), ("BlenderIK", PLACES[2]))
    )
    tree, native_tree = (tree_chains(name, x) for name, x in (("Tree", PLACES[3]), ("BlenderIKTree", PLACES[4])))
    for chain in (native_tentacle, *native_tree):
        ik = chain.armature.pose.bones[chain.tip_bone].constraints.new("IK")
        assert isinstance(ik, bpy.types.KinematicConstraint)
        ik.target, ik.chain_count, ik.use_tail = chain.target, chain.chain_length, True
    demo = Demo(arm, tentacle, tree, native_tentacle, native_tree)
    for _, chains in demo.fabrik_rigs:
        listed = settings_of(chains[0].armature)  # Object.fabrik, the chain list and settings the sidebar shows
        listed.tolerance = TOLERANCE
        # Posed from rest, with no animation of their own to keep: keyed into their Actions, not a layer (a layer
        # over quaternion bones turned a little each, as the tentacle's, resolves each turn to about 0.04 degrees).
        listed.output = "ACTION"
        for chain in chains:
            item = listed.chains.add()
            item.tip_bone, item.chain_length, item.target = chain.tip_bone, chain.chain_length, chain.target
            if chain.pole is not None:
                item.pole_target, item.pole_angle = chain.pole, ARM_POLE_ANGLE
    return demo


def tree_chains(name: str, x: float) -> tuple[ds.Chain, ...]:
    """A tree (``demo_scene.tree``) at (x, 0, 0), as its chains: one per tip, up to the root, toward its target."""
    armature, tips, targets = ds.tree(name, x, TREE_SCALE, math.radians(TREE_BEND))
    return tuple(ds.Chain(name, armature, tip, 0, target) for tip, target in zip(tips, targets, strict=True))


def dress(demo: Demo) -> bpy.types.Object:
    """Skins for the rigs (orange: FABRIK, slate: Blender's IK), the stage, the labels; returns the text that
    shows the frame number."""
    fabrik, native = ds.material("FABRIK", ds.FABRIK_COLOR), ds.material("Blender IK", ds.NATIVE_COLOR)
    body = ds.material("Body", ds.BODY_COLOR)
    ds.skin(
        demo.arm.armature,
        lambda bone: HUMAN_BODY.get(bone.name.removesuffix(".L").removesuffix(".R"), 0.0),
        lambda bone: fabrik if bone.name in ("upper_arm.L", "forearm.L", "hand.L") else body,
    )

    def taper(bone: bpy.types.Bone) -> float:
        return 0.08 * (1.0 - 0.72 * bone.head_local.z / TENTACLE_LENGTH)

    def by_depth(bone: bpy.types.Bone) -> float:
        # "b.00"... in the trunk, "b0.00"... in its first branch, "b01.00"... in that one's first.
        return 0.09 * 0.62 ** (len(bone.name.split(".")[0]) - 1)

    for rig, radius, mat in (
        (demo.tentacle.armature, taper, fabrik),
        (demo.native_tentacle.armature, taper, native),
        (demo.tree[0].armature, by_depth, fabrik),
        (demo.native_tree[0].armature, by_depth, native),
    ):
        ds.skin(rig, radius, ds.all_of(mat), taper=1.0, joint=1.0)
    for chain in (demo.arm, demo.tentacle, demo.native_tentacle, *demo.tree, *demo.native_tree):
        ds.tether(chain.armature, chain.tip_bone, chain.target, 0.012)

    camera = ds.stage(center_x=4.95, width=11.7, look_at_z=1.5, resolution=PANEL)
    bpy.context.view_layer.update()  # the camera's matrix_world, for where_in_view
    ink, ours, theirs = (
        ds.flat(name, color)
        for name, color in (("Ink", ds.INK_COLOR), ("Ours", ds.FABRIK_INK), ("Theirs", ds.NATIVE_INK))
    )
    for (name, baked), x in zip(LABELS, PLACES, strict=True):
        across, feet = ds.where_in_view(camera, (x, 0.0, 0.0))
        ds.text(name, camera, (across, feet - 0.07), 0.045, "CENTER", ink)
        how, color = ("FABRIK", ours) if baked else ("Blender's IK", theirs)
        ds.text(how, camera, (across, feet - 0.13), 0.045, "CENTER", color)
    target = ds.flat("Target ink", ds.TARGET_COLOR)
    ds.legend(
        camera,
        [
            ("baked with FABRIK", ds.flat("FABRIK dot", ds.FABRIK_COLOR)),
            ("Blender's IK constraint", ds.flat("Blender IK dot", ds.NATIVE_COLOR)),
            ("target", target),
        ],
        ink,
        (0.98, 0.92),
        0.045,
    )
    return ds.text("frame 1", camera, (0.015, 0.92), 0.055, "LEFT", ink)


def _length(value: float) -> str:
    """A length in the scene's units as the reports give it, with its unit (``0.96 mm``)."""
    scene = bpy.context.scene
    assert scene is not None
    return length_words(float(value), named_unit(scene))


def bake(demo: Demo) -> None:
    """Bake each FABRIK rig as the Bake button does, its chains as its list has them, and print a line each
    with the bake's own time (its report's, the panel's Last Bake Time); then a line for each rig left to
    Blender's IK."""
    for label, chains in demo.fabrik_rigs:
        armature = chains[0].armature
        bpy.context.view_layer.objects.active = armature
        with quiet():  # the operator's report, which the bpy module prints
            assert bpy.ops.fabrik.bake() == {"FINISHED"}  # type: ignore[attr-defined]  # the add-on's operator
        baked = [item.last_bake for item in settings_of(armature).chains]
        bones = {name for chain in chains for name in chain_bones(chain)}
        tree = f" ({len(chains)} tips, one tree)" if len(chains) > 1 else ""
        print(
            f"  {label:<11} {len(bones):>2} bones baked in {baked[0].seconds:.2f} s: max tip error "
            f"{_length(max(b.max_error for b in baked))}, {max(b.unreachable for b in baked)} frames out of reach{tree}"
        )
    # One walk through the frames for both (Blender's IK on the limited tree takes most of the demo's time).
    native = (demo.native_tentacle, *demo.native_tree)
    errors = tips_errors([(chain.armature, chain.tip_bone, chain.target) for chain in native])
    print(
        f"  Blender's IK constraint on the same {TENTACLE_BONES}-bone tentacle: max tip error "
        f"{_length(errors[:, 0].max())}, within tolerance on {np.mean(errors[:, 0] <= TOLERANCE):.0%} of frames"
    )
    print(
        f"  Blender's IK constraints on the same tree: max tip error {_length(errors[:, 1:].max())}, "
        f"every tip within tolerance on {np.mean((errors[:, 1:] <= TOLERANCE).all(axis=1)):.0%} of frames"
    )


def chain_bones(chain: ds.Chain) -> list[str]:
    """The bones of ``chain``: its tip bone and up through its parents, ``chain_length`` of them (0: to the
    root)."""
    bone: bpy.types.Bone | None = chain.armature.data.bones[chain.tip_bone]
    names: list[str] = []
    while bone is not None and (chain.chain_length == 0 or len(names) < chain.chain_length):
        names.append(bone.name)
        bone = bone.parent
    return names


def tips_errors(tips: Sequence[tuple[bpy.types.Object, str, bpy.types.Object]]) -> NDArray[np.float64]:
    """As Blender evaluates each frame: the distance from each tip bone's tail to its target, shape (F, tips),
    for tips given as (armature, tip bone, target)."""
    errors = np.empty((len(FRAMES), len(tips)))
    for i, frame in enumerate(FRAMES):
        rigs.scene().frame_set(frame)
        for k, (armature, tip, target) in enumerate(tips):
            tail = armature.matrix_world @ armature.pose.bones[tip].tail
            errors[i, k] = (tail - target.matrix_world.translation).length
    return errors


def render_settings(samples: int, percentage: int) -> None:
    """Set the scene up to render with Cycles on the CPU (before it is saved: the file is as rendered)."""
    scene = rigs.scene()
    scene.render.engine = "CYCLES"  # type: ignore[assignment]  # the stubs list only EEVEE
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = samples > 1
    # The denoiser's fastest setting: on two cores the default one takes longer than the samples themselves.
    scene.cycles.denoising_quality, scene.cycles.denoising_prefilter = "FAST", "NONE"
    scene.cycles.max_bounces = 4
    scene.render.resolution_percentage = percentage
    scene.render.use_persistent_data = True
    scene.render.image_settings.file_format = "PNG"


def render_moments(frame_label: bpy.types.Object, path: Path, frames: Sequence[int]) -> None:
    """Render ``frames`` as the scene is set up to (``render_settings``), each with its number on it, and
    stack them top to bottom."""
    scene = rigs.scene()
    percentage = scene.render.resolution_percentage
    label = frame_label.data
    assert isinstance(label, bpy.types.TextCurve)
    tiles = []
    with tempfile.TemporaryDirectory(prefix="fabrik-demo-") as folder:
        for frame in frames:
            scene.frame_set(frame)
            label.body = f"frame {frame}"
            scene.render.filepath = os.path.join(folder, f"{frame:04d}.png")
            with quiet():
                bpy.ops.render.render(write_still=True)
            image = bpy.data.images.load(scene.render.filepath)
            width, height = image.size
            pixels = np.empty(width * height * 4, dtype=np.float32)
            pixel_array(image).foreach_get(pixels)
            tiles.append(pixels.reshape(height, width, 4))
            bpy.data.images.remove(image)
    height, width = tiles[0].shape[:2]
    gap = max(1, GAP * percentage // 100)
    sheet = np.ones(((height + gap) * len(tiles) - gap, width, 4), dtype=np.float32)
    for k, tile in enumerate(tiles):
        y = (len(tiles) - 1 - k) * (height + gap)  # Blender's pixel rows start at the bottom
        sheet[y : y + height] = tile
    image = bpy.data.images.new("FABRIK demo", width, sheet.shape[0], alpha=False)
    pixel_array(image).foreach_set(sheet.ravel())
    image.filepath_raw = str(path)
    image.file_format = "PNG"
    image.save()


def pixel_array(image: bpy.types.Image) -> Any:
    """``image.pixels``, which the stubs type as a float although it is an array with ``foreach_get/set``."""
    return image.pixels


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Nothing on stdout meanwhile: neither what Blender's C code prints (render progress, "Saved ...") nor
    what Python code prints (Rigify's "Reloading ..."), flushed before stdout comes back."""
    with quiet_stdout():
        try:
            yield
        finally:
            sys.stdout.flush()


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/pictures/demo.py",
        description=__doc__.split("\n\n")[0],
        epilog="Only --update-readme-picture changes a file git tracks; demo/out/ is ignored.",
    )
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=REPO / "demo" / "out",
        metavar="DIR",
        help="where the .blend and the picture go (default: demo/out/)",
    )
    parser.add_argument("--quick", action="store_true", help="a tiny, noisy render (for tests)")
    parser.add_argument(
        "--update-readme-picture",
        action="store_true",
        help=f"also copy the picture to {README_PICTURE.relative_to(REPO)}, the one the README shows",
    )
    args = parser.parse_args(argv)
    if args.quick and args.update_readme_picture:
        parser.error("--quick renders a tiny, noisy picture: not one for the README")
    return args


def main(argv: Sequence[str]) -> int:
    args = parse(argv)
    started = time.perf_counter()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    blend, picture = args.output_dir / "fabrik_demo.blend", args.output_dir / "fabrik_demo.png"

    with quiet():
        fabrik_addon.register()  # the chain lists (Object.fabrik) and the Bake button (bpy.ops.fabrik.bake)
        demo = build()
    print(f"FABRIK demo with Blender {bpy.app.version_string}: {len(FRAMES)} frames, tolerance {_length(TOLERANCE)}")
    bake(demo)
    frames = MOMENTS[::2] if args.quick else MOMENTS
    with quiet():
        frame_label = dress(demo)
        render_settings(samples=1 if args.quick else 8, percentage=25 if args.quick else 100)
        if "rigify" in bpy.context.preferences.addons:
            bpy.ops.preferences.addon_disable(module="rigify")  # Rigify left enabled crashes bpy 4.2 at exit
        bpy.context.preferences.filepaths.save_version = 0  # no .blend1 beside the file
        rigs.scene().frame_set(frames[0])
        label = frame_label.data
        assert isinstance(label, bpy.types.TextCurve)
        label.body = f"frame {frames[0]}"
        bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)

    render_start = time.perf_counter()
    render_moments(frame_label, picture, frames)
    print(f"  rendered {len(frames)} frames with Cycles in {time.perf_counter() - render_start:.0f} s")
    saved = [blend, picture]
    if args.update_readme_picture:
        shutil.copyfile(picture, README_PICTURE)
        saved.append(README_PICTURE)
    print(f"saved {', '.join(map(shown, saved))} ({time.perf_counter() - started:.0f} s in all)")
    return 0


def shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


if __name__ == "__main__":
    status = main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # Blender's teardown at interpreter exit can crash; the status is the demo's
