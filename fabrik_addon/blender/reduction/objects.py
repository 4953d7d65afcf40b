"""An object's keys thinned within an error: the location (and quaternion rotation) keys a writer held for an
object that hangs from nothing (an Empty made as a target), thinned so that its origin (and points off it, where
it turns) stays within the error of where the held keys put it, and measured by Blender's evaluation of the
F-curves written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import bpy
import numpy as np
from numpy.typing import NDArray

from ...reduction import Channels, KeysReport, Skeleton, basis, keys_report, points_of, posed, thin_keys
from ...solver import FloatArray
from ...words import SCENE_UNITS, Unit
from .. import compat
from ..rig import KeyWriter
from .bezier import write_kept
from .thinning import allowed

#: The properties of an object whose keys are thinned, by their data path: their kind and mode.
_THINNED = {"location": ("location", ""), "rotation_quaternion": ("rotation", "QUATERNION")}


def thin_object_keys(
    writers: Sequence[tuple[KeyWriter, float]], frames: NDArray[np.int64], key_error: float, unit: Unit = SCENE_UNITS
) -> KeysReport:
    """Thin the location and quaternion keys each writer holds for its object (and stop it holding), write them,
    and report them all as Blender evaluates their F-curves.

    Parameters
    ----------
    writers : sequence of (KeyWriter, float)
        Each holding (``KeyWriter.hold``) the keys of an object with no parent on every one of ``frames``, and
        how far off its origin its rotation's error is measured (world units: a fifth of it, as on a bone).
    frames : ndarray of int, shape (F,)
    key_error : float
        World units (> 0): how far the objects' origins, and the points off them where a rotation is keyed, may
        be from where the held keys put them.
    unit : (str, float)
        The unit the report shows lengths in (the scene's: ``KeysReport.length_unit``).
    """
    errors, keys, dense = [], 0, 0
    times = frames.astype(np.float64)
    for writer, reach in writers:
        held = {record.data_path: record for record in writer.release() if record.data_path in _THINNED}
        channels = [
            Channels(kind, record.values, mode, record.values, record.indices)
            for path, record in held.items()
            for kind, mode in [_THINNED[path]]
        ]
        off = 0.2 * reach if "rotation_quaternion" in held else 0.0
        local = np.array([[0.0, 0.0, 0.0], [off, 0.0, 0.0], [0.0, 0.0, off], [off, 0.0, off]])[: 4 if off else 1]
        skeleton = Skeleton((-1,), (np.eye(4),), (local,))
        reference = _points(skeleton, channels, [c.values for c in channels])
        thinned = thin_keys(times, skeleton, [channels], allowed(key_error, reference))
        for record, kept, controls in zip(held.values(), thinned.keys, thinned.controls, strict=True):
            write_kept(writer, record, frames, kept, controls)
            keys += len(kept) * len(record.indices)
            dense += record.values.size
        evaluated = [_evaluated(writer, path, len(record.indices), frames) for path, record in held.items()]
        errors.append(np.linalg.norm(_points(skeleton, channels, evaluated) - reference, axis=-1))
    return replace(keys_report(frames, np.concatenate(errors, axis=1), keys, dense, key_error), length_unit=unit)


def _points(skeleton: Skeleton, channels: list[Channels], values: list[FloatArray]) -> FloatArray:
    return points_of(skeleton, posed(skeleton, [basis(channels, values)]))


def _evaluated(writer: KeyWriter, data_path: str, width: int, frames: NDArray[np.int64]) -> FloatArray:
    """The values (F, width) Blender's evaluation of the written F-curves of ``data_path`` gives on ``frames``."""
    curves = {c.array_index: c for c in compat.slot_fcurves(writer.action, writer.slot) if c.data_path == data_path}
    values = np.empty((len(frames), width))
    for index in range(width):
        fcurve: bpy.types.FCurve = curves[index]
        values[:, index] = [fcurve.evaluate(float(frame)) for frame in frames.tolist()]
    return values
