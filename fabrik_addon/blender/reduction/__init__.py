"""Fewer keys, within a stated error, on an armature: its keyed bones posed as Blender plays them for
``fabrik_addon.reduction`` (``model``), a bake's held keys thinned and written as Bezier keys (``thinning``), and
Blender's own evaluation of them measured (``measure``). The bake asks it which keys to keep, in one place
(``bake.run``); ``reduce_keys`` thins keys that exist with it.

Imports ``rig`` and the pure ``reduction``; the bake and ``reduce_keys`` import only the names below.
"""

from .measure import PoseTrack, measured_points, pose_tracks
from .model import BoneModel, BoneRows, Keyed, Plays, bone_model, row_matrices, tracked
from .objects import thin_object_keys
from .properties import CLASSES as KEYS_CLASSES
from .properties import FABRIK_PG_keys
from .thinning import Pins, Thinning, thin_held, tracked_bones

__all__ = [
    "KEYS_CLASSES",
    "BoneModel",
    "BoneRows",
    "FABRIK_PG_keys",
    "Keyed",
    "Pins",
    "Plays",
    "PoseTrack",
    "Thinning",
    "bone_model",
    "measured_points",
    "pose_tracks",
    "row_matrices",
    "thin_held",
    "thin_object_keys",
    "tracked",
    "tracked_bones",
]
