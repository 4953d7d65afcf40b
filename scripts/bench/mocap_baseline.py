"""Baseline: what baking does to motion capture today, on the clips of ``tests/data`` (see ``mocap.py``).

The no-op bake: for each clip, leg and chain (thigh-shin toward the animated ankle, the shin's tail; and
thigh-shin-foot toward the animated ball of the foot, the foot's tail), an Empty keyed on every frame exactly
where the clip puts the chain's tip, then the same chain baked toward it twice, each from a fresh import: with
``fabrik_addon.api.bake`` and with Blender's IK constraint (Use Tail, chain count = the chain) followed by
``bpy.ops.nla.bake(visual_keying=True, clear_constraints=True, use_current_action=True)``. A bake toward where
the tip already is should change nothing: the table shows how far each moves the knee from its animated place
(max and mean over the frames), the tip's largest miss, the knee flips after it (the bend plane turning more
than 30 degrees in a frame while the knee is bent more than 10), and each bake's time per frame.

Then the spine chain of the CMU skeleton through the zero-length top of the chest, which the bake refuses (its
message), and the foot skate of the raw clip: per contact (the ball of the foot within 4 % of the leg's length
of the floor, moving slower than 0.3 leg lengths per second, for 0.1 s or more) how far the ball slides.

Lengths are shown in centimetres (each clip's units converted). Both results are read the same way, from
Blender's own evaluation of each frame. Nothing here changes the add-on.

Run with the bpy module: ``.venv/bin/python scripts/bench/mocap_baseline.py [--clip walk] [--side Left]``
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

import mocap
from mocap_scenes import bake_kept_action

from fabrik_addon import api

#: Centimetres per metre.
CM = 100.0


@dataclass(frozen=True)
class Setup:
    """A fresh import of a clip, one leg's chain and an Empty keyed on the tip's animated place, with where the
    clip puts the leg's hip, knee, ankle and the chain's tip on each frame (F, 4, 3)."""

    armature: bpy.types.Object
    leg: mocap.Leg
    tip: str
    length: int
    target: bpy.types.Object
    frames: range
    animated: mocap.FloatArray


def leg_joints(leg: mocap.Leg, tip: str) -> list[mocap.Joint]:
    """The hip, knee, ankle and the chain's tip (its tail)."""
    return [(leg.thigh, "head"), (leg.knee, "head"), (leg.shin, "tail"), (tip, "tail")]


@dataclass(frozen=True)
class Outcome:
    """What one bake did, in scene units: per frame the knee's distance from its animated place and the tip's
    from the target, the knee flips after it, and the bake's time."""

    knee: mocap.FloatArray
    miss: mocap.FloatArray
    flips: int
    seconds: float


def setup(clip: str, side: str, with_foot: bool) -> Setup:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature = mocap.import_clip(clip)
    leg = mocap.legs(armature)[side]
    tip, length = leg.chain(with_foot)
    frames = mocap.scene_frames()
    animated = mocap.animated_joints(armature, leg_joints(leg, tip), frames)
    target = mocap.keyed_targets({"Target": animated[:, 3]}, list(frames))["Target"]
    return Setup(armature, leg, tip, length, target, frames, animated)


def outcome(ready: Setup, seconds: float) -> Outcome:
    after = mocap.animated_joints(ready.armature, leg_joints(ready.leg, ready.tip), ready.frames)
    flips = mocap.knee_flips(after[:, 0], after[:, 1], after[:, 2])
    knee = mocap.drift(after[:, 1], ready.animated[:, 1])
    return Outcome(knee, mocap.drift(after[:, 3], ready.animated[:, 3]), len(flips), seconds)


def fabrik(ready: Setup) -> Outcome:
    start = time.perf_counter()
    api.bake(
        ready.armature,
        ready.target,
        tip_bone=ready.tip,
        chain_length=ready.length,
        frame_start=ready.frames.start,
        frame_end=ready.frames.stop - 1,
    )
    return outcome(ready, time.perf_counter() - start)


def native(ready: Setup) -> Outcome:
    """Blender's IK constraint on the chain, then Bake Action of its bones into the clip's own Action."""
    pose_bone = ready.armature.pose.bones[ready.tip]
    ik = pose_bone.constraints.new("IK")
    assert isinstance(ik, bpy.types.KinematicConstraint)
    ik.target, ik.chain_count, ik.use_tail = ready.target, ready.length, True
    chain = [pose_bone.name]
    while len(chain) < ready.length:
        parent = ready.armature.pose.bones[chain[-1]].parent
        assert parent is not None
        chain.append(parent.name)
    seconds = bake_kept_action(ready.armature, set(chain), ready.frames)
    assert not pose_bone.constraints, "Bake Action should have removed the IK constraint"
    return outcome(ready, seconds)


def no_op_table(clips: list[str], sides: list[str]) -> None:
    print(
        f"{'clip':<13} {'leg':<5} {'chain':<19} {'bake':<7} | {'knee max cm':>11} {'knee mean cm':>12} "
        f"{'tip miss cm':>11} {'flips':>5} {'animated flips':>14} | {'ms/frame':>8}"
    )
    for clip in clips:
        cm = mocap.CLIPS[clip].metres_per_unit * CM
        for side in sides:
            for with_foot in (False, True):
                for name, bake in (("FABRIK", fabrik), ("Blender", native)):
                    ready = setup(clip, side, with_foot)
                    raw = len(mocap.knee_flips(*ready.animated[:, :3].transpose(1, 0, 2)))
                    done = bake(ready)
                    chain = f"{ready.tip} ({ready.length} bones)"
                    print(
                        f"{clip:<13} {side:<5} {chain:<19} {name:<7} | {cm * done.knee.max():>11.3g} "
                        f"{cm * done.knee.mean():>12.3g} {cm * done.miss.max():>11.3g} {done.flips:>5} {raw:>14} | "
                        f"{1e3 * done.seconds / len(ready.frames):>8.2f}"
                    )


def spine_refusal(clip: str) -> None:
    """The bake of the spine from the lower back up to the neck, toward where the clip puts the head."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature = mocap.import_clip(clip)
    spine = mocap.spine(armature)
    tip, length = spine[-2], len(spine) - 2
    frames = mocap.scene_frames()
    head = mocap.animated_positions(armature, tip, frames, where="tail")
    target = mocap.keyed_targets({"Target": head}, list(frames))["Target"]
    try:
        api.bake(armature, target, tip_bone=tip, chain_length=length)
    except ValueError as refusal:
        print(f"{clip}: spine {' > '.join(spine[1:-1])} (tip {tip}, {length} bones) refused: {refusal}")
    else:
        print(f"{clip}: spine {' > '.join(spine[1:-1])} (tip {tip}, {length} bones) baked")


def skate_table(clips: list[str]) -> None:
    print(f"{'clip':<13} {'foot':<5} {'contacts':>8} {'skate mean cm':>13} {'skate max cm':>12} | per contact, cm")
    for clip in clips:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        armature = mocap.import_clip(clip)
        cm = mocap.CLIPS[clip].metres_per_unit * CM
        legs = list(mocap.legs(armature).values())
        balls = mocap.animated_joints(armature, [(leg.foot, "tail") for leg in legs], mocap.scene_frames())
        floor = mocap.floor_height(*balls.transpose(1, 0, 2))
        for i, leg in enumerate(legs):
            contacts = mocap.foot_contacts(
                balls[:, i], fps=mocap.scene_fps(), leg_length=mocap.leg_length(armature, leg), floor=floor
            )
            skates = cm * np.array([contact.skate for contact in contacts])
            each = " ".join(f"{s:.1f}" for s in skates)
            print(f"{clip:<13} {leg.side:<5} {len(contacts):>8} {skates.mean():>13.2f} {skates.max():>12.2f} | {each}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clip", action="append", choices=sorted(mocap.CLIPS), help="default: every clip")
    parser.add_argument("--side", action="append", choices=mocap.SIDES, help="default: both legs")
    args = parser.parse_args()
    clips = args.clip or list(mocap.CLIPS)
    print(f"Motion capture baseline with Blender {bpy.app.version_string}; lengths in cm")
    no_op_table(clips, args.side or list(mocap.SIDES))
    print()
    for clip in clips:
        spine_refusal(clip)
    print()
    skate_table(clips)


if __name__ == "__main__":
    main()
