"""The demo's scene: two long tentacles (one for FABRIK, one left to Blender's IK constraint), a Rigify metarig
whose left arm reaches for a moving target, skins that make the bones visible, a camera and lights. The rigs
and the keyed targets come from the builders the tests and benchmarks share (``rigs``); what only the demo
shows (materials, skins, labels, the stage) is here."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bmesh
import bpy
from mathutils import Euler, Matrix, Vector
from rigs import Keys, Point, keyed_empty, link, make_chain, rigify_metarig, scene


@dataclass(frozen=True)
class Chain:
    """A chain to bake: its armature, tip bone, chain length (0: to the root) and target."""

    label: str
    armature: bpy.types.Object
    tip_bone: str
    chain_length: int
    target: bpy.types.Object


def material(name: str, color: Sequence[float], roughness: float = 0.45) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (*color, 1.0)
    bsdf.inputs["Roughness"].default_value = roughness
    return mat


def tentacle(name: str, x: float, bones: int, length: float) -> bpy.types.Object:
    """An armature ``name`` of ``bones`` connected bones ("<name>.000"...) standing up +Z from (x, 0, 0),
    ``length`` long in all, each a little rolled."""
    armature, _ = make_chain(
        bones, name=name, length=length / bones, rolls=[0.3 * i for i in range(bones)], bone_prefix=name
    )
    armature.location = (x, 0.0, 0.0)
    return armature


def rigify_human(x: float) -> bpy.types.Object:
    """Rigify's basic human metarig, "Human", standing at (x, 0, 0)."""
    human = rigify_metarig("basic_human")
    human.name = "Human"
    human.location = (x, 0.0, 0.0)
    return human


def skin(armature: bpy.types.Object, radius: Callable[[bpy.types.Bone], float], mat: bpy.types.Material) -> None:
    """A mesh of one tapered cylinder and one ball per bone, each bound to its bone, so a render shows the pose."""
    mesh = bpy.data.meshes.new(f"{armature.name}.skin")
    body = link(bpy.data.objects.new(mesh.name, mesh))
    body.parent = armature
    bm = bmesh.new()
    deform = bm.verts.layers.deform.verify()
    for index, bone in enumerate(armature.data.bones):
        r = radius(bone)
        axis = bone.matrix_local.to_3x3().normalized()
        placed = Matrix.Translation(bone.head_local) @ axis.to_4x4()
        # create_cone builds along Z, centred: turn Z onto the bone's Y axis and lift it to the bone's middle.
        along_y = placed @ Matrix.Rotation(-math.pi / 2, 4, "X") @ Matrix.Translation((0, 0, bone.length / 2))
        made = bmesh.ops.create_cone(
            bm, segments=12, radius1=r, radius2=0.8 * r, depth=bone.length, cap_ends=True, matrix=along_y
        )["verts"]
        made += bmesh.ops.create_uvsphere(bm, u_segments=12, v_segments=6, radius=1.15 * r, matrix=placed)["verts"]
        for vert in made:
            vert[deform][index] = 1.0
        body.vertex_groups.new(name=bone.name)
    bm.to_mesh(mesh)
    bm.free()
    for polygon in mesh.polygons:
        polygon.use_smooth = True
    mesh.materials.append(mat)
    modifier = body.modifiers.new("Armature", "ARMATURE")
    assert isinstance(modifier, bpy.types.ArmatureModifier)
    modifier.object = armature


def moving_target(name: str, keys: Keys, mat: bpy.types.Material) -> bpy.types.Object:
    """An Empty keyed at ``keys`` with a small ball parented to it, so the render shows where it is."""
    empty = keyed_empty(name, keys)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = 0.05
    ball_mesh = bpy.data.meshes.new(f"{name}.ball")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=8, radius=0.06)
    bm.to_mesh(ball_mesh)
    bm.free()
    ball_mesh.materials.append(mat)
    ball = link(bpy.data.objects.new(ball_mesh.name, ball_mesh))
    ball.parent = empty
    return empty


def label(text: str, location: Point, mat: bpy.types.Material) -> None:
    curve = bpy.data.curves.new(f"label {text}", "FONT")
    assert isinstance(curve, bpy.types.TextCurve)
    curve.body, curve.size, curve.align_x = text, 0.2, "CENTER"
    obj = link(bpy.data.objects.new(curve.name, curve))
    obj.location = location
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)  # stand up, facing the camera (which looks along +Y)
    obj.data.materials.append(mat)


def stage(center_x: float, width: float, height: float, center_z: float) -> None:
    """A floor, a sun and an orthographic camera looking at a ``width`` by ``height`` window from the front."""
    floor = bpy.data.meshes.new("Floor")
    bm = bmesh.new()
    bmesh.ops.create_grid(bm, x_segments=1, y_segments=1, size=20.0)
    bm.to_mesh(floor)
    bm.free()
    floor.materials.append(material("Floor", (0.8, 0.8, 0.78), roughness=0.8))
    link(bpy.data.objects.new("Floor", floor))
    sun = link(bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN")))
    sun.rotation_euler = (math.radians(50), math.radians(10), math.radians(-30))
    sun.data.energy = 3.0
    world = bpy.data.worlds.new("World")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.16, 0.2, 0.28, 1.0)
    scene().world = world
    lens = bpy.data.cameras.new("Camera")
    lens.type, lens.ortho_scale = "ORTHO", max(width, height)
    camera = link(bpy.data.objects.new("Camera", lens))
    # From the front (-Y), a little from above and from the right, so motion in depth shows too.
    camera.rotation_euler = Euler((math.radians(80), 0.0, math.radians(12)))
    looking = camera.rotation_euler.to_matrix() @ Vector((0.0, 0.0, -1.0))
    camera.location = Vector((center_x, 0.0, center_z)) - 12.0 * looking
    scene().camera = camera
    scene().render.resolution_x = 480
    scene().render.resolution_y = round(480 * height / width)
