"""The README's picture of fewer keys: one bone's rotation curve in the committed walk before Reduce Keys (a key on
every frame) and after (``api.reduce_keys`` at 1 mm: Bezier keys, the curve as Blender evaluates them), and below
it the largest distance of any point of any bone from where the captured keys put it on each frame, against the
1 mm allowed; rendered by Blender (Workbench, flat colours) into ``demo/key_reduction.png``.

    .venv/bin/python scripts/pictures/key_picture.py [--output PATH] [--quick]

The clip is imported in metres (``mocap.CMU_UNIT``). Prints the keys before and after and the largest error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import mocap
from plant_picture import GREEN, INK, ORANGE, FloatArray, colour, dots, label, path, render_from_above, walk_picture

from fabrik_addon import api
from fabrik_addon.blender import compat

OUTPUT = Path(__file__).resolve().parents[2] / "demo" / "key_reduction.png"
BONE, KEY_ERROR = "LeftHip", 1e-3
#: The plot's width, the curve's and the error's heights (scene units on the ground).
WIDTH, CURVE, ERRORS = 4.0, 1.2, 0.5


def curve(bone: str) -> bpy.types.FCurve:
    """The F-curve of the bone's rotation that turns most over the clip."""
    armature = bpy.data.objects["cmu_131_01_walk"]
    curves = [f for f in compat.assigned_fcurves(armature) if f.data_path.endswith(f'["{bone}"].rotation_euler')]
    return max(curves, key=lambda f: np.ptp([key.co[1] for key in f.keyframe_points]))


def main(argv: list[str]) -> None:
    args, armature = walk_picture(argv, __doc__, OUTPUT)
    frames = mocap.scene_frames()
    fcurve = curve(BONE)
    index, data_path = fcurve.array_index, fcurve.data_path
    before = np.array([key.co[:] for key in fcurve.keyframe_points])
    report = api.reduce_keys(armature, key_error=KEY_ERROR)
    fcurve = next(f for f in compat.assigned_fcurves(armature) if (f.data_path, f.array_index) == (data_path, index))
    kept = np.array([key.co[:] for key in fcurve.keyframe_points])
    fine = np.linspace(frames.start, frames.stop - 1, 8 * len(frames))
    after = np.array([fine, [fcurve.evaluate(frame) for frame in fine]]).T
    for mat in list(bpy.data.materials):
        bpy.data.materials.remove(mat)
    orange, green, ink = colour("before", ORANGE), colour("after", GREEN), colour("ink", INK)
    low, high = before[:, 1].min(), before[:, 1].max()

    def placed(points: FloatArray) -> FloatArray:
        x = (points[:, 0] - frames.start) / (frames.stop - 1 - frames.start) * WIDTH
        return np.column_stack([x, (points[:, 1] - low) / (high - low) * CURVE])

    path("before", placed(before), 0.012, orange)
    dots("before", placed(before), 0.009, orange)
    path("after", placed(after), 0.006, green)
    bpy.data.objects["after"].location.z = 0.003  # over the orange line
    dots("after", placed(kept), 0.022, green)
    axis = "XYZ"[index]
    label(
        f"{BONE} (the left thigh): its {axis} rotation, {np.degrees(high - low):.0f} degrees high, over the "
        f"{len(frames)} frames of a captured walk (CMU 131_01, 120 fps)",
        (WIDTH / 2, CURVE + 0.3),
        0.075,
        ink,
    )
    label(
        f"orange: {len(before)} keys, one on every frame;  green: {len(kept)} Bezier keys after Reduce Keys at 1 mm "
        f"({report.keys} of {report.dense_keys} keys of all 31 bones)",
        (WIDTH / 2, CURVE + 0.17),
        0.065,
        ink,
    )
    # The error: every bone's head, tail and points off its axis, as Blender evaluates the new keys.
    bottom = -0.35 - ERRORS
    scale = ERRORS / KEY_ERROR
    errors = np.column_stack([np.linspace(0.0, WIDTH, len(report.frame_errors)), bottom + report.frame_errors * scale])
    path("errors", errors, 0.01, ink)
    path("allowed", np.array([[0.0, bottom + ERRORS], [WIDTH, bottom + ERRORS]]), 0.004, orange)
    path("zero", np.array([[0.0, bottom], [WIDTH, bottom]]), 0.004, ink)
    label("1 mm allowed", (WIDTH + 0.05, bottom + ERRORS), 0.06, orange, align="LEFT")
    label("0", (WIDTH + 0.05, bottom), 0.06, ink, align="LEFT")
    label(
        f"the largest distance of any point of any bone from where the captured keys put it, frame by frame: at most "
        f"{report.max_error * 1000:.2f} mm (99th percentile {report.p99_error * 1000:.2f} mm)",
        (WIDTH / 2, bottom - 0.13),
        0.065,
        ink,
    )
    print(f"{BONE} {axis}: {len(before)} keys -> {len(kept)}; all bones {report.keys} of {report.dense_keys} keys")
    print(f"largest error {report.max_error * 1000:.3f} mm, 99th percentile {report.p99_error * 1000:.3f} mm")
    armature.hide_render = True
    centre, width = WIDTH / 2 + 0.15, WIDTH + 0.7
    render_from_above(
        args.output, (centre - width / 2, centre + width / 2), (bottom - 0.22, CURVE + 0.4), quick=args.quick
    )


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])
