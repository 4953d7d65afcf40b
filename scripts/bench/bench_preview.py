"""Benchmark: the live preview's cost against Blender's own IK constraint, side by side in one run.

Each case is built from a fresh file three times, the same way, and measured by Blender's own evaluation:

- alone: nothing follows the targets (the IK constraints muted, the preview off): the cost of the update itself;
- IK: Blender's IK constraints follow them;
- FABRIK: the add-on's live preview follows them (its handlers solve and pose the chains, Blender evaluates
  the pose).

Cases:

- the creature (``rigs.creature_rig``: two legs to foot bones with knee poles, a 32-bone tail toward an Empty,
  an arm to a bone of another, moving armature, its body keyed), playing 120 frames: ms per frame change;
- a 4-, 16- and 64-bone chain, its target (an Empty) dragged along a path one depsgraph update at a time, as
  dragging it in the viewport does: ms per update.

"Added" is the time over alone; the ratio is FABRIK's added time over IK's (the creature's rows compare whole
frame changes too). The preview's added time is split into its own parts, timed in a separate pass: reading the
pose and the goals (read), the solver (solve, ``Unit.solve``), setting and writing the pose (write), the rest of
its handler (other), and Blender's evaluation of the pose written (what is left of the added time). Every tip
is checked on every update: the preview's must be within the tolerance wherever its target is within reach
(every target here is). Last, what the handlers cost when nothing they read changes: the preview on and another
object moving, and the add-on enabled with no preview on.

Run with the bpy module: ``.venv/bin/python scripts/bench/bench_preview.py [--quick]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import rigs
from bench_bake import free_chain

import fabrik_addon
from fabrik_addon.blender.bake import Unit
from fabrik_addon.blender.live import preview
from fabrik_addon.blender.live import rig_plan as plans
from fabrik_addon.blender.live.pose_rows import PoseRows
from fabrik_addon.blender.properties import settings_of
from fabrik_addon.solver import FloatArray

TOLERANCE = 1e-3
CREATURE_FRAMES = range(1, 121)
#: How each case is run: without anything following, with Blender's IK constraints, with the preview.
SIDES = ("alone", "IK", "FABRIK")


@dataclass
class Case:
    """A scene to measure: its armature, its chains' tips and goals ((armature, tip bone), (object, bone)), and
    how to step it (one update or frame change per call of ``step``, ``steps`` of them)."""

    armature: bpy.types.Object
    tips: list[tuple[bpy.types.Object, str]]
    goals: list[tuple[bpy.types.Object, str]]
    step: Callable[[int], None]
    steps: int

    def errors(self) -> FloatArray:
        """Each tip's distance to its goal, as Blender evaluated them last."""
        found = []
        for (armature, tip), (goal, bone) in zip(self.tips, self.goals, strict=True):
            at = armature.matrix_world @ armature.pose.bones[tip].tail
            aim = goal.matrix_world @ goal.pose.bones[bone].head if bone else goal.matrix_world.translation
            found.append((at - aim).length)
        return np.array(found)


@dataclass
class Run:
    """One side's run of a case: seconds per step, and every tip's error after every step (steps, tips)."""

    seconds: float
    errors: FloatArray
    split: dict[str, float] = field(default_factory=dict)


def drag_case(bones: int, steps: int) -> Case:
    """A fresh file with a chain and a still target, and the target's path back from its last point, one
    location per update (the chain starts away from the first pose: every update moves the target)."""
    chain = free_chain(bones, steps)
    armature, target = chain.armature, chain.target
    path = rigs.world_location(target, range(1, steps + 1))[::-1]
    target.animation_data_clear()
    bpy.context.scene.frame_set(1)
    ik = armature.pose.bones[-1].constraints.new("IK")
    ik.target, ik.chain_count, ik.use_tail = target, bones, True
    layer = bpy.context.view_layer

    def step(i: int) -> None:
        target.location = path[i]
        layer.update()

    return Case(armature, [(armature, armature.pose.bones[-1].name)], [(target, "")], step, steps)


def creature_case(frames: range) -> Case:
    """A fresh file with the creature, its animation to play one frame change at a time."""
    rigs.new_file(frames)
    creature, _ = rigs.creature_rig(frames)
    constraints = [(pb, c) for pb in creature.pose.bones for c in pb.constraints if c.type == "IK"]
    scene = bpy.context.scene

    def step(i: int) -> None:
        scene.frame_set(frames[i])

    return Case(
        creature,
        [(creature, pb.name) for pb, _ in constraints],
        [(c.target, c.subtarget) for _, c in constraints],
        step,
        len(frames),
    )


def follow_with_fabrik(armature: bpy.types.Object) -> None:
    """The armature's IK constraints as chains of its FABRIK list (``rigs.ik_as_chains``: the same targets,
    poles, pole angles and chain lengths), the constraints muted, and the live preview on."""
    settings = settings_of(armature)
    settings.tolerance = TOLERANCE
    for values in rigs.ik_as_chains(armature):
        chain = settings.chains.add()
        for name, value in values.items():
            setattr(chain, name, value)
    settings.live_preview = True


def mute_ik(armature: bpy.types.Object) -> None:
    for pose_bone in armature.pose.bones:
        for ik in [c for c in pose_bone.constraints if c.type == "IK"]:
            ik.mute = True


def run(make: Callable[[], Case], side: str, split: bool = False) -> Run:
    """Build the case, set it up for ``side``, step through it once to warm up, then time a second pass (and
    with ``split``, time the preview's parts in a third)."""
    case = make()
    if side == "alone":
        mute_ik(case.armature)
    elif side == "FABRIK":
        follow_with_fabrik(case.armature)
    for i in range(case.steps):
        case.step(i)
    errors = np.empty((case.steps, len(case.tips)))
    seconds = 0.0
    for i in range(case.steps):
        start = time.perf_counter()
        case.step(i)
        seconds += time.perf_counter() - start
        errors[i] = case.errors()
    timed = Run(seconds / case.steps, errors)
    if split:
        with timing_split() as parts:
            for i in range(case.steps):
                case.step(i)
        timed.split = {name: spent / case.steps for name, spent in parts.items()}
    return timed


@contextmanager
def timing_split() -> Iterator[dict[str, float]]:
    """Seconds spent in the preview's parts while inside: its handler (``handler``), reading the pose and the
    goals (``read``), the solver (``solve``), setting and writing the pose (``write``)."""
    parts = dict.fromkeys(("handler", "read", "solve", "write"), 0.0)
    patched: list[tuple[Any, str, Any]] = []

    def timed(owner: Any, name: str, part: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                parts[part] += time.perf_counter() - start

        patched.append((owner, name, original))
        setattr(owner, name, wrapper)

    timed(preview, "_on_change", "handler")
    timed(PoseRows, "__init__", "read")
    for name in ("goals", "fingerprint", "inputs"):
        timed(plans.UnitPlan, name, "read")
    timed(Unit, "solve", "solve")
    timed(preview, "_set", "write")
    timed(PoseRows, "write", "write")
    try:
        yield parts
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)


def row(name: str, runs: dict[str, Run]) -> str:
    alone, ik, ours = (runs[side] for side in SIDES)
    added_ik, added_ours = ik.seconds - alone.seconds, ours.seconds - alone.seconds
    within = [float(np.mean(r.errors <= TOLERANCE)) for r in (ik, ours)]
    return (
        f"{name:<22} | {alone.seconds * 1e3:6.3f} {ik.seconds * 1e3:6.3f} {ours.seconds * 1e3:7.3f} | "
        f"{added_ik * 1e3:6.3f} {added_ours * 1e3:7.3f} {added_ours / added_ik:6.1f}x "
        f"{ours.seconds / ik.seconds:6.1f}x | "
        f"{within[0]:6.1%} {within[1]:7.1%} | {ik.errors.max():8.2e} {ours.errors.max():8.2e}"
    )


def split_row(name: str, runs: dict[str, Run]) -> str:
    parts = runs["FABRIK"].split
    added = runs["FABRIK"].seconds - runs["alone"].seconds
    other = parts["handler"] - parts["read"] - parts["solve"] - parts["write"]
    evaluation = added - parts["handler"]
    return (
        f"{name:<22} | {parts['read'] * 1e3:6.3f} {parts['solve'] * 1e3:7.3f} {parts['write'] * 1e3:6.3f} "
        f"{other * 1e3:6.3f} | {evaluation * 1e3:10.3f} | {added * 1e3:7.3f}"
    )


def idle(bones: int, steps: int, live: bool) -> float:
    """Seconds per update moving another object, with the add-on enabled and the preview on or off."""
    case = drag_case(bones, steps)
    mute_ik(case.armature)
    if live:
        follow_with_fabrik(case.armature)
    other = rigs.link(bpy.data.objects.new("Other", None))
    layer = bpy.context.view_layer
    start = time.perf_counter()
    for i in range(steps):
        other.location = (0.001 * i, 0.0, 0.0)
        layer.update()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer updates per chain")
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    steps = 60 if args.quick else 250
    frames = range(1, 61) if args.quick else CREATURE_FRAMES
    cases: dict[str, Callable[[], Case]] = {f"creature, {len(frames)} frames": lambda: creature_case(frames)}
    for bones in (4, 16, 64):
        cases[f"drag, {bones} bones"] = lambda bones=bones: drag_case(bones, steps)  # type: ignore[misc]
    print(f"Blender {bpy.app.version_string}; {steps} updates per drag; ms per frame change or update")
    print(
        f"{'case':<22} | {'alone':>6} {'IK':>6} {'FABRIK':>7} | {'added: IK':>6} {'FABRIK':>7} {'ratio':>7} "
        f"{'whole':>7} | {'on target: IK':>6} {'FABRIK':>7} | {'max error: IK':>8} {'FABRIK':>8}"
    )
    fabrik_addon.register()
    measured: dict[str, dict[str, Run]] = {}
    try:
        for name, make in cases.items():
            measured[name] = {side: run(make, side, split=side == "FABRIK") for side in SIDES}
            print(row(name, measured[name]))
            ours = measured[name]["FABRIK"].errors
            assert ours.max() <= TOLERANCE, f"the preview missed a target within reach: {name}, {ours.max():.2e}"
        print("\nWhere the preview's added time goes (ms per frame change or update):")
        print(f"{'case':<22} | {'read':>6} {'solve':>7} {'write':>6} {'other':>6} | Blender's eval | {'added':>7}")
        for name, runs in measured.items():
            print(split_row(name, runs))
        on, off = idle(16, steps, live=True), idle(16, steps, live=False)
        print(f"\nidle, 16 bones, another object moving: {on * 1e3:.3f} ms per update, preview on; {off * 1e3:.3f} off")
    finally:
        fabrik_addon.unregister()


if __name__ == "__main__":
    main()
