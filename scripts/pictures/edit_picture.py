"""The README's picture of editing through IK: a captured walk seen from the side, the left hand's path as
captured (orange) and after its target was moved up and forward for two seconds and the chain list baked as a
layer (green), with the whole skeleton drawn at the edit's middle frame both ways (grey: as captured; green:
edited); rendered by Blender (Workbench, flat colours) into ``demo/edit_layer.png``.

    .venv/bin/python scripts/pictures/edit_picture.py [--output PATH] [--quick]

The clip (the committed walk, CMU 131_01) is imported in metres; its four chains are the arms to the wrist and
the legs to the ball of the foot; targets are made from the animation (``api.targets_from_animation``), the
left hand's moved 15 cm forward and 20 cm up over frames 120-360, eased in and out over 40 frames, and the chain
list baked with ``output="layer"``. Prints how far the hand went from its capture, and how far every bone stays
from it outside the edit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import edit_scenes
import mocap
import rigs
from numpy.typing import NDArray
from plant_picture import colour, dots, label, path, render_from_above

from fabrik_addon import api
from fabrik_addon.blender import compat

OUTPUT = Path(__file__).resolve().parents[2] / "demo" / "edit_layer.png"
ORANGE, GREEN, GREY, RED, INK = (0.93, 0.45, 0.1), (0.1, 0.62, 0.25), (0.6, 0.6, 0.62), (0.85, 0.1, 0.1), (0.12,) * 3
#: The edit: frames moved, how many of them ease in and out, and how far the hand goes (forward, up; metres).
EDITED, EASE, MOVE = range(120, 361), 40, (0.15, 0.20)
FloatArray = NDArray[np.float64]


def _eased(frames: range) -> FloatArray:
    """The share of the move on each frame: 0 outside ``EDITED``, 1 inside, a smooth step over ``EASE`` frames at
    each end."""
    t = np.array(frames, dtype=float)
    rise = np.clip((t - EDITED.start) / EASE, 0.0, 1.0)
    fall = np.clip((EDITED.stop - 1 - t) / EASE, 0.0, 1.0)
    share = np.minimum(rise, fall)
    return np.asarray(share * share * (3 - 2 * share))


def _move_target(target: bpy.types.Object, frames: range, forward: FloatArray) -> None:
    """Move the target's location keys by the eased share of ``MOVE`` (forward along ``forward``, and up)."""
    offsets = _eased(frames)[:, None] * (MOVE[0] * forward + np.array([0.0, 0.0, MOVE[1]]))
    for fcurve in compat.assigned_fcurves(target):
        if fcurve.data_path == "location":
            for point in fcurve.keyframe_points:
                shift = offsets[int(point.co[0]) - frames.start, fcurve.array_index]
                point.co[1] += shift
                point.handle_left[1] += shift
                point.handle_right[1] += shift
            fcurve.update()


def _side(points: FloatArray, forward: FloatArray) -> FloatArray:
    """World points (..., 3) seen from the walker's left: forward to the right, up up."""
    return np.stack([points @ forward, points[..., 2]], axis=-1)


def _skeleton(armature: bpy.types.Object, frame: int) -> list[FloatArray]:
    """Every bone's head and tail (2, 3) on ``frame``, world space."""
    rigs.scene().frame_set(frame)
    world = armature.matrix_world
    pose = armature.pose
    assert pose is not None
    return [np.array([(world @ b.head).to_tuple(), (world @ b.tail).to_tuple()]) for b in pose.bones if b.length > 1e-6]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--quick", action="store_true", help="a small render (for tests)")
    args = parser.parse_args(argv)
    rigs.new_file(range(1, 2))
    api.armatures_with_chains()
    armature = edit_scenes.clip_with_chains("walk", scale=mocap.CMU_UNIT)
    frames = mocap.scene_frames()
    hand = mocap.arms(armature)["Left"].forearm
    hips = mocap.animated_positions(armature, "Hips", frames, "head")
    forward = np.array([*(hips[-1, :2] - hips[0, :2]), 0.0])
    forward /= np.linalg.norm(forward)
    bones = edit_scenes.chain_bones(armature)
    before = edit_scenes.bone_points(armature, bones, frames)
    captured = mocap.animated_positions(armature, hand, frames, "tail")
    middle = 200  # the edit in full, the walker mid-stride
    captured_pose = _skeleton(armature, middle)
    made = api.targets_from_animation(armature)
    _move_target(made.targets[hand], frames, forward)
    goals = rigs.world_location(made.targets[hand], frames)
    report = api.bake_chains(armature, output="layer")
    edited = mocap.animated_positions(armature, hand, frames, "tail")
    edited_pose = _skeleton(armature, middle)
    after = edit_scenes.bone_points(armature, bones, frames)
    untouched = [i for i, frame in enumerate(frames) if _eased(range(frame, frame + 1))[0] == 0.0]
    still = np.linalg.norm(after[untouched] - before[untouched], axis=-1).max() * 1000
    moved = np.linalg.norm(edited - captured, axis=-1).max() * 1000
    print(f"the hand went up to {moved:.0f} mm from its capture; elsewhere every bone within {still:.4f} mm of it")
    print(f"max error {report.max_error * 1000:.3f} mm on {len(report.chains)} chains")
    for mat in list(bpy.data.materials):
        bpy.data.materials.remove(mat)
    orange, green, grey, red, ink = (
        colour(n, c) for n, c in (("o", ORANGE), ("g", GREEN), ("y", GREY), ("r", RED), ("i", INK))
    )
    for obj in list(bpy.data.objects):
        obj.hide_render = True
    for k, (still_bone, moved_bone) in enumerate(zip(captured_pose, edited_pose, strict=True)):
        path(f"captured bone {k}", _side(still_bone, forward), 0.014, grey, z=0.0)
        if np.abs(moved_bone - still_bone).max() > 1e-4:  # the arm the edit moved
            path(f"edited bone {k}", _side(moved_bone, forward), 0.014, green, z=0.03)
    path("edited hand", _side(edited, forward), 0.01, green, z=0.01)
    path("captured hand", _side(captured, forward), 0.01, orange, z=0.02)  # over the green where they are one
    every = slice(EDITED.start - frames.start + EASE, EDITED.stop - frames.start - EASE, 8)
    dots("target", _side(goals, forward)[every], 0.016, red, z=0.04)
    flat = _side(np.concatenate([captured, edited, hips]), forward)
    left, right = flat[:, 0].min() - 0.1, flat[:, 0].max() + 0.1
    skeleton = _side(np.concatenate(captured_pose), forward)
    low, top = -0.05, max(flat[:, 1].max(), skeleton[:, 1].max()) + 0.4
    width = right - left
    label("A captured walk (CMU 131_01) from the side: the left hand's path", (left + width / 2, top - 0.12), 0.06, ink)
    label(
        "orange: as captured;  green, where it leaves it: its target moved 15 cm forward and 20 cm up for two "
        "seconds, baked as a layer",
        (left + width / 2, top - 0.22),
        0.05,
        ink,
    )
    label(
        f"red: the moved target (every 8th frame of the full move);  the skeleton at frame {middle}: grey as captured, "
        "its arm green as edited",
        (left + width / 2, top - 0.31),
        0.05,
        ink,
    )
    render_from_above(args.output, (left, right), (low, top), quick=args.quick)


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
