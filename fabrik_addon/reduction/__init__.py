"""Fewer keys, within a stated error, in numpy: which keys of a pose keyed on every frame to keep so that, as
Blender plays the kept keys (Bezier keys whose handles sit a third of the way to their neighbours, fitted to
the pose: ``curves``),
every measured point of every node (``pose``: a bone's head, tail and points off its axis) stays within the error
allowed of the pose on every frame (``choose``, weighing each keyed property's error by how far it moves the
points, ``actors``, and fitting only the segments a pass changes, ``spans``); and the report of what was kept
(``report``).

Imports nothing of Blender; positions are in scene units, frames are Blender's frame numbers.
"""

from .choose import Thinned, thin_keys
from .curves import fit, handles, keyed_curve, segments, slopes
from .pose import KINDS, ROTATION_MODES, Channels, Play, Skeleton, basis, bone_points, points_of, posed, turns
from .report import KeysReport, keys_report

__all__ = [
    "KINDS",
    "ROTATION_MODES",
    "Channels",
    "KeysReport",
    "Play",
    "Skeleton",
    "Thinned",
    "basis",
    "bone_points",
    "fit",
    "handles",
    "keyed_curve",
    "keys_report",
    "points_of",
    "posed",
    "segments",
    "slopes",
    "thin_keys",
    "turns",
]
