"""Benchmark: the live preview's cost per update against Blender's own IK constraint, side by side in one run.

For each chain (4, 16 and 64 bones) the same armature and the same target path are built from a fresh file
three times, and the target is moved along the path one update at a time (set its location, update the
depsgraph), as dragging it in the viewport does:

- alone: nothing follows the target; the cost of the update itself;
- IK: an IK constraint on the tip bone (chain count = the chain, Use Tail) follows it;
- FABRIK: the add-on's live preview follows it (handlers re-solve, set the pose, Blender evaluates it).

Both are measured the same way, by Blender's evaluation after each update: the tip bone's tail against the
target. "Added" is the cost over the update alone; "solve" is the preview's own Python work per update
(``preview.follow``: read the chain, solve, write the pose), timed apart. Two more rows show what the
handlers cost when nothing needs solving: the preview on and another object moving, and the add-on
enabled with no preview on.

Run with the bpy module: ``.venv/bin/python scripts/bench_preview.py [--quick]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rigs
from bench_bake import free_chain

import fabrik_addon
from fabrik_addon.blender.live import preview
from fabrik_addon.blender.properties import settings_of
from fabrik_addon.solver import FloatArray

TOLERANCE = 1e-3


def scene(bones: int, steps: int) -> tuple[bpy.types.Object, bpy.types.Object, FloatArray]:
    """A fresh file with the chain and a still target, and the target's path: one location per update."""
    chain = free_chain(bones, steps)
    armature, target = chain.armature, chain.target
    path = rigs.world_location(target, range(1, steps + 1))
    target.animation_data_clear()
    bpy.context.scene.frame_set(1)
    return armature, target, path


def drag(armature: bpy.types.Object, mover: bpy.types.Object, path: FloatArray) -> tuple[float, FloatArray]:
    """Move ``mover`` along the path one depsgraph update at a time: seconds per update, and after each
    update the distance from the tip bone's tail to the target (settings' target, else ``mover``)."""
    layer = bpy.context.view_layer
    tip = armature.pose.bones[-1]
    chains = settings_of(armature).chains
    target = chains[0].target if len(chains) else mover
    errors = np.empty(len(path))
    seconds = 0.0
    for i, point in enumerate(path):
        start = time.perf_counter()
        mover.location = point
        layer.update()
        seconds += time.perf_counter() - start
        errors[i] = (armature.matrix_world @ tip.tail - target.matrix_world.translation).length
    return seconds / len(path), errors


def with_ik(bones: int, steps: int) -> tuple[float, FloatArray]:
    armature, target, path = scene(bones, steps)
    ik = armature.pose.bones[-1].constraints.new("IK")
    ik.target, ik.chain_count, ik.use_tail = target, bones, True
    return drag(armature, target, path[::-1])  # start away from the first pose: every update moves the target


def with_preview(
    bones: int, steps: int, setup: Callable[[bpy.types.Object, bpy.types.Object], None]
) -> tuple[float, FloatArray]:
    armature, target, path = scene(bones, steps)
    follow_with_fabrik(armature, target)
    setup(armature, target)
    return drag(armature, target, path[::-1])


def solve_only(bones: int, steps: int) -> float:
    """Seconds per ``preview.follow`` call, the preview's own work on each update that moves the target."""
    armature, target, path = scene(bones, steps)
    follow_with_fabrik(armature, target)
    seconds = 0.0
    for point in path[::-1]:
        target.location = point
        bpy.context.view_layer.update()
        start = time.perf_counter()
        preview.follow(armature, 1)
        seconds += time.perf_counter() - start
    return seconds / len(path)


def idle(bones: int, steps: int, live: bool) -> float:
    """Seconds per update moving another object, with the add-on enabled and the preview on or off."""
    armature, target, path = scene(bones, steps)
    follow_with_fabrik(armature, target)
    settings_of(armature).live_preview = live
    other = rigs.link(bpy.data.objects.new("Other", None))
    return drag(armature, other, path)[0]


def follow_with_fabrik(armature: bpy.types.Object, target: bpy.types.Object) -> None:
    """One chain in the armature's FABRIK settings: its last bone following ``target``."""
    settings = settings_of(armature)
    chain = settings.chains.add()
    chain.target, chain.tip_bone = target, armature.pose.bones[-1].name
    settings.tolerance = TOLERANCE


def _preview_off(armature: bpy.types.Object, target: bpy.types.Object) -> None:
    pass


def _preview_on(armature: bpy.types.Object, target: bpy.types.Object) -> None:
    settings_of(armature).live_preview = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer updates per chain")
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    steps = 60 if args.quick else 250
    print(f"Blender {bpy.app.version_string}; {steps} updates per run; ms per update; errors in scene units")
    print(
        f"{'bones':>5} | {'alone':>6} {'IK':>6} {'FABRIK':>7} | {'added: IK':>9} {'FABRIK':>7} {'ratio':>6} | "
        f"{'follow':>7} | {'on target: IK':>13} {'FABRIK':>7} | {'max error: IK':>13} {'FABRIK':>8}"
    )
    fabrik_addon.register()
    try:
        for bones in (4, 16, 64):
            alone, _ = with_preview(bones, steps, _preview_off)
            ik, ik_errors = with_ik(bones, steps)
            ours, our_errors = with_preview(bones, steps, _preview_on)
            follow = solve_only(bones, steps)
            print(
                f"{bones:>5} | {alone * 1e3:>6.3f} {ik * 1e3:>6.3f} {ours * 1e3:>7.3f} | "
                f"{(ik - alone) * 1e3:>9.3f} {(ours - alone) * 1e3:>7.3f} {(ours - alone) / (ik - alone):>5.1f}x | "
                f"{follow * 1e3:>7.3f} | "
                f"{np.mean(ik_errors <= TOLERANCE):>13.1%} {np.mean(our_errors <= TOLERANCE):>7.1%} | "
                f"{ik_errors.max():>13.2e} {our_errors.max():>8.2e}"
            )
            assert our_errors.max() <= TOLERANCE, f"the preview missed the target on {bones} bones"
        bones = 16
        alone, _ = with_preview(bones, steps, _preview_off)
        print(
            f"idle, {bones} bones, another object moving: {idle(bones, steps, live=True) * 1e3:.3f} ms per update with "
            f"the preview on, {idle(bones, steps, live=False) * 1e3:.3f} with it off, {alone * 1e3:.3f} alone"
        )
    finally:
        fabrik_addon.unregister()


if __name__ == "__main__":
    main()
