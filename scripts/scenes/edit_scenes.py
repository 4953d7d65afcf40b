"""Scenes for editing motion through IK, shared by the tests and the benchmark: a committed clip (``mocap``)
with a chain list of its arms and legs set up as the sidebar sets it (``clip_with_chains``), the points the
goals measure on every bone (``bone_points``: head, tail, and a point off its axis a fifth of its length along
its X and Z axes, world space), the by-hand route to targets made from the animation (``targets_by_hand``: an
Empty per target and pole with Copy Location / Copy Rotation or Child Of, one Bake Action of them all with
visual keying), and a hand target moved on some frames (``offset_keys``).

Needs the add-on registered (the chain list is its settings); nothing else of it is imported, so a test of the
installed extension could build its scene here too.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import bpy
import mocap
import numpy as np
from mathutils import Vector
from numpy.typing import NDArray
from rigs import scene

from fabrik_addon.blender import compat

FloatArray = NDArray[np.float64]


def clip_with_chains(
    clip: str | object,
    *,
    rotate_mode: mocap.RotateMode = "NATIVE",
    scale: float = 1.0,
    through_fbx: Path | None = None,
) -> bpy.types.Object:
    """The clip imported (``mocap.import_clip``; with ``through_fbx``, a folder, exported to FBX there and
    imported back as Mixamo users bring clips, ``mocap.import_through_fbx``) with a chain list of four chains, as
    an animator sets them up in the sidebar: each arm to the wrist (upper arm and forearm, 2 bones) and each leg
    to the ball of the foot (thigh, shin and foot, 3 bones). Returns the armature."""
    if through_fbx is not None:
        armature = mocap.import_through_fbx(clip, through_fbx)  # type: ignore[arg-type]
    else:
        armature = mocap.import_clip(clip, rotate_mode=rotate_mode, scale=scale)  # type: ignore[arg-type]
    arms, legs = mocap.arms(armature), mocap.legs(armature)
    for tip, length in ((arms["Left"].forearm, 2), (arms["Right"].forearm, 2)):
        add_chain(armature, tip, length)
    for tip in (legs["Left"].foot, legs["Right"].foot):
        add_chain(armature, tip, 3)
    return armature


def add_chain(armature: bpy.types.Object, tip: str, length: int) -> None:
    """A chain in the armature's list ending at ``tip``, ``length`` bones long."""
    chain = armature.fabrik.chains.add()  # type: ignore[attr-defined]
    chain.tip_bone, chain.chain_length = tip, length


def chain_bones(armature: bpy.types.Object) -> list[str]:
    """The bones of every enabled chain of the armature's list, each once."""
    names: set[str] = set()
    for chain in armature.fabrik.chains:  # type: ignore[attr-defined]
        if chain.enabled:
            bone = armature.data.bones[chain.tip_bone]
            names.update(b.name for b in [bone, *bone.parent_recursive][: chain.chain_length])
    return sorted(names)


def chain_lengths(armature: bpy.types.Object) -> dict[str, float]:
    """Each enabled chain's length (its bones' lengths, at rest, world units), by tip bone."""
    lengths = {}
    size = armature.matrix_world.to_scale()
    scale = max(size.x, size.y, size.z)
    for chain in armature.fabrik.chains:  # type: ignore[attr-defined]
        bone = armature.data.bones[chain.tip_bone]
        lengths[chain.tip_bone] = scale * sum(b.length for b in [bone, *bone.parent_recursive][: chain.chain_length])
    return lengths


def bone_points(armature: bpy.types.Object, bones: Sequence[str], frames: Iterable[int]) -> FloatArray:
    """Where Blender puts each bone's head, tail, and the points a fifth of its length along its X and Z axes on
    each frame, world space: shape (F, len(bones), 4, 3). Leaves the scene on the last frame."""
    points = []
    for frame in frames:
        scene().frame_set(frame)
        world = armature.matrix_world
        row: list[list[tuple[float, float, float]]] = []
        for name in bones:
            pose_bone = armature.pose.bones[name]
            matrix, length = world @ pose_bone.matrix, pose_bone.bone.length
            offsets = ((0, 0, 0), (0, length, 0), (length / 5, 0, 0), (0, 0, length / 5))
            row.append([(p.x, p.y, p.z) for p in (matrix @ Vector(offset) for offset in offsets)])
        points.append(row)
    return np.array(points)


def offset_keys(target: bpy.types.Object, frames: range, offset: Sequence[float]) -> None:
    """Move a target Empty by ``offset`` (world units) on ``frames``: its location keys there shifted, the others
    as they were, as an animator moving the hand for a stretch of the clip."""
    action = target.animation_data.action
    for fcurve in compat.assigned_fcurves(target):
        if fcurve.data_path != "location":
            continue
        for point in fcurve.keyframe_points:
            if frames.start <= point.co[0] < frames.stop:
                for attribute in ("co", "handle_left", "handle_right"):
                    getattr(point, attribute)[1] += offset[fcurve.array_index]
        fcurve.update()
    assert action is not None


def targets_by_hand(armature: bpy.types.Object, frames: range) -> float:
    """The route to targets made from the animation without the add-on, for each chain of the list: an Empty
    following its tip (Copy Location of the tip bone's tail, Copy Rotation of it) and a pole Empty following its
    root bone (Child Of, placed half the chain's length out along the root's Z axis, beside the bend), then one
    Bake Action of all the Empties with visual keying, constraints cleared. Returns the seconds it took, from
    the first Empty to the last key."""
    start = time.perf_counter()
    empties = []
    lengths = chain_lengths(armature)
    for chain in armature.fabrik.chains:  # type: ignore[attr-defined]
        target = bpy.data.objects.new(f"{chain.tip_bone} target (by hand)", None)
        scene().collection.objects.link(target)
        follow = target.constraints.new("COPY_LOCATION")
        assert isinstance(follow, bpy.types.CopyLocationConstraint)
        follow.target, follow.subtarget, follow.head_tail = armature, chain.tip_bone, 1.0
        turn = target.constraints.new("COPY_ROTATION")
        assert isinstance(turn, bpy.types.CopyRotationConstraint)
        turn.target, turn.subtarget = armature, chain.tip_bone
        pole = bpy.data.objects.new(f"{chain.tip_bone} pole (by hand)", None)
        scene().collection.objects.link(pole)
        bone = armature.data.bones[chain.tip_bone]
        root = [bone, *bone.parent_recursive][chain.chain_length - 1]
        pole.location = root.head_local + root.z_axis * lengths[chain.tip_bone] / 2
        child = pole.constraints.new("CHILD_OF")
        assert isinstance(child, bpy.types.ChildOfConstraint)
        child.target, child.subtarget = armature, root.name
        child.inverse_matrix = (armature.matrix_world @ root.matrix_local).inverted()
        empties += [target, pole]
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in empties)
    bpy.context.view_layer.objects.active = empties[0]
    bpy.ops.nla.bake(
        frame_start=frames.start,
        frame_end=frames.stop - 1,
        only_selected=True,
        visual_keying=True,
        clear_constraints=True,
        bake_types={"OBJECT"},
    )
    return time.perf_counter() - start
