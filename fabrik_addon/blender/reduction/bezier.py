"""Kept keys as Blender keyframes: Bezier keys whose handles play ``fabrik_addon.reduction.curves``' cubics, written
with a ``KeyWriter`` (``write_kept``)."""

from __future__ import annotations

from functools import cache
from typing import cast

import bpy
import numpy as np
from numpy.typing import NDArray

from ...reduction import handles
from ...solver import FloatArray
from ..rig import Held, Keys, KeyWriter


@cache
def _enum_values() -> tuple[int, int, int]:
    """The RNA values of a Free handle, an Aligned one and linear interpolation (looked up once)."""
    rna = bpy.types.Keyframe.bl_rna.properties
    handle = cast(bpy.types.EnumProperty, rna["handle_left_type"]).enum_items
    interpolation = cast(bpy.types.EnumProperty, rna["interpolation"]).enum_items
    return handle["FREE"].value, handle["ALIGNED"].value, interpolation["LINEAR"].value


def bezier_keys(
    frames: NDArray[np.int64],
    values: NDArray[np.float64],
    left: NDArray[np.float64],
    right: NDArray[np.float64],
    only: bool = False,
) -> Keys:
    """New Bezier keys on ``frames`` (K,), valued ``values`` (K,), with the handles ``left`` and ``right`` (K, 2:
    frame, value) set as they are (``reduction.handles`` makes them): Free handles, which Blender keeps where they
    are set (each segment's are fitted apart). The last key is linear, as a baked key is, for whatever follows
    it. With ``only``, just the properties that say so (the rest take Blender's defaults)."""
    free, _, linear = _enum_values()
    keys = Keys.baked(frames, values, ("co", "interpolation") if only else None, interpolation="BEZIER")
    keys.arrays["handle_left"] = np.asarray(left, dtype=np.float32)
    keys.arrays["handle_right"] = np.asarray(right, dtype=np.float32)
    for side in ("handle_left_type", "handle_right_type"):
        keys.arrays[side] = np.full(len(frames), free, dtype=np.int32)
    keys.arrays["interpolation"][-1] = linear
    return keys


def write_kept(
    writer: KeyWriter, held: Held, frames: NDArray[np.int64], kept: NDArray[np.int64], controls: FloatArray
) -> None:
    """Write the kept keys of held keys (their rows ``kept`` of ``frames``, each segment's ``controls``, (K - 1,
    2, k)) as Bezier keys, replacing the keys in the held keys' span."""
    values, keyed = held.values[kept], frames[kept]
    left, right = handles(keyed.astype(np.float64), values, controls)  # (K, 2, k) each: every channel at once
    for j, index in enumerate(held.indices):

        def made(only: tuple[str, ...] | None, j: int = j) -> Keys:
            return bezier_keys(keyed, values[:, j], left[:, :, j], right[:, :, j], only is not None)

        writer.replace_keys(held.data_path, index, held.group, held.frames, held.span, made)
