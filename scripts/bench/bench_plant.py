"""Benchmark: Plant Feet against Blender's IK constraint + Bake Action toward the same pins, side by side in one
process (the "plant" section of ``bench_bake.py``; also runnable alone).

For each committed clip, with the hips lowered and without: FABRIK's whole ``api.plant_feet`` (finding the
contacts, the bake, Blender's check of the keys) is timed on a fresh import; then on another fresh import
Blender's side is given FABRIK's pins (an Empty per foot keyed where FABRIK's ball goes and turned as the foot
is animated) and lowered hips, and an IK constraint per leg (Rotation on) is baked with Bake Action
(``plant_scenes.native_plant``). Both are measured by Blender's evaluation: the knees against the capture
(everywhere, and where Blender's IK reaches the pins), knee flips, the slide left in contacts.

Run with the bpy module: ``.venv/bin/python scripts/bench/bench_plant.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import bpy
import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import mocap
import plant_scenes
import rigs

from fabrik_addon import api
from fabrik_addon.blender import compat


def _row(clip: str, hips: str | None, repeat: int, metres_per_unit: float) -> str:
    ours: list[tuple[float, api.PlantReport, plant_scenes.FloatArray, plant_scenes.FloatArray]] = []
    theirs: list[tuple[float, plant_scenes.FloatArray]] = []
    for _ in range(repeat):
        rigs.new_file(range(1, 2))
        legs = plant_scenes.import_legs(clip)
        seconds, report = plant_scenes.fabrik_plant(legs, hips_bone=hips)
        after = plant_scenes.leg_joints(legs.armature, legs.legs, legs.frames)
        ours.append((seconds, report, after, legs.joints.copy()))
        rigs.new_file(range(1, 2))
        native = plant_scenes.import_legs(clip)
        native_seconds = plant_scenes.native_plant(native, report, hips)
        theirs.append((native_seconds, plant_scenes.leg_joints(native.armature, native.legs, native.frames)))
    seconds, report, after, animated = min(ours, key=lambda result: result[0])
    native_seconds, native_after = min(theirs, key=lambda result: result[0])
    frames = len(animated)
    cm = metres_per_unit * 100.0
    goals = np.stack([chain.tips for chain in report.bake.chains], axis=1)
    legs = np.linalg.norm(np.diff(animated[0, :, :3], axis=1), axis=-1).sum(axis=1)  # hip to knee to ankle
    reached = np.linalg.norm(native_after[:, :, 3] - goals, axis=-1) <= 5 * plant_scenes.TOLERANCE * legs.min()
    ours_knee = np.linalg.norm(after[:, :, 1] - animated[:, :, 1], axis=-1) * cm
    their_knee = np.linalg.norm(native_after[:, :, 1] - animated[:, :, 1], axis=-1) * cm
    flips = sum(len(mocap.knee_flips(*(after[:, k, j] for j in range(3)))) for k in range(2))
    native_flips = sum(len(mocap.knee_flips(*(native_after[:, k, j] for j in range(3)))) for k in range(2))
    jumps = knee_jumps(after, native_after, reached, legs, mocap.scene_fps())
    before = max(s for foot in report.feet for s in foot.skate_before) * cm * 10
    held = max(s for foot in report.feet for s in foot.skate_after) * cm * 10
    missed = float(np.linalg.norm(native_after[:, :, 3] - goals, axis=-1).max() * cm)
    pins = float(np.linalg.norm(after[:, :, 3] - report.goals, axis=-1).max() * cm * 10)
    contacts = sum(len(foot.contacts) for foot in report.feet)
    name = Path(clip).stem if clip not in mocap.CLIPS else clip
    bob = f"{report.hips_bob[0] * cm * 10:>5.1f}/{report.hips_bob[1] * cm * 10:<5.1f}"
    return (
        f"{name:<13} {'hips' if hips else 'none':<5} {frames:>6} | {seconds / frames * 1e3:>6.3f} "
        f"{native_seconds / frames * 1e3:>6.3f} {native_seconds / seconds:>5.2f}x | {contacts:>3} "
        f"{before:>5.1f}/{held:<4.2f}mm | {ours_knee[reached].max():>5.2f}/"
        f"{their_knee[reached].max():<5.2f} {ours_knee[reached].mean():>5.3f}/{their_knee[reached].mean():<5.3f} | "
        f"{flips}/{native_flips} | {jumps[0]:>4.2f}/{jumps[1]:<4.2f} {jumps[2]:>3} | {missed:>5.2f} | "
        f"{report.max_hips_drop * cm:>4.2f} | {bob} | {pins:.2f}"
    )


def knee_jumps(
    ours: plant_scenes.FloatArray,
    theirs: plant_scenes.FloatArray,
    reached: npt.NDArray[np.bool_],
    legs: plant_scenes.FloatArray,
    fps: float,
) -> tuple[float, float, int]:
    """How far the knees move from one frame to the next, FABRIK's and Blender's, on the frames where Blender's IK
    reaches the pins on both (in leg lengths, the largest of each), and on how many of those FABRIK's knee moves
    farther than 1.25 times Blender's plus two thirds of a leg's length a second (the issue's bound)."""
    step_ours = np.linalg.norm(np.diff(ours[:, :, 1], axis=0), axis=-1) / legs  # (F-1, L)
    step_theirs = np.linalg.norm(np.diff(theirs[:, :, 1], axis=0), axis=-1) / legs
    both = reached[1:] & reached[:-1]
    over = both & (step_ours > 1.25 * step_theirs + (2.0 / 3.0) / fps)
    return float(step_ours[both].max()), float(step_theirs[both].max()), int(over.sum())


def plant_table(repeat: int = 1, clips: Sequence[tuple[str, float]] = ()) -> None:
    print(
        f"{'clip':<13} {'hips':<5} {'frames':>6} | {'FABRIK':>6} {'native':>6} {'ratio':>6} | {'n':>3} "
        f"{'slide before/after':>18} | {'knee max F/N':>11} {'mean F/N':>11} | flips | {'jump F/N':>9} over | "
        "N miss | drop | bob before/after | pins"
    )
    everything = [(clip, mocap.CLIPS[clip].metres_per_unit) for clip in mocap.CLIPS] + list(clips)
    for clip, metres in everything:
        for hips in ("Hips" if clip in mocap.CLIPS else _hips(clip), None):
            print(_row(clip, hips, repeat, metres))
    print(
        "ms per frame: FABRIK's whole plant_feet (contacts, bake, check) and Blender's IK constraints + Bake "
        "Action toward FABRIK's pins; ratio: Blender's time over FABRIK's; n: contacts; slide: the most a ball "
        "slides in a contact, before and after (mm); knees: distance from the captured knee (cm), FABRIK / "
        "Blender, where Blender's IK reaches the pins; jump: the largest move of a knee from one frame to the "
        "next (leg lengths) where Blender's IK reaches the pins on both, FABRIK / Blender, and over: frames where "
        "FABRIK's is over 1.25x Blender's plus 2/3 of a leg a second; N miss: the farthest Blender's IK leaves a "
        "ball from its pin (cm); drop: the hips' largest drop (cm); bob: the hips' height peak to peak (mm), as "
        "animated and planted; pins: the farthest a ball is from its goal (mm), as Blender evaluates the keys"
    )


def _hips(clip: str) -> str:
    """A clip's hips: the bone nearest the legs that both hang from and whose Location is keyed (the BVH root)."""
    rigs.new_file(range(1, 2))
    legs = plant_scenes.import_legs(clip)
    data = legs.armature.data
    assert isinstance(data, bpy.types.Armature)
    anim = legs.armature.animation_data
    assert anim is not None
    keyed = {f.data_path for f in compat.assigned_fcurves(legs.armature) if f.data_path.endswith(".location")}
    above = [{b.name for b in data.bones[leg.thigh].parent_recursive} for leg in legs.legs]
    both = [b.name for b in data.bones[legs.legs[0].thigh].parent_recursive if b.name in above[1]]
    return str(next(name for name in both if f'pose.bones["{name}"].location' in keyed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=1, help="plant each row this many times, keep the fastest")
    parser.add_argument(
        "--clip",
        action="append",
        default=[],
        metavar="FILE.bvh[@METRES]",
        help="another BVH clip, imported with Blender's default settings (its unit in metres, 0.01 by default)",
    )
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    clips = [(path, float(unit or 0.01)) for path, _, unit in (clip.partition("@") for clip in args.clip)]
    rigs.new_file(range(1, 2))
    print(f"Blender {bpy.app.version_string}; Plant Feet's tolerance {plant_scenes.TOLERANCE} leg lengths")
    plant_table(args.repeat, clips)


if __name__ == "__main__":
    main()
