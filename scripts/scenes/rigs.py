"""Rigs and scenes shared by the Blender tests, the benchmarks and the demo: a fresh file, generated chains,
Rigify's metarigs and their limbs, Empties keyed along closed paths, and where things are on each frame as
Blender evaluates them.

Everything here drives Blender through ``bpy`` and nothing imports the add-on, so the test of the installed
extension builds its scene with it too. Lengths are in scene units, angles in radians.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Callable, Iterable, Sequence

import bpy
import numpy as np
from bpy_extras import anim_utils
from mathutils import Euler, Vector
from numpy.typing import NDArray

Point = tuple[float, float, float]
#: Where an Empty is keyed: (frame, location) pairs.
Keys = list[tuple[int, Point]]


def scene() -> bpy.types.Scene:
    """The current scene."""
    current = bpy.context.scene
    assert current is not None
    return current


def new_file(frames: range) -> None:
    """A fresh empty file (Blender's factory settings) whose scene runs over ``frames``."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene().frame_start, scene().frame_end = frames.start, frames.stop - 1


def link(obj: bpy.types.Object) -> bpy.types.Object:
    """``obj``, put in the current scene."""
    scene().collection.objects.link(obj)
    return obj


def make_chain(
    bones: int,
    *,
    name: str = "Rig",
    length: float | Sequence[float] = 1.0,
    rolls: Sequence[float] | None = None,
    connected: bool = True,
    gap: Sequence[float] = (0.0, 0.0, 0.0),
    parent_bone: bool = False,
    bone_prefix: str = "bone",
) -> tuple[bpy.types.Object, list[str]]:
    """An armature ``name`` (object and data) with a chain of ``bones`` bones up +Z from its origin, named
    "<bone_prefix>.000", "<bone_prefix>.001"...; returns it (active, the only object selected, in Object
    Mode) and the chain's bone names.

    Parameters
    ----------
    length : float or sequence of float, shape (bones,)
        Each bone's length: one for all, or one per bone.
    rolls : sequence of float, shape (bones,), optional
        Each bone's roll in radians; by default a different one per bone (0.7 i - 1).
    connected : bool
        Each bone starts at its parent's tail; when False, ``gap`` (x, y, z) beyond it.
    parent_bone : bool
        The chain hangs from an extra bone "parent" one unit long below the origin (not among the names
        returned).
    """
    data = bpy.data.armatures.new(name)
    obj = link(bpy.data.objects.new(name, data))
    lengths = [length] * bones if isinstance(length, (int, float)) else list(length)
    rolls = [0.7 * i - 1.0 for i in range(bones)] if rolls is None else list(rolls)
    _edit(obj)
    # The joints are summed in double precision and rounded once, as Blender stores them in single precision.
    head: Point = (0.0, 0.0, 0.0)
    parent = None
    if parent_bone:
        parent = data.edit_bones.new("parent")
        parent.head, parent.tail = Vector((0.0, 0.0, -1.0)), Vector(head)
    names = []
    for i in range(bones):
        bone = data.edit_bones.new(f"{bone_prefix}.{i:03d}")
        if i > 0 and not connected:
            head = (head[0] + gap[0], head[1] + gap[1], head[2] + gap[2])
        tail = (head[0], head[1], head[2] + lengths[i])
        bone.head, bone.tail = Vector(head), Vector(tail)
        bone.roll = rolls[i]
        if parent is not None:
            bone.parent = parent
            bone.use_connect = connected and (i > 0 or parent_bone)
        head = tail
        parent = bone
        names.append(bone.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj, names


def _edit(obj: bpy.types.Object) -> None:
    """Edit Mode on ``obj`` alone (Edit Mode takes in every selected armature)."""
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")


def rigify_metarig(kind: str = "human") -> bpy.types.Object:
    """One of Rigify's metarigs (Rigify ships with Blender, the bpy module too): human, basic_human, cat, wolf,
    horse, bird, shark...; Rigify is enabled first."""
    with contextlib.redirect_stdout(io.StringIO()):  # Rigify's "Reloading external rigs..."
        bpy.ops.preferences.addon_enable(module="rigify")
    getattr(bpy.ops.object, f"armature_{kind}_metarig_add")()
    obj = bpy.context.object
    assert obj is not None
    assert obj.type == "ARMATURE"
    return obj


def hinge(pose_bone: bpy.types.PoseBone, low: float, high: float) -> None:
    """Make ``pose_bone`` a hinge for IK: it turns about its X axis only, from ``low`` to ``high`` radians."""
    pose_bone.lock_ik_y = pose_bone.lock_ik_z = True
    pose_bone.use_ik_limit_x = True
    pose_bone.ik_min_x, pose_bone.ik_max_x = low, high


#: Rigify's human limbs: (tip bone, its parent, the world direction the joint bends its tip toward: a knee
#: back, an elbow forward).
LIMBS = {"leg": ("shin.L", "thigh.L", (0.0, 1.0, 0.0)), "arm": ("forearm.R", "upper_arm.R", (0.0, -1.0, 0.0))}


def limb_rig(limb: str) -> tuple[bpy.types.Object, str, str, tuple[float, float]]:
    """Rigify's human metarig whose knee (``limb`` "leg") or elbow ("arm") is a hinge about X bending 0 to 150
    degrees the natural way. Returns the rig, the tip and root bone names, and the hinge's range in radians."""
    armature = rigify_metarig("human")
    bpy.ops.object.mode_set(mode="OBJECT")
    tip, root, bend = LIMBS[limb]
    # A turn about X by a positive angle moves the bone's tail toward its own Z axis.
    z_axis = np.array(armature.data.bones[tip].matrix_local.col[2][:3])
    sign = 1.0 if np.dot(z_axis, bend) > 0 else -1.0
    low, high = sorted((0.0, sign * math.radians(150)))
    hinge(armature.pose.bones[tip], low, high)
    return armature, tip, root, (low, high)


def limb_paths(armature: bpy.types.Object, limb: str, frames: range) -> tuple[bpy.types.Object, bpy.types.Object]:
    """A target "Target" moving near the limb's rest tip, pulled in so the joint bends, and a pole "Pole" moving
    in front of the joint on the side it bends away from, keyed on ``frames``."""
    tip, root, bend = LIMBS[limb]
    bones = armature.data.bones
    hip = np.array(armature.matrix_world @ bones[root].head_local)
    joint = np.array(armature.matrix_world @ bones[tip].head_local)
    end = np.array(armature.matrix_world @ bones[tip].tail_local)
    length = bones[root].length + bones[tip].length
    center = hip + 0.7 * (end - hip) + 0.1 * length * np.array(bend)
    target = keyed_empty("Target", loop_path(frames, tuple(center), (0.12 * length, 0.1 * length, 0.1 * length)))
    pole_center = joint - 0.6 * length * np.array(bend)
    pole = keyed_empty("Pole", loop_path(frames, tuple(pole_center), (0.3 * length, 0.05 * length, 0.1 * length)))
    return target, pole


def keyed_empty(name: str, keys: Iterable[tuple[int, Sequence[float]]]) -> bpy.types.Object:
    """An Empty ``name`` keyed at each (frame, location) of ``keys``, linearly interpolated."""
    bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"
    empty = link(bpy.data.objects.new(name, None))
    for frame, location in keys:
        empty.location = location
        empty.keyframe_insert("location", frame=frame)
    # keyframe_insert from Python keys Bezier whatever the preference says; 4.2 keeps F-curves on the Action.
    animation, slot = empty.animation_data, getattr(empty.animation_data, "action_slot", None)
    if animation is not None:
        bag = animation.action if slot is None else anim_utils.action_get_channelbag_for_slot(animation.action, slot)  # type: ignore[func-returns-value]
        for fcurve in bag.fcurves:
            for key in fcurve.keyframe_points:
                key.interpolation = "LINEAR"
    return empty


def loop_path(
    frames: range, center: Sequence[float], radius: Sequence[float], frequencies: tuple[int, int, int] = (2, 3, 1)
) -> Keys:
    """A smooth closed path (a Lissajous figure) through ``frames``, a point per frame: about ``center``, as far
    as ``radius`` (x, y, z) from it, x and z a sine and y a cosine going round ``frequencies`` times."""
    points: Keys = []
    for frame in frames:
        t = 2 * math.pi * (frame - frames.start) / len(frames)
        points.append(
            (
                frame,
                (
                    center[0] + radius[0] * math.sin(frequencies[0] * t),
                    center[1] + radius[1] * math.cos(frequencies[1] * t),
                    center[2] + radius[2] * math.sin(frequencies[2] * t),
                ),
            )
        )
    return points


def reach_loop(reach: float, frames: range) -> Keys:
    """A closed path over ``frames`` sweeping most of what a chain ``reach`` long standing up +Z from the origin
    can reach, and never out of it."""
    return loop_path(frames, (0.0, 0.0, 0.35 * reach), (0.5 * reach, 0.4 * reach, 0.25 * reach))


def world_location(obj: bpy.types.Object, frames: Iterable[int]) -> NDArray[np.float64]:
    """Where Blender puts ``obj`` on each of ``frames``, shape (F, 3); leaves the scene on the last frame."""
    points: list[tuple[float, ...]] = []
    for frame in frames:
        scene().frame_set(frame)
        points.append(obj.matrix_world.translation.to_tuple())
    return np.array(points)


def tip_errors(
    armature: bpy.types.Object, tip_bone: str, target: bpy.types.Object, frames: Iterable[int]
) -> NDArray[np.float64]:
    """As Blender evaluates each of ``frames``: the distance from ``tip_bone``'s tail to ``target``, shape (F,)."""
    errors = []
    tip = armature.pose.bones[tip_bone]
    for frame in frames:
        scene().frame_set(frame)
        errors.append((armature.matrix_world @ tip.tail - target.matrix_world.translation).length)
    return np.array(errors)


def skinned_grid(armature: bpy.types.Object, bone_names: Sequence[str], side: int = 360) -> bpy.types.Object:
    """A heavy mesh skinned to a chain standing up +Z: a grid of ``side`` x ``side`` vertices in the XZ plane
    along the chain, each vertex weighted fully to the bone whose height span holds it, with an Armature and a
    Smooth modifier (what a character's body costs Blender to evaluate on every frame)."""
    bones = armature.data.bones
    spans = [(bones[name].head_local.z, bones[name].tail_local.z) for name in bone_names]
    low, high = spans[0][0], spans[-1][1]
    x, z = np.meshgrid(np.linspace(-0.5, 0.5, side), np.linspace(low, high, side))
    points = np.column_stack([x.ravel(), np.zeros(x.size), z.ravel()])
    cells = np.arange(side * side).reshape(side, side)
    quads = np.column_stack(
        [cells[:-1, :-1].ravel(), cells[:-1, 1:].ravel(), cells[1:, 1:].ravel(), cells[1:, :-1].ravel()]
    )
    mesh = bpy.data.meshes.new("Skin")
    mesh.from_pydata(points.tolist(), [], quads.tolist())
    skin = link(bpy.data.objects.new("Skin", mesh))
    skin.parent = armature
    heights = points[:, 2]
    for name, (bottom, top) in zip(bone_names, spans, strict=True):
        inside = np.flatnonzero((heights >= bottom) & (heights <= top))
        skin.vertex_groups.new(name=name).add(inside.tolist(), 1.0, "REPLACE")
    deform = skin.modifiers.new("Armature", "ARMATURE")
    deform.object = armature  # type: ignore[attr-defined]
    skin.modifiers.new("Smooth", "SMOOTH")
    return skin


def subdivided_prop(location: Point, levels: int = 2) -> bpy.types.Object:
    """A second heavy object elsewhere in the scene: an icosphere of 20,480 faces under a Subdivision
    modifier of ``levels`` levels."""
    import bmesh

    mesh = bpy.data.meshes.new("Prop")
    shape = bmesh.new()
    bmesh.ops.create_icosphere(shape, subdivisions=5, radius=1.0)
    shape.to_mesh(mesh)
    shape.free()
    prop = link(bpy.data.objects.new("Prop", mesh))
    prop.location = location
    subdivision = prop.modifiers.new("Subdivision", "SUBSURF")
    subdivision.levels = levels  # type: ignore[attr-defined]
    return prop


#: The creature's IK chains: (tip bone, IK chain count).
CREATURE_CHAINS = {"legs": (("shin.L", 2), ("shin.R", 2)), "tail": (("tail.031", 32),), "arm": (("arm.001", 2),)}


def creature_rig(frames: range) -> tuple[bpy.types.Object, bpy.types.Object]:
    """A creature whose four limbs are solved by Blender's IK constraints: two legs aiming at foot control
    bones with knee pole bones (all in its own armature), a 32-bone tail toward an Empty, and an arm toward a
    bone of another armature that moves. The body (the legs', tail's and arm's parent) is keyed to sway, the
    foot controls to step, all within reach. Returns the creature and the other armature."""
    creature = link(bpy.data.objects.new("Creature", bpy.data.armatures.new("Creature")))
    _edit(creature)
    edit = creature.data.edit_bones

    def bone(name: str, head: Point, tail: Point, parent: str = "", connect: bool = False) -> None:
        made = edit.new(name)
        made.head, made.tail = Vector(head), Vector(tail)
        if parent:
            made.parent, made.use_connect = edit[parent], connect

    bone("body", (0.0, 0.0, 1.2), (0.0, 0.6, 1.2))
    for side, x in (("L", 0.3), ("R", -0.3)):
        bone(f"thigh.{side}", (x, 0.0, 1.2), (x, -0.06, 0.65), "body")
        bone(f"shin.{side}", (x, -0.06, 0.65), (x, 0.0, 0.1), f"thigh.{side}", connect=True)
        bone(f"foot_ik.{side}", (x, 0.0, 0.22), (x, -0.15, 0.22))
        bone(f"knee_pole.{side}", (x, -0.9, 0.65), (x, -1.0, 0.65))
    for i in range(32):
        y = 0.6 + 0.06 * i
        bone(f"tail.{i:03d}", (0.0, y, 1.2), (0.0, y + 0.06, 1.2), "body" if i == 0 else f"tail.{i - 1:03d}", i > 0)
    bone("arm.000", (0.0, -0.3, 1.3), (0.0, -0.6, 1.35), "body")
    bone("arm.001", (0.0, -0.6, 1.35), (0.0, -0.9, 1.3), "arm.000", connect=True)
    bpy.ops.object.mode_set(mode="OBJECT")
    pose = creature.pose
    assert pose is not None
    for frame in frames:
        t = 2 * math.pi * (frame - frames.start) / len(frames)
        pose.bones["body"].location = (0.0, 0.0, 0.03 * math.sin(2 * t))
        pose.bones["body"].keyframe_insert("location", frame=frame)
        for side, phase in (("L", 0.0), ("R", math.pi)):
            foot = pose.bones[f"foot_ik.{side}"]
            foot.location = (0.0, 0.18 * math.sin(t + phase), 0.08 * max(0.0, math.cos(t + phase)))
            foot.keyframe_insert("location", frame=frame)
    tail_target = keyed_empty("TailTarget", loop_path(frames, (0.0, 2.0, 1.7), (0.4, 0.3, 0.3)))
    prop, _ = make_chain(1, name="Prop", length=0.3)
    _edit(prop)
    handle = prop.data.edit_bones.new("handle")
    handle.head, handle.tail = Vector((0.0, 0.0, 0.3)), Vector((0.0, 0.0, 0.4))
    handle.parent = prop.data.edit_bones["bone.000"]
    bpy.ops.object.mode_set(mode="OBJECT")
    for frame, location in loop_path(frames, (0.0, -0.75, 1.0), (0.15, 0.1, 0.1)):
        prop.location = location
        prop.keyframe_insert("location", frame=frame)
    for (tip, count), (target, bone_name, pole) in zip(
        [*CREATURE_CHAINS["legs"], *CREATURE_CHAINS["tail"], *CREATURE_CHAINS["arm"]],
        [
            (creature, "foot_ik.L", "knee_pole.L"),
            (creature, "foot_ik.R", "knee_pole.R"),
            (tail_target, "", ""),
            (prop, "handle", ""),
        ],
        strict=True,
    ):
        ik = pose.bones[tip].constraints.new("IK")
        assert isinstance(ik, bpy.types.KinematicConstraint)
        ik.target, ik.subtarget, ik.chain_count = target, bone_name, count
        if pole:
            ik.pole_target, ik.pole_subtarget, ik.pole_angle = creature, pole, -math.pi / 2
    bpy.context.view_layer.objects.active = creature
    return creature, prop


def ik_as_chains(armature: bpy.types.Object) -> list[dict[str, object]]:
    """The armature's IK constraints as chains of the add-on's list would hold them (the keywords of a chain:
    its tip bone, chain length, target and pole with their bones, pole angle), each constraint muted."""
    chains: list[dict[str, object]] = []
    pose = armature.pose
    assert pose is not None
    for pose_bone in pose.bones:
        for ik in [c for c in pose_bone.constraints if isinstance(c, bpy.types.KinematicConstraint)]:
            chains.append(
                {
                    "tip_bone": pose_bone.name,
                    "chain_length": ik.chain_count,
                    "target": ik.target,
                    "target_bone": ik.subtarget,
                    "pole_target": ik.pole_target,
                    "pole_bone": ik.pole_subtarget,
                    "pole_angle": ik.pole_angle,
                }
            )
            ik.mute = True
    return chains


def y_rig(trunk: int = 4, branch: int = 6, name: str = "Y") -> tuple[bpy.types.Object, list[str], list[str]]:
    """A Y: a trunk of ``trunk`` bones up +Z and two branches of ``branch`` bones from its top, leaning apart.
    Returns the armature, the two branch tips and every bone's name."""
    armature = link(bpy.data.objects.new(name, bpy.data.armatures.new(name)))
    _edit(armature)
    edit = armature.data.edit_bones
    parent = None
    for i in range(trunk):
        bone = edit.new(f"trunk.{i:03d}")
        bone.head, bone.tail = Vector((0, 0, 0.5 * i)), Vector((0, 0, 0.5 * (i + 1)))
        bone.parent, bone.use_connect = parent, parent is not None
        parent = bone
    top = parent
    tips = []
    for side, lean in (("L", 1.0), ("R", -1.0)):
        parent = top
        for i in range(branch):
            bone = edit.new(f"branch.{side}.{i:03d}")
            start = Vector((lean * 0.25 * i, 0.0, 0.5 * trunk + 0.4 * i))
            bone.head, bone.tail = start, start + Vector((lean * 0.25, 0.0, 0.4))
            bone.parent, bone.use_connect = parent, True
            parent = bone
        tips.append(parent.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    return armature, tips, [b.name for b in armature.data.bones]


def hand_rig(name: str = "Hand") -> tuple[bpy.types.Object, list[str], list[str]]:
    """An arm of two bones, a palm, and five fingers of three bones whose roots are disconnected from the palm
    (spread across its end). Returns the armature, the five fingertips and every bone's name."""
    armature = link(bpy.data.objects.new(name, bpy.data.armatures.new(name)))
    _edit(armature)
    edit = armature.data.edit_bones
    upper = edit.new("upper_arm")
    upper.head, upper.tail = Vector((0, 0, 0)), Vector((0, 0, 1.0))
    fore = edit.new("forearm")
    fore.head, fore.tail, fore.parent, fore.use_connect = Vector((0, 0, 1.0)), Vector((0, 0.05, 1.9)), upper, True
    palm = edit.new("palm")
    palm.head, palm.tail, palm.parent, palm.use_connect = fore.tail, Vector((0, 0.08, 2.25)), fore, True
    tips = []
    for finger in range(5):
        parent = palm
        root = Vector(((finger - 2) * 0.09, 0.08, 2.3 - 0.02 * abs(finger - 2)))
        for segment in range(3):
            bone = edit.new(f"finger.{finger}.{segment}")
            bone.head = root if segment == 0 else parent.tail
            bone.tail = bone.head + Vector((0.0, 0.01, 0.12 - 0.02 * segment))
            bone.parent, bone.use_connect = parent, segment > 0
            parent = bone
        tips.append(parent.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    return armature, tips, [b.name for b in armature.data.bones]


def posed_targets(
    armature: bpy.types.Object,
    tips: Sequence[str],
    bones: Sequence[str],
    frames: range,
    spread: float = 0.5,
    clamp: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
    reach: float = 1.0,
) -> list[bpy.types.Object]:
    """An Empty per tip, keyed on every frame where that tip's tail is in a pose the rig itself takes (its
    bones turned smoothly by up to ``spread`` radians), so that all tips can reach their targets at once.
    ``clamp`` takes the bones' rotations, quaternions (b, 4), into the rig's IK limits (the caller's, e.g.
    ``JointLimits.clamp``); ``reach`` pushes the targets out from the armature's origin by that factor. The
    rig is left at rest."""
    pose = armature.pose
    assert pose is not None
    random = np.random.default_rng(7)
    phases = random.uniform(0, 2 * math.pi, size=(len(bones), 3))
    paths: list[Keys] = [[] for _ in tips]
    for frame in frames:
        turns = [Euler((x, 0.3 * y, z)) for x, y, z in spread * np.sin(0.15 * frame + phases)]
        if clamp is None:
            for name, turn in zip(bones, turns, strict=True):
                pose.bones[name].rotation_mode = "XYZ"
                pose.bones[name].rotation_euler = turn
        else:
            quats = clamp(np.array([turn.to_quaternion() for turn in turns]))
            for name, quat in zip(bones, quats, strict=True):
                pose.bones[name].rotation_mode = "QUATERNION"
                pose.bones[name].rotation_quaternion = quat
        bpy.context.view_layer.update()
        for path, tip in zip(paths, tips, strict=True):
            tail = armature.matrix_world @ pose.bones[tip].tail
            path.append((frame, tuple(reach * tail)))  # type: ignore[arg-type]
    for name in bones:
        pose.bones[name].rotation_euler = (0.0, 0.0, 0.0)
        pose.bones[name].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        pose.bones[name].rotation_mode = "QUATERNION"
    return [keyed_empty(f"{tip}.target", path) for tip, path in zip(tips, paths, strict=True)]


def cone(pose_bone: bpy.types.PoseBone, limit: float) -> None:
    """Make ``pose_bone`` a cone for IK: it swings up to ``limit`` radians about its X and Z axes and does not
    twist."""
    pose_bone.lock_ik_y = True
    pose_bone.use_ik_limit_x = pose_bone.use_ik_limit_z = True
    pose_bone.ik_min_x = pose_bone.ik_min_z = -limit
    pose_bone.ik_max_x = pose_bone.ik_max_z = limit


def limited_y() -> tuple[bpy.types.Object, list[str], list[str]]:
    """``y_rig`` with every joint a cone of 25 degrees."""
    armature, tips, bones = y_rig()
    for name in bones:
        cone(armature.pose.bones[name], math.radians(25.0))
    return armature, tips, bones


def limited_hand() -> tuple[bpy.types.Object, list[str], list[str]]:
    """``hand_rig`` with each finger's root a cone of 30 degrees and its other two joints hinges bending 0 to
    100 degrees; the arm and palm free."""
    armature, tips, bones = hand_rig()
    for finger in range(5):
        cone(armature.pose.bones[f"finger.{finger}.0"], math.radians(30.0))
        for segment in (1, 2):
            hinge(armature.pose.bones[f"finger.{finger}.{segment}"], 0.0, math.radians(100.0))
    return armature, tips, bones


def branching_rig(
    lengths: Sequence[int] = (6, 6, 4), fan: int = 3, name: str = "Tree"
) -> tuple[bpy.types.Object, list[str], list[str]]:
    """A tree of branches: a trunk of ``lengths[0]`` bones up +Z, ``fan`` branches of ``lengths[1]`` bones
    from its top, ``fan`` more from each of theirs, and so on (60 bones with the defaults), spreading out as
    they rise. Returns the armature, the outermost tips and every bone's name."""
    armature = link(bpy.data.objects.new(name, bpy.data.armatures.new(name)))
    _edit(armature)
    edit = armature.data.edit_bones
    tips: list[str] = []

    def grow(parent: bpy.types.EditBone | None, level: int, direction: Vector, label: str) -> None:
        head = parent.tail.copy() if parent is not None else Vector((0.0, 0.0, 0.0))
        for i in range(lengths[level]):
            bone = edit.new(f"{label}.{i:02d}")
            bone.head, bone.tail = head, head + 0.3 * direction
            bone.parent, bone.use_connect = parent, parent is not None
            parent, head = bone, bone.tail.copy()
        assert parent is not None
        if level + 1 == len(lengths):
            tips.append(parent.name)
            return
        for k in range(fan):
            angle = 2 * math.pi * (k + 0.25 * level) / fan
            spread = Vector((math.cos(angle), math.sin(angle), 0.0)) * (0.5 + 0.2 * level)
            grow(parent, level + 1, (direction + spread).normalized(), f"{label}{k}")

    grow(None, 0, Vector((0.0, 0.0, 1.0)), "b")
    bpy.ops.object.mode_set(mode="OBJECT")
    return armature, tips, [b.name for b in armature.data.bones]
