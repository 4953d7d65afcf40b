"""The demo's scene, left to right: Rigify's basic human whose left arm reaches for a moving target, a
48-bone tentacle whose tip follows a target on a curling path, the same tentacle under Blender's IK
constraint, a tree of 60 bones whose 9 tips follow 9 targets, and the same tree under Blender's IK
constraints. Skins make the bones visible (orange: baked with FABRIK; slate: Blender's IK), red balls the
targets, a thin red line from each tip to its target (seen only where the tip misses it); a floor, a sun
with soft shadows, and a camera with a legend and labels in front of its lens.

The rigs and the keyed targets come from the builders the tests and benchmarks share (``rigs``); what only
the demo shows (materials, skins, paths, labels, the stage) is here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import bmesh
import bpy
import numpy as np
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Matrix, Vector
from numpy.typing import NDArray
from rigs import (
    Keys,
    branching_rig,
    cone,
    hinge,
    keyed_empty,
    link,
    make_chain,
    posed_targets,
    rigify_metarig,
    scene,
)

from fabrik_addon.solver import JointLimits

FABRIK_COLOR = (0.95, 0.42, 0.06)
NATIVE_COLOR = (0.36, 0.44, 0.58)
TARGET_COLOR = (0.8, 0.02, 0.04)
BODY_COLOR = (0.42, 0.4, 0.38)
INK_COLOR = (0.03, 0.03, 0.04)
#: The labels' colours: FABRIK's and Blender's IK's, darker, to read on the pale backdrop.
FABRIK_INK = (0.6, 0.15, 0.01)
NATIVE_INK = (0.08, 0.12, 0.22)
Align = Literal["LEFT", "CENTER", "RIGHT"]


@dataclass(frozen=True)
class Chain:
    """A chain: its armature, tip bone, chain length (0: to the root), target and pole (or None)."""

    label: str
    armature: bpy.types.Object
    tip_bone: str
    chain_length: int
    target: bpy.types.Object
    pole: bpy.types.Object | None = None


def material(name: str, color: Sequence[float], roughness: float = 0.5) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (*color, 1.0)
    bsdf.inputs["Roughness"].default_value = roughness
    mat.diffuse_color = (*color, 1.0)  # the viewport's solid colour
    return mat


def flat(name: str, color: Sequence[float]) -> bpy.types.Material:
    """A material that shows ``color`` whatever the light (an emission), for the labels."""
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nodes = mat.node_tree.nodes
    nodes.remove(nodes["Principled BSDF"])
    emission = nodes.new("ShaderNodeEmission")
    emission.inputs["Color"].default_value = (*color, 1.0)
    mat.node_tree.links.new(emission.outputs["Emission"], nodes["Material Output"].inputs["Surface"])
    return mat


def rigify_arm(x: float, scale: float) -> Chain:
    """Rigify's basic human metarig, "Human", ``scale`` times its size at (x, 0, 0): its left elbow a hinge
    bending 0 to 150 degrees, a pole below it, and a target ("Hand.target") that waves the forearm up and
    down beside the head, now near the shoulder (the elbow bent hard), now almost out of reach. The right arm
    hangs down (posed, not keyed)."""
    human = rigify_metarig("basic_human")
    human.name = "Human"
    human.location, human.scale = (x, 0.0, 0.0), (scale,) * 3
    bpy.ops.object.mode_set(mode="OBJECT")
    point(human.pose.bones["upper_arm.R"], Vector((-0.3, 0.05, -1.0)))
    hinge(human.pose.bones["forearm.L"], 0.0, math.radians(150))  # its +X turn takes the hand forward
    bpy.context.view_layer.update()
    shoulder = human.matrix_world @ human.data.bones["upper_arm.L"].head_local
    reach = scale * (human.data.bones["upper_arm.L"].length + human.data.bones["forearm.L"].length)
    keys: Keys = []
    frames = scene_frames()
    for frame in frames:
        t = 2 * math.pi * (frame - frames.start) / len(frames)
        # Out to the side and up, nearer and farther: the elbow opens and closes twice per loop.
        distance = reach * (0.62 + 0.3 * math.sin(2 * t))
        angle = math.radians(35) + math.radians(40) * math.sin(t + 0.4)  # above the horizontal
        keys.append(
            (
                frame,
                (
                    shoulder.x + distance * math.cos(angle),
                    shoulder.y - 0.25 * reach * math.sin(t),
                    shoulder.z + distance * math.sin(angle),
                ),
            )
        )
    target = moving_target("Hand.target", keys)
    pole = keyed_empty("Elbow.pole", [(frames.start, (shoulder.x + 0.5 * reach, shoulder.y + 0.3, shoulder.z - reach))])
    return Chain("Rigify arm", human, "forearm.L", 2, target, pole)


def point(pose_bone: bpy.types.PoseBone, direction: Vector) -> None:
    """Turn ``pose_bone`` (by the shortest turn from its rest pose) to point along ``direction`` (armature)."""
    rest = pose_bone.bone.matrix_local.to_3x3()
    turn = rest.col[1].rotation_difference(direction.normalized()).to_matrix()
    pose_bone.rotation_mode = "QUATERNION"
    pose_bone.rotation_quaternion = (rest.inverted() @ turn @ rest).to_quaternion()


def scene_frames() -> range:
    return range(scene().frame_start, scene().frame_end + 1)


def tentacle(name: str, x: float, bones: int, length: float, cones: Sequence[float], path: Keys) -> Chain:
    """An armature ``name`` of ``bones`` connected bones ("<name>.000"...) standing up +Z from (x, 0, 0),
    ``length`` long in all, joint ``i`` a cone swinging at most ``cones[i]`` radians and never twisting, and a
    target ("<name>.target") keyed at ``path`` moved by x."""
    armature, _ = make_chain(
        bones, name=name, length=length / bones, rolls=[0.3 * i for i in range(bones)], bone_prefix=name
    )
    armature.location = (x, 0.0, 0.0)
    for pose_bone, limit in zip(armature.pose.bones, cones, strict=True):
        cone(pose_bone, limit)
    keys: Keys = [(frame, (x + px, py, pz)) for frame, (px, py, pz) in path]
    return Chain(name, armature, armature.data.bones[-1].name, 0, moving_target(f"{name}.target", keys))


def loop_through(frames: range, points: Sequence[Sequence[float]], scale: float = 1.0) -> Keys:
    """A smooth closed path through ``points`` (x, y, z) times ``scale``, in turn and back to the first, at
    even steps over ``frames``, a point per frame (a closed Catmull-Rom spline)."""
    corners = scale * np.array(points, dtype=float)
    count = len(corners)
    keys: Keys = []
    for frame in frames:
        where = count * (frame - frames.start) / len(frames)
        k, s = int(where), where - int(where)
        p0, p1, p2, p3 = (corners[(k + step) % count] for step in (-1, 0, 1, 2))
        point = p1 + 0.5 * s * (p2 - p0 + s * (2 * p0 - 5 * p1 + 4 * p2 - p3 + s * (3 * (p1 - p2) + p3 - p0)))
        keys.append((frame, (float(point[0]), float(point[1]), float(point[2]))))
    return keys


def tree(name: str, x: float, scale: float, bend: float) -> tuple[bpy.types.Object, list[str], list[bpy.types.Object]]:
    """A tree of 60 bones (``rigs.branching_rig``) ``scale`` times its size at (x, 0, 0), each joint a cone
    swinging at most ``bend`` radians and never twisting, as a branch bends, and a target per tip of its 9
    ("<name>.<tip>.target"), keyed where that tip is in a pose the tree itself takes within those limits (so
    all can be reached at once). Returns the armature, its tips and their targets."""
    armature, tips, bones = branching_rig(name=name)
    armature.location, armature.scale = (x, 0.0, 0.0), (scale,) * 3
    for bone in bones:
        cone(armature.pose.bones[bone], bend)
    bpy.context.view_layer.update()
    # The cones as the solver reads them from the bones (swing within ``bend`` about X and Z, Y locked).
    limits = JointLimits.of(
        len(bones), lock=[False, True, False], use_limit=[True, False, True], minimum=-bend, maximum=bend
    )
    targets = posed_targets(armature, tips, bones, scene_frames(), spread=0.3, clamp=limits.clamp)
    for tip, target in zip(tips, targets, strict=True):
        target.name = f"{name}.{tip}.target"
        ball(target, 0.04)
    return armature, tips, targets


def skin(
    armature: bpy.types.Object,
    radius: Callable[[bpy.types.Bone], float],
    material_of: Callable[[bpy.types.Bone], bpy.types.Material],
    *,
    taper: float = 0.8,
    joint: float = 1.15,
) -> None:
    """A mesh bound to ``armature``'s bones, so that a render shows the pose. Each bone of ``radius(bone)`` > 0
    gets an open cylinder of that radius at its head and ``taper`` times it at its tail, and a ball of
    ``joint`` times it at its head; a bone without children a ball at its tail too (the cylinder's radius)."""
    shape = _BoneShape(taper, joint)
    bones = [bone for bone in armature.data.bones if radius(bone) > 0]
    points, faces, materials, groups = [], [], [], []
    count = 0
    for bone in bones:
        made, made_faces = shape.placed(bone, radius(bone), tail=not bone.children)
        points.append(made)
        faces += [[i + count for i in face] for face in made_faces]
        materials += [material_of(bone)] * len(made_faces)
        groups.append(range(count, count + len(made)))
        count += len(made)
    mesh = bpy.data.meshes.new(f"{armature.name}.skin")
    mesh.from_pydata(np.concatenate(points).tolist(), [], faces)
    for mat in dict.fromkeys(materials):
        mesh.materials.append(mat)
    slot = {mat.name: index for index, mat in enumerate(mesh.materials)}
    mesh.polygons.foreach_set("material_index", [slot[mat.name] for mat in materials])
    mesh.polygons.foreach_set("use_smooth", np.ones(len(faces), dtype=bool))
    body = link(bpy.data.objects.new(mesh.name, mesh))
    body.parent = armature
    for bone, group in zip(bones, groups, strict=True):
        body.vertex_groups.new(name=bone.name).add(group, 1.0, "REPLACE")
    modifier = body.modifiers.new("Armature", "ARMATURE")
    assert isinstance(modifier, bpy.types.ArmatureModifier)
    modifier.object = armature


def all_of(mat: bpy.types.Material) -> Callable[[bpy.types.Bone], bpy.types.Material]:
    """For ``skin``: every bone in ``mat``."""
    return lambda _bone: mat


class _BoneShape:
    """The pieces of a bone's skin in the bone's own axes, for a bone 1 thick: an open cylinder along +Y from
    the head, of radius 1 to ``taper``; a ball of radius ``joint`` at the head; a ball of radius ``taper``."""

    def __init__(self, taper: float, joint: float) -> None:
        self.taper = taper
        bm = bmesh.new()
        # create_cone builds along Z, centred: turn Z onto Y and move it up half its length.
        along_y = Matrix.Rotation(-math.pi / 2, 4, "X") @ Matrix.Translation((0, 0, 0.5))
        bmesh.ops.create_cone(bm, segments=16, radius1=1.0, radius2=taper, depth=1.0, cap_ends=False, matrix=along_y)
        self.cylinder = _mesh_data(bm)
        bm.clear()
        bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=8, radius=1.0)
        self.ball = _mesh_data(bm)
        bm.free()
        self.joint = joint

    def placed(self, bone: bpy.types.Bone, radius: float, tail: bool) -> tuple[NDArray[np.float64], list[list[int]]]:
        """The skin of ``bone`` (``radius`` thick; with its tail's ball or not) in armature space: the points,
        shape (P, 3), and the faces."""
        pieces = [
            (self.cylinder[0] * (radius, bone.length, radius), self.cylinder[1]),
            (self.ball[0] * self.joint * radius, self.ball[1]),
        ]
        if tail:
            pieces.append((self.ball[0] * self.taper * radius + (0.0, bone.length, 0.0), self.ball[1]))
        points, faces = [], []
        count = 0
        for piece, piece_faces in pieces:
            points.append(piece)
            faces += [[i + count for i in face] for face in piece_faces]
            count += len(piece)
        turn = np.array(bone.matrix_local.to_3x3().normalized())
        return np.concatenate(points) @ turn.T + np.array(bone.head_local), faces


def _mesh_data(bm: bmesh.types.BMesh) -> tuple[NDArray[np.float64], list[list[int]]]:
    """``bm``'s points, shape (P, 3), and faces (indices into the points)."""
    bm.verts.index_update()
    return np.array([vert.co for vert in bm.verts]), [[vert.index for vert in face.verts] for face in bm.faces]


def moving_target(name: str, keys: Keys) -> bpy.types.Object:
    """An Empty keyed at ``keys`` with a red ball on it, so the render shows where it is."""
    empty = keyed_empty(name, keys)
    ball(empty, 0.06)
    return empty


def ball(empty: bpy.types.Object, radius: float) -> None:
    """A red ball of ``radius`` (world units) parented to ``empty``."""
    empty.empty_display_type, empty.empty_display_size = "SPHERE", radius
    mesh = bpy.data.meshes.new(f"{empty.name}.ball")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=8, radius=radius)
    for face in bm.faces:
        face.smooth = True
    bm.to_mesh(mesh)
    bm.free()
    target = bpy.data.materials.get("Target") or material("Target", TARGET_COLOR, roughness=0.3)
    mesh.materials.append(target)
    obj = link(bpy.data.objects.new(mesh.name, mesh))
    obj.parent = empty


def tether(armature: bpy.types.Object, bone: str, target: bpy.types.Object, radius: float) -> None:
    """A thin red rod from ``bone``'s tail to ``target``, on every frame (constraints move it): where the tip
    misses its target, it shows which rig the target belongs to and by how much it is missed; on target it
    has no length."""
    mesh = bpy.data.meshes.new(f"{target.name}.tether")
    bm = bmesh.new()
    # A rod 1 long along +Y from the origin: Stretch To points Y at the target and scales it to the distance.
    along_y = Matrix.Rotation(-math.pi / 2, 4, "X") @ Matrix.Translation((0, 0, 0.5))
    bmesh.ops.create_cone(bm, segments=8, radius1=radius, radius2=radius, depth=1.0, cap_ends=True, matrix=along_y)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(bpy.data.materials.get("Target") or material("Target", TARGET_COLOR, roughness=0.3))
    rod = link(bpy.data.objects.new(mesh.name, mesh))
    at = rod.constraints.new("COPY_LOCATION")
    assert isinstance(at, bpy.types.CopyLocationConstraint)
    at.target, at.subtarget, at.head_tail = armature, bone, 1.0
    toward = rod.constraints.new("STRETCH_TO")
    assert isinstance(toward, bpy.types.StretchToConstraint)
    toward.target, toward.rest_length, toward.volume = target, 1.0, "NO_VOLUME"
    rod.visible_shadow = False


def stage(center_x: float, width: float, look_at_z: float, resolution: tuple[int, int]) -> bpy.types.Object:
    """A floor, a sun with soft shadows, a pale sky, and a camera from the front, a little above, whose view
    is ``width`` wide where the figures stand (y = 0). Returns the camera."""
    backdrop(wall_y=4.0, bend=2.5, mat=material("Floor", (0.62, 0.6, 0.56), roughness=0.9))
    sun = link(bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN")))
    sun.rotation_euler = (math.radians(38), math.radians(0), math.radians(-35))
    sun_data = sun.data
    assert isinstance(sun_data, bpy.types.SunLight)
    sun_data.energy, sun_data.angle = 3.2, math.radians(12)
    world = bpy.data.worlds.new("World")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.55, 0.62, 0.72, 1.0)
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.9
    scene().world = world
    scene().view_settings.view_transform = "Standard"  # colours as given: the labels' and the rigs'
    lens = bpy.data.cameras.new("Camera")
    lens.lens = 50.0
    camera = link(bpy.data.objects.new("Camera", lens))
    # From the front (-Y) and a little above, far enough that the view is ``width`` wide at y = 0.
    distance = width * lens.lens / lens.sensor_width
    pitch = math.radians(8)
    camera.rotation_euler = (math.pi / 2 - pitch, 0.0, 0.0)
    camera.location = (center_x, -distance * math.cos(pitch), look_at_z + distance * math.sin(pitch))
    scene().camera = camera
    scene().render.resolution_x, scene().render.resolution_y = resolution
    return camera


def backdrop(wall_y: float, bend: float, mat: bpy.types.Material) -> None:
    """A photo studio's backdrop: a floor at z = 0 that curves up (a quarter circle of radius ``bend``) into a
    wall at y = ``wall_y``, with no edge to show where one ends."""
    arc = [(wall_y - bend + bend * math.sin(a), bend - bend * math.cos(a)) for a in np.linspace(0.0, math.pi / 2, 16)]
    profile = [(-40.0, 0.0), *arc, (wall_y, 30.0)]
    points = [(x, y, z) for y, z in profile for x in (-40.0, 40.0)]
    faces = [(2 * k, 2 * k + 1, 2 * k + 3, 2 * k + 2) for k in range(len(profile) - 1)]
    mesh = bpy.data.meshes.new("Backdrop")
    mesh.from_pydata(points, [], faces)
    mesh.polygons.foreach_set("use_smooth", np.ones(len(faces), dtype=bool))
    mesh.materials.append(mat)
    link(bpy.data.objects.new("Backdrop", mesh))


def text(
    body: str, camera: bpy.types.Object, where: tuple[float, float], size: float, align: Align, mat: bpy.types.Material
) -> bpy.types.Object:
    """A line of text in front of ``camera``'s lens, at ``where`` in the view (0, 0 bottom left to 1, 1 top
    right; ``align`` LEFT, CENTER or RIGHT about it), ``size`` the view's height high."""
    curve = bpy.data.curves.new(f"label {body}", "FONT")
    assert isinstance(curve, bpy.types.TextCurve)
    curve.body, curve.size, curve.align_x, curve.align_y = body, size * _view_size(camera)[1], align, "CENTER"
    curve.materials.append(mat)
    return _in_view(bpy.data.objects.new(curve.name, curve), camera, where)


def dot(camera: bpy.types.Object, where: tuple[float, float], size: float, mat: bpy.types.Material) -> None:
    """A round dot ``size`` the view's height across, in front of ``camera``'s lens at ``where`` (as ``text``)."""
    mesh = bpy.data.meshes.new(f"dot {mat.name}")
    bm = bmesh.new()
    bmesh.ops.create_circle(bm, cap_ends=True, segments=24, radius=size * _view_size(camera)[1] / 2)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(mat)
    _in_view(bpy.data.objects.new(mesh.name, mesh), camera, where)


def legend(
    camera: bpy.types.Object,
    entries: Sequence[tuple[str, bpy.types.Material]],
    ink: bpy.types.Material,
    where: tuple[float, float],
    size: float,
) -> None:
    """A row of entries, each a dot of its material and its words, ending at ``where`` (as ``text``)."""
    width, height = _view_size(camera)
    em = size * height / width  # the text's height, in view widths
    labels = [text(words, camera, (0.0, where[1]), size, "LEFT", ink) for words, _ in entries]
    bpy.context.view_layer.update()  # for the texts' dimensions
    right = where[0]
    for label, (_, mat) in zip(reversed(labels), reversed(entries), strict=True):
        left = right - label.dimensions.x / width
        label.location.x = (left - 0.5) * width
        dot(camera, (left - 0.7 * em, where[1]), 0.8 * size, mat)
        right = left - 2.8 * em


def _view_size(camera: bpy.types.Object) -> tuple[float, float]:
    """The width and height of ``camera``'s view one unit in front of its lens."""
    lens = camera.data
    assert isinstance(lens, bpy.types.Camera)
    render = scene().render
    width = lens.sensor_width / lens.lens
    return width, width * render.resolution_y / render.resolution_x


def _in_view(obj: bpy.types.Object, camera: bpy.types.Object, where: tuple[float, float]) -> bpy.types.Object:
    """``obj`` put in front of ``camera``'s lens at ``where`` in its view, seen only by the camera (it casts
    no shadow and shows in no reflection)."""
    width, height = _view_size(camera)
    link(obj)
    obj.parent = camera
    obj.location = ((where[0] - 0.5) * width, (where[1] - 0.5) * height, -1.0)
    for ray in (
        "visible_shadow",
        "visible_diffuse",
        "visible_glossy",
        "visible_transmission",
        "visible_volume_scatter",
    ):
        setattr(obj, ray, False)
    return obj


def where_in_view(camera: bpy.types.Object, point: Sequence[float]) -> tuple[float, float]:
    """Where ``point`` (world) shows in ``camera``'s view, (0, 0) bottom left to (1, 1) top right."""
    seen = world_to_camera_view(scene(), camera, Vector(point))
    return seen.x, seen.y
