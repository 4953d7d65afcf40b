"""Benchmark: editing motion capture through IK, side by side in one process (the "edit" section of
``bench_bake.py``; also runnable alone).

For each committed clip with its four chains (arms to the wrist, legs to the ball of the foot;
``edit_scenes.clip_with_chains``), each on a fresh import:

- Targets: ``api.targets_from_animation`` (an Empty per chain keyed where its tip is, a pole beside its bend,
  the chains set up to follow them) against the route by hand (``edit_scenes.targets_by_hand``: an Empty per
  target and pole with Copy Location / Copy Rotation or Child Of, one Bake Action of all of them with visual
  keying). Ratio: the hand route's time over ours.
- Bakes: the chain list baked toward those targets as a layer over the animation (``output="layer"``) and into
  the Action (``"action"``); ratio: the layer's time over the Action's (a layer should cost at most 25 % more).
  Round trip: the largest distance of any chain bone's head, tail or off-axis point from the animation after
  the layer bake, as Blender evaluates it, in mm and in lengths of the shortest chain.

Run with the bpy module: ``.venv/bin/python scripts/bench/bench_edit.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import edit_scenes
import mocap

from fabrik_addon import api


def _fresh(clip: str) -> bpy.types.Object:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    api.armatures_with_chains()  # the chain list's settings, registered where the add-on is not enabled
    return edit_scenes.clip_with_chains(clip)


def _row(clip: str, repeat: int) -> str:
    ours, by_hand, layer, action = [], [], [], []
    worst = shortest = 0.0
    for _ in range(repeat):
        armature = _fresh(clip)
        frames = mocap.scene_frames()
        by_hand.append(edit_scenes.targets_by_hand(armature, frames))
        armature = _fresh(clip)
        before = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), frames)
        start = time.perf_counter()
        api.targets_from_animation(armature)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        api.bake_chains(armature, output="layer")
        layer.append(time.perf_counter() - start)
        after = edit_scenes.bone_points(armature, edit_scenes.chain_bones(armature), frames)
        worst = float(np.linalg.norm(after - before, axis=-1).max())
        shortest = min(edit_scenes.chain_lengths(armature).values())
        armature = _fresh(clip)
        api.targets_from_animation(armature)
        start = time.perf_counter()
        api.bake_chains(armature, output="action")
        action.append(time.perf_counter() - start)
    mm = mocap.CLIPS[clip].metres_per_unit * 1000.0
    n = len(frames)
    return (
        f"{clip:<13} {n:>6} | {min(ours) / n * 1e3:>6.3f} {min(by_hand) / n * 1e3:>7.3f} "
        f"{min(by_hand) / min(ours):>5.1f}x | {min(layer) / n * 1e3:>6.3f} {min(action) / n * 1e3:>6.3f} "
        f"{min(layer) / min(action):>5.2f}x | {worst * mm:>8.5f} mm {worst / shortest:>8.1e}"
    )


def edit_table(repeat: int = 1) -> None:
    print(
        f"{'clip':<13} {'frames':>6} | {'ours':>6} {'by hand':>7} {'ratio':>6} | {'layer':>6} {'action':>6} "
        f"{'ratio':>6} | round trip (max, and in shortest chains)"
    )
    for clip in mocap.CLIPS:
        print(_row(clip, repeat))
    print(
        "ms per frame. Targets: targets_from_animation (4 targets, 4 poles) and the route by hand (Copy Location / "
        "Copy Rotation / Child Of Empties, one Bake Action), ratio by hand / ours. Bakes: the chain list toward "
        "them into a layer and into the Action, ratio layer / action. Round trip: the farthest any chain bone's "
        "head, tail or off-axis point ends from the animation after the layer bake"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=1, help="run each row this many times, keep the fastest")
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    _fresh("hop")
    api.targets_from_animation(bpy.data.objects["cmu_131_03_hop"])  # the first run in a process pays for loading
    print(f"Blender {bpy.app.version_string}")
    edit_table(args.repeat)


if __name__ == "__main__":
    main()
