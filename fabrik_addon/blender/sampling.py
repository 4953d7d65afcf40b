"""Step through frames with Blender's own evaluation and read what the bake needs into arrays.

Everything the scene does is honoured because Blender evaluates it: animated armature objects, animated
parents of the chain, the target's parents, constraints and drivers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ..solver._validate import FloatArray
from ..solver.rotations import rotation_property
from . import compat
from .chain import ArmatureChain


@dataclass(frozen=True)
class Inputs:
    """What Blender evaluates on each baked frame, before the bake.

    Attributes
    ----------
    targets : ndarray, shape (F, 3)
        The target object's world location.
    root_frames : ndarray, shape (F, 4, 4)
        World matrix of the chain root's frame without its own rotation: where the chain hangs from.
    bone_bases : ndarray, shape (F, m, 4, 4) or (1, m, 4, 4)
        Each chain bone's ``matrix_basis`` (its own location, rotation and scale); one frame if the chain's
        bones are not animated.
    first_channels : list of ndarray, shape (4,) or (3,)
        Each chain bone's rotation values in its own rotation mode on the first frame: the keys written
        start next to them (same quaternion sign, Euler angles within half a turn).
    """

    targets: FloatArray
    root_frames: FloatArray
    bone_bases: FloatArray
    first_channels: list[FloatArray]


def sample_inputs(
    scene: bpy.types.Scene,
    frames: NDArray[np.int64],
    chain: ArmatureChain,
    target: bpy.types.Object,
    progress: Callable[[int], None] | None = None,
) -> Inputs:
    """Evaluate every frame and read the target, the chain's root frame and the chain's own pose."""
    armature = chain.armature
    pose_bones = chain.pose_bones
    root = pose_bones[0]
    animated = chain_is_animated(armature, chain.bone_names)
    count = len(frames)
    world = np.empty((count, 4, 4))
    root_pose = np.empty((count, 4, 4))
    root_basis = np.empty((count, 4, 4))
    targets = np.empty((count, 3))
    bases = np.empty((count if animated else 1, len(pose_bones), 4, 4))
    first_channels: list[FloatArray] = []
    for i, frame in enumerate(frames.tolist()):
        scene.frame_set(frame)
        world[i] = armature.matrix_world
        root_pose[i] = root.matrix
        root_basis[i] = root.matrix_basis
        targets[i] = target.matrix_world.translation
        if animated or i == 0:
            for k, pose_bone in enumerate(pose_bones):
                bases[i, k] = pose_bone.matrix_basis
        if i == 0:
            first_channels = [np.array(getattr(pb, rotation_property(pb.rotation_mode))) for pb in pose_bones]
        if progress is not None:
            progress(i)
    # The root's posed matrix is (its parents) @ T(location) @ R(rotation) @ S(scale): drop R (the bake
    # checks that S is 1, so R's inverse is its transpose).
    root_frames = world @ root_pose
    root_frames[:, :3, :3] = root_frames[:, :3, :3] @ np.swapaxes(root_basis[:, :3, :3], 1, 2)
    return Inputs(targets=targets, root_frames=root_frames, bone_bases=bases, first_channels=first_channels)


def sample_tips(
    scene: bpy.types.Scene,
    frames: NDArray[np.int64],
    chain: ArmatureChain,
    target: bpy.types.Object,
    progress: Callable[[int], None] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Evaluate every frame and read the world positions of the tip bone's tail and of the target.

    Returns
    -------
    tips, targets : ndarray, shape (F, 3)
    """
    armature = chain.armature
    tip = chain.pose_bones[-1]
    tips = np.empty((len(frames), 3))
    targets = np.empty((len(frames), 3))
    for i, frame in enumerate(frames.tolist()):
        scene.frame_set(frame)
        tips[i] = armature.matrix_world @ tip.tail
        targets[i] = target.matrix_world.translation
        if progress is not None:
            progress(i)
    return tips, targets


def chain_is_animated(armature: bpy.types.Object, bone_names: Sequence[str]) -> bool:
    """Whether anything animates the chain bones' own channels: F-curves, drivers or NLA strips."""
    anim = armature.animation_data
    if anim is None:
        return False
    if any(track.strips for track in anim.nla_tracks):
        return True
    prefixes = tuple(f'pose.bones["{bpy.utils.escape_identifier(name)}"].' for name in bone_names)
    curves = [*compat.assigned_fcurves(armature), *anim.drivers]
    return any(fcurve.data_path.startswith(prefixes) for fcurve in curves)
