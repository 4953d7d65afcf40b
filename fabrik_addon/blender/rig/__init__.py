"""The armature as the add-on reads and writes it, whoever asks (a bake, the live preview, the operators): its
chains of bones (names, rest geometry, IK limits, which chains share bones, the chain a tip bone's limb
suggests: ``limb``), the channels of pose bones and what animates them, keys written in bulk and all or nothing,
snapshots of the pose, and what objects and bones follow (parents, constraints, drivers).

Imports ``bpy``, ``compat``, the solver's public names, ``setting_names.named`` (how a message names a setting)
and ``words.counted``; the other Blender packages import only the names below.
"""

from .chain import (
    ArmatureChain,
    armature_data,
    bone_path,
    chain_bone_names,
    groups_sharing,
    hang,
    object_kind,
    read_chain,
    read_limits,
    read_tree,
)
from .channels import (
    ROTATION_PATHS,
    animated_paths,
    bone_channels,
    chain_is_animated,
    keyed_channels,
    rotation_channels,
    rotation_property,
)
from .fcurve_checks import check_playing, check_unlocked, enum_name, nla_plays
from .keys import Held, Keys, KeyWriter, Values, keys_within, remove_keys
from .limb import Limb, limb
from .links import Node, bone_in_path, closure, path_to
from .pose_snapshot import PoseSnapshot

__all__ = [
    "ROTATION_PATHS",
    "ArmatureChain",
    "Held",
    "KeyWriter",
    "Keys",
    "Limb",
    "Node",
    "PoseSnapshot",
    "Values",
    "animated_paths",
    "armature_data",
    "bone_channels",
    "bone_in_path",
    "bone_path",
    "chain_bone_names",
    "chain_is_animated",
    "check_playing",
    "check_unlocked",
    "closure",
    "enum_name",
    "groups_sharing",
    "hang",
    "keyed_channels",
    "keys_within",
    "limb",
    "nla_plays",
    "object_kind",
    "path_to",
    "read_chain",
    "read_limits",
    "read_tree",
    "remove_keys",
    "rotation_channels",
    "rotation_property",
]
