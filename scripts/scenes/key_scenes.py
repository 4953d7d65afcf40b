"""Scenes and measures for key reduction (``key_error``, ``api.reduce_keys``), shared by the tests, the benchmark
(``bench_keys.py``) and the README's picture (``key_picture.py``): chains following an Empty keyed on a few frames
and eased between them, where Blender puts every bone's measured points on every frame, and Blender's own Graph
Editor Decimate run on an armature's F-curves, its error margin tuned until its error in the world is a given
distance.

Everything here drives Blender through ``bpy`` and nothing imports the add-on, as ``rigs``; positions are world
positions in scene units.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import bpy
import numpy as np
from bpy_extras import anim_utils
from numpy.typing import NDArray
from rigs import link, make_chain, new_file, scene

FloatArray = NDArray[np.float64]

#: Where the eased target is keyed, as fractions of the chain's length (x, y, z from the chain's root), and on
#: which frames of a 250-frame scene: a few keys, Bezier between them (Blender's default: eased, auto-clamped).
EASED_KEYS = (
    (1, (0.3, 0.1, 0.4)),
    (60, (-0.2, 0.3, 0.5)),
    (125, (0.1, -0.3, 0.3)),
    (190, (0.35, 0.25, 0.35)),
    (250, (0.3, 0.1, 0.4)),
)


def eased_empty(name: str, keys: Iterable[tuple[int, Sequence[float]]]) -> bpy.types.Object:
    """An Empty ``name`` keyed at each (frame, location) of ``keys``, with Blender's default (Bezier, eased)
    interpolation between them."""
    empty = link(bpy.data.objects.new(name, None))
    for frame, location in keys:
        empty.location = location
        empty.keyframe_insert("location", frame=frame)
    for fcurve in _fcurves(empty):
        for key in fcurve.keyframe_points:
            key.interpolation = "BEZIER"
    return empty


def eased_chain(
    bones: int, length: float = 1.0, frames: int = 250
) -> tuple[bpy.types.Object, list[str], bpy.types.Object]:
    """A fresh file: a chain of ``bones`` bones ``length`` long in all up +Z from the origin, and an Empty it
    follows keyed on a few frames (``EASED_KEYS``, in the chain's lengths, spread over ``frames``)."""
    new_file(range(1, frames + 1))
    armature, names = make_chain(bones, length=length / bones)
    scale = (frames - 1) / (EASED_KEYS[-1][0] - 1)
    keys = [(1 + round((frame - 1) * scale), tuple(length * c for c in place)) for frame, place in EASED_KEYS]
    return armature, names, eased_empty("Target", keys)


def bone_names(armature: bpy.types.Object) -> list[str]:
    """Every bone of the armature, by name."""
    data = armature.data
    assert isinstance(data, bpy.types.Armature)
    return [bone.name for bone in data.bones]


def bone_points(armature: bpy.types.Object, bones: Sequence[str], frames: Iterable[int]) -> FloatArray:
    """Where Blender puts each bone's measured points on each frame (F, bones, 5, 3): its head, its tail and
    points a fifth of its length off its axis along X, Z and both, in world space (``pose_bone.matrix``)."""
    pose = armature.pose
    assert pose is not None
    found = []
    for frame in frames:
        scene().frame_set(frame)
        world = np.array(armature.matrix_world)
        row = []
        for name in bones:
            bone = pose.bones[name]
            matrix = world @ np.array(bone.matrix)
            length = bone.bone.length
            off = 0.2 * length
            local = np.array([[0, 0, 0], [0, length, 0], [off, 0, 0], [0, 0, off], [off, 0, off]], dtype=float)
            row.append(local @ matrix[:3, :3].T + matrix[:3, 3])
        found.append(row)
    return np.array(found)


def _fcurves(obj: bpy.types.Object) -> list[bpy.types.FCurve]:
    """The F-curves of the object's active Action (through its slot, in 4.4 and later)."""
    animation = obj.animation_data
    if animation is None or animation.action is None:
        return []
    action: Any = animation.action
    slot = getattr(animation, "action_slot", None)
    if slot is None:
        return list(action.fcurves)
    bag: Any = anim_utils.action_get_channelbag_for_slot(action, slot)  # type: ignore[func-returns-value]
    return list(bag.fcurves) if bag is not None else []


def keys_in(obj: bpy.types.Object, first: float, last: float) -> int:
    """How many keys the object's F-curves have from frame ``first`` to ``last``."""
    count = 0
    for fcurve in _fcurves(obj):
        frames = np.array([key.co[0] for key in fcurve.keyframe_points])
        count += int(np.count_nonzero((frames >= first) & (frames <= last)))
    return count


def decimated(
    armature: bpy.types.Object,
    bones: Sequence[str],
    frames: Sequence[int],
    world_error: float,
    rounds: int = 12,
    only: Sequence[str] | None = None,
) -> tuple[int, float, float]:
    """Blender's Graph Editor Decimate (Allowed Change) on every F-curve of the armature (of the bones ``only``
    names, if given), its error margin tuned (a bisection, ``rounds`` of them) until the largest distance
    Blender's evaluation puts a point of ``bones`` from where the keys had it is at most ``world_error``: how many
    keys those F-curves keep, its error and the margin. The armature's keys are left as decimated with that
    margin."""
    curves = [c for c in _fcurves(armature) if only is None or _bone_of(c.data_path) in only]
    saved = [_keys_of(fcurve) for fcurve in curves]
    reference = bone_points(armature, bones, frames)

    def restore() -> None:
        for fcurve, keys in zip(curves, saved, strict=True):
            points = fcurve.keyframe_points
            points.clear()
            points.add(len(keys["co"]) // 2)
            for name, values in keys.items():
                points.foreach_set(name, values)
            fcurve.update()

    def run(margin: float) -> tuple[int, float]:
        restore()
        decimate(armature, margin, curves)
        error = float(np.linalg.norm(bone_points(armature, bones, frames) - reference, axis=-1).max())
        return sum(len(c.keyframe_points) for c in curves), error

    low, high = 1e-7, 1.0
    best = (sum(len(keys["co"]) // 2 for keys in saved), 0.0, 0.0)
    for _ in range(rounds):
        margin = float(np.sqrt(low * high))
        keys, error = run(margin)
        if error <= world_error:
            low, best = margin, (keys, error, margin) if keys <= best[0] else best
        else:
            high = margin
    run(best[2]) if best[2] else restore()
    return best


#: The keyframe properties a decimation changes, and their array types.
_SAVED = {
    "co": np.float32,
    "handle_left": np.float32,
    "handle_right": np.float32,
    "interpolation": np.int32,
    "handle_left_type": np.int32,
    "handle_right_type": np.int32,
}


def _keys_of(fcurve: bpy.types.FCurve) -> dict[str, NDArray[np.generic]]:
    points = fcurve.keyframe_points
    keys: dict[str, NDArray[np.generic]] = {}
    for name, kind in _SAVED.items():
        keys[name] = np.empty(len(points) * (2 if kind == np.float32 else 1), dtype=kind)
        points.foreach_get(name, keys[name])
    return keys


def _bone_of(data_path: str) -> str:
    return data_path.split('"')[1] if data_path.startswith('pose.bones["') else ""


def decimate(armature: bpy.types.Object, margin: float, curves: Sequence[bpy.types.FCurve] | None = None) -> None:
    """Blender's Graph Editor Decimate, Allowed Change ``margin``, on every F-curve of ``armature`` (or ``curves``:
    the others are hidden meanwhile), run headless in a Graph Editor area made of the screen's largest."""
    manager: Any = bpy.context.window_manager
    window = manager.windows[0] if manager.windows else None
    screen = window.screen if window is not None else bpy.data.screens[0]
    area = max(screen.areas, key=lambda area: area.width * area.height)
    kind = area.type
    area.type = "GRAPH_EDITOR"
    try:
        space: Any = area.spaces.active
        space.dopesheet.show_only_selected = False
        space.dopesheet.show_hidden = True
        region = next(region for region in area.regions if region.type == "WINDOW")
        chosen = _fcurves(armature) if curves is None else list(curves)
        for fcurve in _fcurves(armature):
            fcurve.select, fcurve.hide = fcurve in chosen, fcurve not in chosen
            for key in fcurve.keyframe_points:
                key.select_control_point = fcurve in chosen
        with bpy.context.temp_override(window=window, area=area, region=region):
            bpy.ops.graph.decimate(mode="ERROR", remove_error_margin=margin)
    finally:
        area.type = kind
        for fcurve in _fcurves(armature):
            fcurve.hide = False
