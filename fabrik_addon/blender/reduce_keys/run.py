"""Reduce Keys: thin the keys an armature's bones have (motion capture, an older bake) within an error, all or
nothing. One walk reads where Blender poses the keyed bones on every frame of the range (and what each hangs
from); the keys are thinned as a bake's are (``reduction.thin_held``: every bone's head, tail and points off its
axis within the error of where it was), written as Bezier keys, and a second walk measures Blender's evaluation
of them (keying again where it finds a point out of bounds). Keys outside the range are left alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import bpy
import numpy as np

from ...reduction import KeysReport
from ...settings import FrameRange
from ..bake import current_scene, read_bones
from ..reduction import thin_held
from ..rig import KeyWriter, bone_path
from ..units import named_unit
from .checks import checked_error, keyed_curves

#: Shares of the progress bar: reading the pose, then checking the keys.
_READ_SHARE = 0.45
#: How many times the keys are measured again after keying where Blender put a point out of bounds.
_REPAIRS = 2


def reduce_keys(
    armature: bpy.types.Object,
    bones: Sequence[str] | None = None,
    *,
    key_error: float,
    frames: FrameRange | None = None,
    progress: Callable[[float], None] | None = None,
) -> KeysReport:
    """Thin the keys of ``bones`` (every keyed bone by default) of ``armature`` within ``key_error`` over
    ``frames`` (the scene's range by default); see the module.

    Raises
    ------
    TypeError, ValueError
        For bad input (see ``checks.keyed_curves``, ``checks.checked_error``), or a bone that something besides
        its keys moves; nothing is changed then.
    """
    error = checked_error(key_error)
    scene = current_scene()
    span = (frames or FrameRange()).resolved(scene.frame_start, scene.frame_end)
    first, last = span.start, span.stop - 1
    curves = keyed_curves(armature, bones, first, last)
    rows = np.arange(first, last + 1, dtype=np.int64)
    names = sorted(curves)
    read = dict(zip(names, read_bones(armature, names, rows.tolist(), _share(progress, 0.0)), strict=True))
    with KeyWriter(armature) as writer:
        writer.hold()
        for bone, by_prop in curves.items():
            for prop, by_index in by_prop.items():
                indices = sorted(by_index)
                values = np.array([[by_index[i].evaluate(float(f)) for i in indices] for f in rows.tolist()])
                writer.replace_channels(f"{bone_path(bone)}.{prop}", indices, bone, rows, values, (first, last))
        posed = {armature: {bone: track.world_matrices() for bone, track in read.items()}}
        thinning = thin_held({armature: writer}, rows, error, {armature: read}, posed=posed)
        for attempt in range(_REPAIRS + 1):
            walked = read_bones(armature, names, rows.tolist(), _share(progress, _READ_SHARE) if not attempt else None)
            thinning.read_from({armature: dict(zip(names, walked, strict=True))})
            if attempt == _REPAIRS or not thinning.repair():
                break
    if progress is not None:
        progress(1.0)
    return thinning.report(unit=named_unit(scene))


def _share(progress: Callable[[float], None] | None, after: float) -> Callable[[float], None] | None:
    """A walk's progress as its share (``_READ_SHARE``) of the whole, after ``after``."""
    return None if progress is None else (lambda fraction: progress(after + _READ_SHARE * fraction))
