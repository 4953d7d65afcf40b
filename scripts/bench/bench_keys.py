"""Benchmark: fewer keys within a stated error (``key_error``, ``api.reduce_keys``), measured side by side in one
process.

- Time: each bake with and without a ``key_error`` on the same scene, alternately, each side's fastest of
  ``--repeat``; the ratio is what the reduction adds to the bake (thinning, writing Bezier keys, and Blender's
  check of every baked bone's points instead of the tips alone).
- Keys: what each bake keeps of a key on every frame, and the largest and 99th-percentile error Blender's
  evaluation of the kept keys shows.
- Decimate: ``reduce_keys`` on each committed clip (and ``plant_feet`` with the hips on the walk) at 1 mm,
  against Blender's Graph Editor Decimate on the same F-curves, its one error margin tuned until its error in the
  world is the same 1 mm (``key_scenes.decimated``).

Run with the bpy module: ``.venv/bin/python scripts/bench/bench_keys.py [--repeat N] [--section time|decimate]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import key_scenes
import mocap
import rigs

from fabrik_addon import api

#: The goals' key error: 0.5 mm on a chain 1 m long, and 1 mm on motion capture (in metres).
CHAIN_ERROR = 5e-4
MOCAP_ERROR = 1e-3


def _eased(bones: int, frames: int) -> Callable[[float], tuple[float, object]]:
    def bake(key_error: float) -> tuple[float, object]:
        armature, names, target = key_scenes.eased_chain(bones, frames=frames)
        started = time.perf_counter()
        report = api.bake(armature, target, tip_bone=names[-1], tolerance=1e-5, key_error=key_error)
        return time.perf_counter() - started, report.keys

    return bake


def _planted(clip: str) -> Callable[[float], tuple[float, object]]:
    def plant(key_error: float) -> tuple[float, object]:
        rigs.new_file(range(1, 2))
        armature = mocap.import_clip(clip, scale=mocap.CLIPS[clip].metres_per_unit)
        feet = [mocap.naming(armature).ankle.format(side=side) for side in mocap.SIDES]
        started = time.perf_counter()
        report = api.plant_feet(armature, feet, hips_bone="Hips", key_error=key_error)
        return time.perf_counter() - started, report.keys

    return plant


TIMED = {
    "2-bone arm, eased target, 250 frames": (_eased(2, 250), CHAIN_ERROR),
    "16-bone chain, eased target, 250 frames": (_eased(16, 250), CHAIN_ERROR),
    "16-bone chain, eased target, 1000 frames": (_eased(16, 1000), CHAIN_ERROR),
    "Plant Feet with the hips, walk 120 fps (360 frames)": (_planted("walk"), MOCAP_ERROR),
    "Plant Feet with the hips, hop 120 fps (300 frames)": (_planted("hop"), MOCAP_ERROR),
}


def time_rows(repeat: int) -> None:
    print("| Bake | Keyed every frame (s) | With key_error (s) | Time added | Keys kept | Max / p99 error |")
    print("|---|---|---|---|---|---|")
    for label, (bake, key_error) in TIMED.items():
        dense, thinned, kept = [], [], None
        for _ in range(repeat):
            dense.append(bake(0.0)[0])
            seconds, kept = bake(key_error)
            thinned.append(seconds)
        keys = kept
        assert keys is not None
        print(
            f"| {label} | {min(dense):.3f} | {min(thinned):.3f} | {100 * (min(thinned) / min(dense) - 1):+.0f}% | "
            f"{100 * keys.kept:.1f}% ({keys.keys} of {keys.dense_keys}) | "  # type: ignore[attr-defined]
            f"{keys.max_error * 1e3:.3f} / {keys.p99_error * 1e3:.3f} mm |"  # type: ignore[attr-defined]
        )


def decimate_rows() -> None:
    print("| Clip | reduce_keys at 1 mm (max error) | Decimate at 1 mm (margin) | Ratio | A key on every frame |")
    print("|---|---|---|---|---|")
    for clip in mocap.CLIPS:
        rigs.new_file(range(1, 2))
        armature = mocap.import_clip(clip, scale=mocap.CLIPS[clip].metres_per_unit)
        bones, frames = key_scenes.bone_names(armature), list(mocap.scene_frames())
        decimated, error, margin = key_scenes.decimated(armature, bones, frames, MOCAP_ERROR)
        rigs.new_file(range(1, 2))
        armature = mocap.import_clip(clip, scale=mocap.CLIPS[clip].metres_per_unit)
        report = api.reduce_keys(armature, key_error=MOCAP_ERROR)
        print(
            f"| {clip} | {report.keys} ({report.max_error * 1e3:.3f} mm) | {decimated} ({error * 1e3:.3f} mm, "
            f"{margin:.2e}) | {report.keys / decimated:.2f}x | {report.dense_keys} |"
        )
    for clip in ("walk", "hop"):
        rigs.new_file(range(1, 2))
        armature = mocap.import_clip(clip, scale=mocap.CLIPS[clip].metres_per_unit)
        feet = [mocap.naming(armature).ankle.format(side=side) for side in mocap.SIDES]
        planted = api.plant_feet(armature, feet, hips_bone="Hips")
        legs = sorted({*(name for chain in planted.bake.chains for name in chain.bones), "Hips"})
        frames = list(mocap.scene_frames())
        decimated, error, margin = key_scenes.decimated(armature, legs, frames, MOCAP_ERROR, only=legs)
        _, keys = _planted(clip)(MOCAP_ERROR)
        print(
            f"| plant_feet with the hips, {clip} | {keys.keys} ({keys.max_error * 1e3:.3f} mm) | "  # type: ignore[attr-defined]
            f"{decimated} ({error * 1e3:.3f} mm, {margin:.2e}) | {keys.keys / decimated:.2f}x | "  # type: ignore[attr-defined]
            f"{keys.dense_keys} |"  # type: ignore[attr-defined]
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="keep each side's fastest of N runs (default 3)")
    parser.add_argument("--section", choices=("time", "decimate"), help="one table only")
    args = parser.parse_args()
    print(f"Fewer keys with Blender {bpy.app.version_string}")
    if args.section in (None, "time"):
        time_rows(args.repeat)
    if args.section in (None, "decimate"):
        decimate_rows()


if __name__ == "__main__":
    main()
