"""Benchmark: api.bake against Blender's own IK constraint + Bake Action, side by side in one process.

Free chains: for each chain (4, 16, 48 and 64 bones) and length (250 and 1,000 frames), the same armature and
the same target path are baked twice from a fresh file: once with ``fabrik_addon.api.bake``, once with an IK
constraint (chain count = the chain, Use Tail) followed by
``bpy.ops.nla.bake(visual_keying=True, clear_constraints=True)``.

Limited chains, baked the same two ways with the same IK settings: Rigify's human leg and arm, the knee
(elbow) a hinge bending 0 to 150 degrees, with a pole target moving in front of it; and chains of 16 and 48
bones whose joints are cones (X and Z limited, Y locked). Besides time and error, the table shows how far
each result breaks a limit and, with a pole, how far apart the two put the knee.

Scene cost: what the rest of the shot costs each bake. A 16-bone chain in a heavy scene (a grid of 360 x 360
vertices skinned to the chain with Armature and Smooth modifiers, and a subdivided prop elsewhere), 200
frames, against the same chain without the meshes; a 16- and a 4-bone chain beside another rig under
Blender's IK constraint, 1,000 frames; and a 48-bone chain of 25-degree cones, 120 frames.

Rig level: a creature whose two legs (bone targets and poles), 32-bone tail and arm (toward a bone of another,
moving armature) are Blender's IK constraints, 250 frames: ``api.bake_ik_constraints`` against Blender's IK +
Bake Action of the same bones, per chain.

Trees: IK constraints whose chains share bones (a Y of a 4-bone trunk and two 6-bone branches, an arm with a
palm and five 3-bone fingers, a 60-bone tree of three levels with 9 tips), targets taken from poses the rig
itself takes so that every tip can reach at once, 120 frames: ``bake_ik_constraints`` (one tree) against
Blender's tree IK + Bake Action; the share of frames with every tip within the tolerance. Then the Y with every
joint a 25-degree cone and the hand with hinged fingers, the same IK limits on both sides, targets from poses
within them; the table also shows how far each result breaks a limit.

Motion capture (``bench_mocap.py``): the committed clips' legs toward their animated ankles (free, and with a
pole before each knee), the feet pinned during contacts, and legs, arms and spine retargeted to 80 % of their
lengths (and again with the thighs' twist locked), against Blender's IK + Bake Action into the current Action;
knees' distance from their animation, knee flips and frames on target.

Plant Feet (``bench_plant.py``): the committed clips' feet planted (hips lowered, and not), FABRIK's whole
``plant_feet`` against Blender's IK + Bake Action toward the same pins with the same hips.

Editing (``bench_edit.py``): Targets from Animation against the same targets made by hand (constrained Empties
and one Bake Action), and a layer bake of the chain list against an Action bake.

Both results are measured the same way, by Blender's own evaluation: step each frame and read the tip bone's
tail (and the keyed local rotations, the knee's head).

Run with the bpy module: ``.venv/bin/python scripts/bench/bench_bake.py [--quick]
[--section free|limited|scene|rig|trees|mocap|plant|edit] [--repeat N]``
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import bench_edit
import bench_mocap
import bench_plant
import rigs

from fabrik_addon import api
from fabrik_addon.blender import compat
from fabrik_addon.blender.rig import read_chain, read_limits
from fabrik_addon.solver import FloatArray, JointLimits

TOLERANCE = 1e-3


@dataclass(frozen=True)
class Setup:
    """A chain to bake in a fresh file: its armature, tip bone, length, target and pole, and its limits."""

    armature: bpy.types.Object
    tip_bone: str
    chain_length: int
    target: bpy.types.Object
    limits: JointLimits
    pole: bpy.types.Object | None = None
    pole_angle: float = 0.0

    @property
    def bones(self) -> list[bpy.types.PoseBone]:
        chain = read_chain(self.armature, self.tip_bone, self.chain_length)
        return chain.pose_bones


@dataclass(frozen=True)
class Result:
    """A bake's cost and what Blender's evaluation shows of it on every frame."""

    seconds: float
    errors: FloatArray  # (F,) tip to target
    excess: float  # the largest turn, in radians, by which a keyed rotation breaks its bone's limits
    knees: FloatArray  # (F, 3) the world head of the chain's last bone
    reach: float  # the chain's length


def chain_file(bones: int, span: range) -> bpy.types.Object:
    """A fresh file over the frames ``span`` with an armature "Chain": ``bones`` unit bones up +Z, each rolled."""
    rigs.new_file(span)
    armature, _ = rigs.make_chain(bones, name="Chain", rolls=[0.7 * i for i in range(bones)])
    return armature


def free_chain(bones: int, frames: int) -> Setup:
    """A chain of unit bones and a target sweeping most of its reach."""
    span = range(1, frames + 1)
    armature = chain_file(bones, span)
    target = rigs.keyed_empty("Target", rigs.reach_loop(bones, span))
    return Setup(armature, armature.pose.bones[-1].name, 0, target, JointLimits.free(bones))


def cone_chain(bones: int, cone_deg: float, frames: int) -> Setup:
    """A chain of unit bones whose joints each swing at most ``cone_deg`` about X and Z and never twist (the
    root too), and a target that keeps within what the cones let the tip reach."""
    span = range(1, frames + 1)
    armature = chain_file(bones, span)
    for pose_bone in armature.pose.bones:
        pose_bone.lock_ik_y = True
        pose_bone.use_ik_limit_x = pose_bone.use_ik_limit_z = True
        pose_bone.ik_min_x = pose_bone.ik_min_z = -math.radians(cone_deg)
        pose_bone.ik_max_x = pose_bone.ik_max_z = math.radians(cone_deg)
    path = rigs.loop_path(span, (0.0, 0.0, 0.6 * bones), (0.35 * bones, 0.3 * bones, 0.15 * bones))
    target = rigs.keyed_empty("Target", path)
    tip = armature.pose.bones[-1].name
    return Setup(armature, tip, 0, target, read_chain(armature, tip, 0).limits)


def heavy_scene(bones: int, frames: int, meshes: bool = True) -> Setup:
    """A free chain in a heavy shot: a 130k-vertex grid skinned to it and a subdivided prop elsewhere."""
    setup = free_chain(bones, frames)
    if meshes:
        rigs.skinned_grid(setup.armature, [pose_bone.name for pose_bone in setup.bones])
        rigs.subdivided_prop((bones * 1.5, 0.0, bones * 0.5))
    return _active(setup)


def beside_an_ik_rig(bones: int, frames: int) -> Setup:
    """A free chain beside another of the same length whose tip an IK constraint takes along its own path."""
    setup = free_chain(bones, frames)
    other, _ = rigs.make_chain(bones, name="Other")
    other.location.x = 1.5 * bones
    goal = rigs.keyed_empty("OtherTarget", rigs.reach_loop(bones, range(1, frames + 1)))
    goal.parent = other
    ik = other.pose.bones[-1].constraints.new("IK")
    assert isinstance(ik, bpy.types.KinematicConstraint)
    ik.target, ik.chain_count = goal, bones
    return _active(setup)


def _active(setup: Setup) -> Setup:
    """The setup with its armature the active, selected object (Bake Action acts on it)."""
    view_layer = bpy.context.view_layer
    for obj in view_layer.objects:
        obj.select_set(False)
    view_layer.objects.active = setup.armature
    setup.armature.select_set(True)
    return setup


def rigify_limb(limb: str, frames: int) -> Setup:
    """Rigify's human metarig; the limb's knee (elbow) a hinge about X from 0 to 150 degrees the way it
    bends; a target looping about a point 70 % of the way down the limb, so the joint bends; a pole looping
    in front of the joint (``rigs.limb_rig``, ``rigs.limb_paths``). Pole angle -90 degrees: the bend (the
    joint's Z axis) faces the pole."""
    span = range(1, frames + 1)
    rigs.new_file(span)
    armature, tip, _, _ = rigs.limb_rig(limb)
    target, pole = rigs.limb_paths(armature, limb, span)
    return Setup(armature, tip, 2, target, read_chain(armature, tip, 2).limits, pole, -math.pi / 2)


def evaluate(setup: Setup, seconds: float) -> Result:
    """Blender's evaluation on every frame: the tip bone's tail against the target, the chain's keyed local
    rotations against their limits, and the last bone's head."""
    scene = bpy.context.scene
    bones = setup.bones
    errors: list[float] = []
    knees: list[FloatArray] = []
    quats: list[list[FloatArray]] = []
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        world = setup.armature.matrix_world
        errors.append((world @ bones[-1].tail - setup.target.matrix_world.translation).length)
        knees.append(np.array(world @ bones[-1].head))
        quats.append([np.array(pb.matrix_basis.to_quaternion()) for pb in bones])
    excess = float(setup.limits.excess(np.array(quats)).max())
    reach = sum(pose_bone.bone.length for pose_bone in bones)
    return Result(seconds, np.array(errors), excess, np.array(knees), reach)


def fabrik(setup: Setup) -> tuple[Result, dict[str, float]]:
    start = time.perf_counter()
    report = api.bake(
        setup.armature,
        setup.target,
        tip_bone=setup.tip_bone,
        chain_length=setup.chain_length,
        tolerance=TOLERANCE,
        pole_target=setup.pole,
        pole_angle=setup.pole_angle,
    )
    result = evaluate(setup, time.perf_counter() - start)
    assert np.allclose(result.errors, report.error, atol=1e-9), "the report should say what Blender shows"
    return result, report.timings


def select_only(armature: bpy.types.Object, names: set[str]) -> None:
    """Pose Mode with exactly the bones ``names`` of ``armature`` selected: what Bake Action bakes."""
    bpy.ops.object.mode_set(mode="POSE")
    for pose_bone in armature.pose.bones:
        compat.set_bone_selected(armature, pose_bone.name, pose_bone.name in names)


def bake_action(first: int, last: int) -> None:
    """Blender's own bake of the selected bones, as an animator bakes an IK rig: visual keys, constraints
    cleared."""
    bpy.ops.nla.bake(
        frame_start=first,
        frame_end=last,
        only_selected=True,
        visual_keying=True,
        clear_constraints=True,
        bake_types={"POSE"},
    )


def native(setup: Setup) -> Result:
    bones = setup.bones
    ik = bones[-1].constraints.new("IK")
    assert isinstance(ik, bpy.types.KinematicConstraint)
    ik.target, ik.chain_count, ik.use_tail = setup.target, len(bones), True
    ik.pole_target, ik.pole_angle = setup.pole, setup.pole_angle
    select_only(setup.armature, {pose_bone.name for pose_bone in bones})
    scene = bpy.context.scene
    start = time.perf_counter()
    bake_action(scene.frame_start, scene.frame_end)
    seconds = time.perf_counter() - start
    bpy.ops.object.mode_set(mode="OBJECT")
    assert not bones[-1].constraints, "Bake Action should have removed the IK constraint"
    return evaluate(setup, seconds)


def side_by_side(build: Callable[[], Setup], repeat: int = 1) -> tuple[Result, Result, dict[str, float]]:
    """Bake the same chain both ways, each from a fresh file; with ``repeat``, that many times in turn, keeping
    each side's fastest bake (a machine shared with other work only ever adds time)."""
    ours: list[tuple[Result, dict[str, float]]] = []
    theirs: list[Result] = []
    for _ in range(repeat):
        ours.append(fabrik(build()))
        theirs.append(native(build()))
    best, timings = min(ours, key=lambda result: result[0].seconds)
    return best, min(theirs, key=lambda result: result.seconds), timings


def on_target(result: Result) -> float:
    return float(np.mean(result.errors <= TOLERANCE))


def free_table(frame_counts: tuple[int, ...]) -> None:
    print(
        f"{'bones':>5} {'frames':>6} | {'FABRIK':>7} {'native':>7} {'speed-up':>8} | "
        f"{'FABRIK max err':>14} {'native max err':>14} {'native on target':>16} | FABRIK time: read/solve/write/check"
    )
    for frames in frame_counts:
        for bones in (4, 16, 48, 64):
            ours, theirs, timings = side_by_side(partial(free_chain, bones, frames))
            split = bench_mocap.time_split(timings, frames)
            print(
                f"{bones:>5} {frames:>6} | {ours.seconds / frames * 1e3:>7.3f} {theirs.seconds / frames * 1e3:>7.3f} "
                f"{theirs.seconds / ours.seconds:>7.1f}x | {ours.errors.max():>14.2e} {theirs.errors.max():>14.2e} "
                f"{on_target(theirs):>16.1%} | {split}"
            )
            assert on_target(ours) >= 0.99, f"FABRIK off target on {bones} bones"


LIMITED: dict[str, Callable[[int], Setup]] = {
    "Rigify leg, hinge knee + pole": lambda frames: rigify_limb("leg", frames),
    "Rigify arm, hinge elbow + pole": lambda frames: rigify_limb("arm", frames),
    "16 bones, 30 deg cones": lambda frames: cone_chain(16, 30.0, frames),
    "48 bones, 15 deg cones": lambda frames: cone_chain(48, 15.0, frames),
}


def limited_table(frame_counts: tuple[int, ...]) -> None:
    print(
        f"{'chain':<31} {'frames':>6} | {'FABRIK':>7} {'native':>7} {'speed-up':>8} | {'max err F/N':>17} "
        f"{'on target F/N':>13} | {'limit broken F/N (deg)':>22} | {'knee gap':>8}"
    )
    for frames in frame_counts:
        for label, build in LIMITED.items():
            ours, theirs, _ = side_by_side(partial(build, frames))
            gap = np.linalg.norm(ours.knees - theirs.knees, axis=1).max() / ours.reach
            print(
                f"{label:<31} {frames:>6} | {ours.seconds / frames * 1e3:>7.3f} {theirs.seconds / frames * 1e3:>7.3f} "
                f"{theirs.seconds / ours.seconds:>7.1f}x | {ours.errors.max():>8.1e}/{theirs.errors.max():<8.1e} "
                f"{on_target(ours):>6.0%}/{on_target(theirs):<6.0%} | "
                f"{math.degrees(ours.excess):>10.1e}/{math.degrees(theirs.excess):<11.1e} | "
                + (f"{gap:>8.2%}" if "pole" in label else f"{'-':>8}")
            )


SCENE_COST: dict[str, tuple[Callable[[], Setup], int]] = {
    "16 bones, heavy scene": (partial(heavy_scene, 16, 200), 200),
    "16 bones, no meshes": (partial(heavy_scene, 16, 200, meshes=False), 200),
    "16 bones beside an IK rig": (partial(beside_an_ik_rig, 16, 1000), 1000),
    "4 bones beside an IK rig": (partial(beside_an_ik_rig, 4, 1000), 1000),
    "48 bones, 25 deg cones": (partial(cone_chain, 48, 25.0, 120), 120),
}


def scene_cost_table(repeat: int) -> None:
    print(
        f"{'chain and scene':<27} {'frames':>6} | {'FABRIK':>7} {'native':>7} {'speed-up':>8} | {'max err F/N':>17} "
        f"{'on target F/N':>13} | FABRIK time: read/solve/write/check | ceiling"
    )
    seconds: dict[str, float] = {}
    for label, (build, frames) in SCENE_COST.items():
        ours, theirs, timings = side_by_side(build, repeat)
        seconds[label] = ours.seconds
        split = bench_mocap.time_split(timings, frames)
        print(
            f"{label:<27} {frames:>6} | {ours.seconds / frames * 1e3:>7.3f} {theirs.seconds / frames * 1e3:>7.3f} "
            f"{theirs.seconds / ours.seconds:>7.1f}x | {ours.errors.max():>8.1e}/{theirs.errors.max():<8.1e} "
            f"{on_target(ours):>6.0%}/{on_target(theirs):<6.0%} | {split} | "
            f"{theirs.seconds / timings['check keys']:>6.1f}x"
        )
    print(
        "ceiling: the speed-up of a bake that did nothing but its check (Blender evaluating the written keys "
        "on every frame, which the report's errors are)"
    )
    heavy, light = seconds["16 bones, heavy scene"], seconds["16 bones, no meshes"]
    print(f"FABRIK in the heavy scene takes {heavy / light:.2f}x its time without the meshes")


def creature_table(frames: int) -> None:
    """The creature's four IK constraints: FABRIK in one bake, against Bake Action of their bones."""
    span = range(1, frames + 1)
    results = []
    for side in ("FABRIK", "native"):
        rigs.new_file(span)
        creature, _ = rigs.creature_rig(span)
        constraints = [c for pb in creature.pose.bones for c in pb.constraints if c.type == "IK"]
        tips = [pb for pb in creature.pose.bones for c in pb.constraints if c.type == "IK"]
        goals = [(c.target, c.subtarget) for c in constraints]  # read now: Bake Action removes the constraints
        bones = {b.name for pb, c in zip(tips, constraints, strict=True) for b in _chain_bones(pb, c.chain_count)}
        start = time.perf_counter()
        if side == "FABRIK":
            api.bake_ik_constraints(creature, tolerance=TOLERANCE)
        else:
            select_only(creature, bones)
            bake_action(1, frames)
            bpy.ops.object.mode_set(mode="OBJECT")
        seconds = time.perf_counter() - start
        errors = np.zeros((frames, len(tips)))
        scene = bpy.context.scene
        for i, frame in enumerate(span):
            scene.frame_set(frame)
            for k, (tip, (target, bone)) in enumerate(zip(tips, goals, strict=True)):
                goal = target.matrix_world @ target.pose.bones[bone].head if bone else target.matrix_world.translation
                errors[i, k] = (creature.matrix_world @ tip.tail - goal).length
        results.append((seconds, errors, [tip.name for tip in tips]))
    (ours, our_errors, names), (theirs, their_errors, _) = results
    print(
        f"creature, {frames} frames: FABRIK {ours / frames * 1e3:.3f} ms/frame, native {theirs / frames * 1e3:.3f}"
        f" ms/frame, {theirs / ours:.1f}x"
    )
    for k, name in enumerate(names):
        print(
            f"  {name:<10} max err F/N {our_errors[:, k].max():.1e}/{their_errors[:, k].max():.1e}  on target F/N "
            f"{np.mean(our_errors[:, k] <= TOLERANCE):.0%}/{np.mean(their_errors[:, k] <= TOLERANCE):.0%}"
        )


TREES: dict[str, Callable[[], tuple[bpy.types.Object, list[str], list[str]]]] = {
    "Y (16 bones, 2 tips)": rigs.y_rig,
    "hand (20 bones, 5 tips)": rigs.hand_rig,
    "tree (60 bones, 9 tips)": rigs.branching_rig,
    "Y of cones": rigs.limited_y,
    "hand, hinged fingers": rigs.limited_hand,
}


def tree_table(frames: int) -> None:
    """Trees of IK constraints: FABRIK's tree against Blender's tree IK, each baked from a fresh file."""
    span = range(1, frames + 1)
    print(
        f"{'tree':<24} | {'FABRIK':>7} {'native':>7} {'speed-up':>8} | every tip on target F/N | max err F/N | "
        "limit excess F/N"
    )
    for label, build in TREES.items():
        results = []
        for side in ("FABRIK", "native"):
            rigs.new_file(span)
            armature, tips, bones = build()
            limits = read_limits([armature.pose.bones[name] for name in bones])
            clamp = limits.clamp if limits.any else None
            targets = rigs.posed_targets(armature, tips, bones, span, clamp=clamp)
            for tip, target in zip(tips, targets, strict=True):
                ik = armature.pose.bones[tip].constraints.new("IK")
                assert isinstance(ik, bpy.types.KinematicConstraint)
                ik.target, ik.chain_count = target, 0
            _active(Setup(armature, tips[0], 0, targets[0], JointLimits.free(1)))
            start = time.perf_counter()
            if side == "FABRIK":
                api.bake_ik_constraints(armature, tolerance=TOLERANCE)
            else:
                select_only(armature, set(bones))
                bake_action(1, frames)
                bpy.ops.object.mode_set(mode="OBJECT")
            seconds = time.perf_counter() - start
            errors = np.empty((frames, len(tips)))
            quats = np.empty((frames, len(bones), 4))
            for i, frame in enumerate(span):
                bpy.context.scene.frame_set(frame)
                for k, (tip, target) in enumerate(zip(tips, targets, strict=True)):
                    tail = armature.matrix_world @ armature.pose.bones[tip].tail
                    errors[i, k] = (tail - target.matrix_world.translation).length
                quats[i] = [armature.pose.bones[name].matrix_basis.to_quaternion() for name in bones]
            results.append((seconds, errors, math.degrees(float(limits.excess(quats).max()))))
        (ours, our_errors, our_excess), (theirs, their_errors, their_excess) = results
        ours_on, theirs_on = (np.mean((e <= TOLERANCE).all(axis=1)) for e in (our_errors, their_errors))
        print(
            f"{label:<24} | {ours / frames * 1e3:>7.3f} {theirs / frames * 1e3:>7.3f} {theirs / ours:>7.1f}x | "
            f"{ours_on:>11.0%}/{theirs_on:<11.0%} | {our_errors.max():.1e}/{their_errors.max():.1e} | "
            f"{our_excess:.1e}/{their_excess:.1e} deg"
        )


def _chain_bones(tip: bpy.types.PoseBone, count: int) -> list[bpy.types.PoseBone]:
    bones: list[bpy.types.PoseBone] = []
    bone: bpy.types.PoseBone | None = tip
    while bone is not None and (count == 0 or len(bones) < count):
        bones.append(bone)
        bone = bone.parent
    return bones


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only 250 frames")
    parser.add_argument(
        "--repeat", type=int, default=1, help="scene cost: bake each row this many times, keep each side's fastest"
    )
    parser.add_argument(
        "--section",
        choices=["free", "limited", "scene", "rig", "trees", "mocap", "plant", "edit"],
        action="append",
        help="only these",
    )
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
    frame_counts = (250,) if args.quick else (250, 1000)
    sections = args.section or ["free", "limited", "scene", "rig", "trees", "mocap", "plant", "edit"]
    side_by_side(partial(free_chain, 4, 10))  # the first bake in a process pays for loading; not measured
    print(f"Blender {bpy.app.version_string}; tolerance {TOLERANCE}; times in ms per frame; errors in scene units")
    if "free" in sections:
        print("\nFree chains")
        free_table(frame_counts)
    if "limited" in sections:
        print("\nLimited chains (F: FABRIK, N: Blender's IK constraint); knee gap: largest, in % of the limb's length")
        limited_table(frame_counts)
    if "scene" in sections:
        print("\nScene cost (F: FABRIK, N: Blender's IK constraint)")
        scene_cost_table(args.repeat)
    if "rig" in sections:
        print("\nRig level (F: FABRIK's bake_ik_constraints, N: Blender's IK + Bake Action of the same bones)")
        creature_table(250)
    if "trees" in sections:
        print("\nTrees (F: FABRIK's tree, N: Blender's tree IK + Bake Action), 120 frames")
        tree_table(120)
    if "mocap" in sections:
        print("\nMotion capture (F: FABRIK, N: Blender's IK + Bake Action into the current Action; see bench_mocap.py)")
        bench_mocap.mocap_table(args.repeat)
    if "plant" in sections:
        print(
            "\nPlant Feet (F: FABRIK's plant_feet, N: Blender's IK + Bake Action toward its pins; see bench_plant.py)"
        )
        bench_plant.plant_table(args.repeat)
    if "edit" in sections:
        print("\nEditing through IK (targets from the animation, the bake as a layer; see bench_edit.py)")
        bench_edit.edit_table(args.repeat)


if __name__ == "__main__":
    main()
