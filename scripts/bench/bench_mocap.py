"""Benchmark: motion capture baked with FABRIK against Blender's IK constraint + Bake Action, side by side in one
process (the "mocap" section of ``bench_bake.py``; also runnable alone).

For each committed clip (``tests/data``) and each scene of ``mocap_scenes`` (both legs toward the animated
ankles, free and with a pole before each knee; the feet pinned during contacts; legs, arms and spine shortened to
80 % toward the tips as captured, knees and elbows limited to the clip's ranges; the same with Lock IK Y on both
thighs), the scene is built twice from
a fresh file and baked once each way. Blender's bake is an IK constraint per chain and
``bpy.ops.nla.bake(visual_keying=True, clear_constraints=True, use_current_action=True)`` of the chains' bones
(without ``use_current_action`` Bake Action drops the root motion). Both are measured by Blender's evaluation of
their keys on every frame: how far the knees and elbows are from their animated places (largest and mean),
knee flips, and the frames with every tip on target.

Run with the bpy module: ``.venv/bin/python scripts/bench/bench_mocap.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

import bpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import mocap
import mocap_scenes
import rigs

SCENES: dict[str, Callable[[str], mocap_scenes.Scene]] = {
    "legs, free": mocap_scenes.legs,
    "legs, pole": partial(mocap_scenes.legs, poles=True),
    "pinned feet": mocap_scenes.pinned_feet,
    "retarget 80%": mocap_scenes.retarget,
    "locked thighs": mocap_scenes.locked_thighs,
}


def side_by_side(
    build: Callable[[], mocap_scenes.Scene], repeat: int
) -> tuple[tuple[float, mocap_scenes.Measures, dict[str, float]], tuple[float, mocap_scenes.Measures]]:
    """Each side baked ``repeat`` times from a fresh scene, its fastest kept: ((seconds, measures, timings) for
    FABRIK, (seconds, measures) for Blender's)."""
    ours, theirs = [], []
    for _ in range(repeat):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        scene = build()
        seconds, report = mocap_scenes.fabrik_bake(scene)
        ours.append((seconds, mocap_scenes.measure(scene), report.timings))
        bpy.ops.wm.read_factory_settings(use_empty=True)
        scene = build()
        theirs.append((mocap_scenes.native_bake(scene), mocap_scenes.measure(scene)))
    return min(ours, key=lambda result: result[0]), min(theirs, key=lambda result: result[0])


def time_split(timings: Mapping[str, float], frames: int) -> str:
    """A bake report's time per frame in ms, "read/solve/write/check"."""
    return "/".join(f"{timings[k] / frames * 1e3:.3f}" for k in ("read scene", "solve", "write keys", "check keys"))


def mocap_table(repeat: int = 1) -> None:
    print(
        f"{'clip':<13} {'scene':<14} {'frames':>6} | {'FABRIK':>6} {'native':>6} {'ratio':>6} {'ceiling':>7} | "
        f"{'knee max F/N':>13} {'knee mean F/N':>15} | {'flips F/N/anim':>14} | {'on target F/N':>13} | "
        "FABRIK read/solve/write/check"
    )
    for clip in mocap.CLIPS:
        size = mocap.CLIPS[clip].metres_per_unit * 100.0  # scene units to cm
        for label, build in SCENES.items():
            (ours, our_measures, timings), (theirs, their_measures) = side_by_side(partial(build, clip), repeat)
            frames = len(mocap.scene_frames())
            split = time_split(timings, frames)
            print(
                f"{clip:<13} {label:<14} {frames:>6} | {ours / frames * 1e3:>6.3f} {theirs / frames * 1e3:>6.3f} "
                f"{theirs / ours:>5.2f}x {theirs / timings['check keys']:>6.1f}x | "
                f"{our_measures.middle_max * size:>5.2f}/{their_measures.middle_max * size:<5.2f}cm "
                f"{our_measures.middle_mean * size:>6.3f}/{their_measures.middle_mean * size:<6.3f}cm | "
                f"{our_measures.flips:>4}/{their_measures.flips}/{our_measures.animated_flips:<6} | "
                f"{our_measures.on_target:>5.0%}/{their_measures.on_target:<5.0%} "
                f"{our_measures.mean_error * size:>6.2f}/{their_measures.mean_error * size:<6.2f}cm | {split}"
            )
    print(
        "ms per frame; ratio: Blender's time over FABRIK's; ceiling: Blender's time over FABRIK's check alone "
        "(Blender evaluating the written keys on every frame); knees: distance of the knees from their animated "
        "places; mean miss: tip to target, over chains and frames; flips: frames where a knee's bend plane turns "
        "over 30 degrees while bent over 10, FABRIK / Blender / the animation itself"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="bake each row this many times, keep each side's fastest")
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    rigs.new_file(range(1, 2))
    print(f"Blender {bpy.app.version_string}; tolerance {mocap_scenes.TOLERANCE} scene units; lengths in cm")
    mocap_table(args.repeat)


if __name__ == "__main__":
    main()
