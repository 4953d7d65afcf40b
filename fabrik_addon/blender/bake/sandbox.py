"""Where a bake's frame walks evaluate: in a sandbox scene that holds only what the chains need, so that the
cost of a frame is the chains' own and not the whole shot's.

The sandbox is a scene of our own into which the armatures, targets and poles are linked (an object can be
in several scenes). Blender's depsgraph for it pulls in what those objects depend on (parents, constraint
and driver targets, even objects in no scene of the file) and nothing that merely depends on them: the
skinned meshes, their modifiers, the rest of the shot. The walks read the evaluated copies from the
sandbox's depsgraph. The sandbox is removed whatever happens, leaving no datablock behind.

Where the sandbox cannot give the scene's answer, the walks step the scene itself, and the report says so:
a driver that reads a scene (its frame, its settings), a Python driver (it may read the context's scene),
a rigid body (simulated by the scene's own rigid body world).

While a walk reads an armature, Blender evaluates only the animation of the bones that what is read follows
(``only_what_is_read``): a motion-capture rig whose legs are baked costs a third as much per frame.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import bpy

from .. import compat
from ..interrupts import put_back
from ..rig import Node, bone_in_path, bone_path, closure

#: The sandbox scene's name (Blender adds a number if a scene of this name exists).
SANDBOX_NAME = "FABRIK bake sandbox"
#: The channels that move a pose bone.
_MOVING = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")
#: Constraints that move the bones above their own, which no link of those bones says.
_MOVING_ABOVE = ("IK", "SPLINE_IK")
#: Constraints that read more than their targets' places: the movie clip's tracks, through a camera.
_READING_MORE = ("FOLLOW_TRACK", "OBJECT_SOLVER", "CAMERA_SOLVER")
#: Scene settings that change what a frame number means for animation, copied into the sandbox.
_TIMING = ("fps", "fps_base", "frame_map_old", "frame_map_new")


@dataclass(frozen=True)
class Evaluation:
    """The scene a walk steps through frames, and how: ``"sandbox"``, or ``"scene"`` with the reason the
    sandbox could not be used.

    Attributes
    ----------
    scene : bpy.types.Scene
    mode : str
        ``"sandbox"``, or ``"scene: <why>"``.
    """

    scene: bpy.types.Scene
    mode: str

    def step(self, frame: int) -> None:
        """Evaluate ``frame``."""
        self.scene.frame_set(frame)

    def keep_only(self, objects: Collection[bpy.types.Object]) -> None:
        """From now on evaluate only ``objects`` (and what they depend on): a sandbox lets go of the rest it
        holds; the scene itself keeps all."""
        if self.mode != "sandbox":
            return
        held = self.scene.collection.objects
        for obj in [obj for obj in held if obj not in objects]:
            held.unlink(obj)

    def depsgraph(self) -> bpy.types.Depsgraph:
        """The depsgraph that evaluates this scene's frames (the same one from frame to frame: look up the
        evaluated objects in it after each ``step``, with ``obj.evaluated_get``)."""
        view_layer = self.scene.view_layers[0] if self.mode == "sandbox" else bpy.context.view_layer
        depsgraph = view_layer.depsgraph if view_layer is not None else None
        assert depsgraph is not None, "the scene has been stepped to a frame, so its view layer has a depsgraph"
        return depsgraph


@contextmanager
def evaluating(
    scene: bpy.types.Scene, objects: Sequence[bpy.types.Object], sandbox: bool = True
) -> Iterator[Evaluation]:
    """The scene to step for ``objects``: a sandbox holding only them, removed on leaving, or ``scene``
    itself when ``sandbox`` is False or when the sandbox cannot give the scene's answer (see the module)."""
    reason = "asked for" if not sandbox else why_not_sandboxed(objects)
    if reason is not None:
        yield Evaluation(scene, f"scene: {reason}")
        return
    made: list[Callable[[], None]] = []
    try:
        box = bpy.data.scenes.new(SANDBOX_NAME)
        made.append(lambda: bpy.data.scenes.remove(box))
        for name in _TIMING:
            setattr(box.render, name, getattr(scene.render, name))
        for obj in dict.fromkeys(objects):
            box.collection.objects.link(obj)
        box.frame_set(scene.frame_current)  # gives the sandbox's view layer its depsgraph
        yield Evaluation(box, "sandbox")
    finally:
        put_back(made)


def why_not_sandboxed(objects: Iterable[bpy.types.Object]) -> str | None:
    """Why a sandbox would not evaluate ``objects`` as their scene does, or None."""
    for node in closure(Node(obj, "") for obj in objects):
        obj = node.obj
        if node.bone == "" and obj.rigid_body is not None:
            return f"'{obj.name}' is a rigid body, simulated by the scene"
        anim = obj.animation_data
        for fcurve in anim.drivers if anim is not None and node.bone == "" else ():
            driver = fcurve.driver
            if driver is None:
                continue
            if driver.type == "SCRIPTED" and not driver.is_simple_expression:
                return f"a Python driver on '{obj.name}' ({fcurve.data_path}) may read the scene"
            for variable in driver.variables:
                if any(target.id_type == "SCENE" and target.id is not None for target in variable.targets):
                    return f"a driver on '{obj.name}' ({fcurve.data_path}) reads a scene"
    return None


@contextmanager
def only_what_is_read(evaluation: Evaluation, reads: Iterable[Node]) -> Iterator[None]:
    """Meanwhile, each armature of ``reads``' bones evaluates only the animation of the bones that what is read
    follows (``closure`` with ``all_links``): the F-curves of its Action that move any other
    bone (Location, Rotation, Scale) are muted, and unmuted on leaving.

    Only where nothing else could follow a muted bone unseen: in a sandbox (the scene's own evaluation runs
    its handlers and Python drivers); when everything followed is an armature or an Empty (a mesh, curve or
    lattice may be deformed by a bone, which no link says); when no driver reads data other than objects;
    not on an armature with an IK or Spline IK constraint (it moves the bones above its own), nor in an Action
    that animates something else too (its active Action and its NLA strips' alike).
    """
    if evaluation.mode != "sandbox":
        yield
        return
    starts = list(reads)
    followed = list(closure(starts, all_links=True))
    if not all(_plain(node.obj) for node in followed):
        yield
        return
    needed: dict[bpy.types.Object, set[str]] = {}
    for node in followed:
        needed.setdefault(node.obj, set()).add(node.bone)
    unmute: list[Callable[[], None]] = []
    try:
        for armature in dict.fromkeys(node.obj for node in starts if node.bone):
            pose = armature.pose
            if pose is None or any(c.type in _MOVING_ABOVE for bone in pose.bones for c in bone.constraints):
                continue
            for fcurve in _own_fcurves(armature):
                bone = bone_in_path(fcurve.data_path)
                owner, _, channel = fcurve.data_path.rpartition(".")
                moving = bone != "" and channel in _MOVING and owner == bone_path(bone)
                if moving and bone not in needed[armature] and not fcurve.mute:
                    unmute.append(partial(setattr, fcurve, "mute", False))
                    fcurve.mute = True
        yield
    finally:
        put_back(unmute)


def _own_fcurves(armature: bpy.types.Object) -> list[bpy.types.FCurve]:
    """The F-curves that animate the armature through Actions it alone plays: its active Action's, and those of
    the Actions of its NLA strips (the animation pushed down beneath a FABRIK layer), each of them used by no
    other object."""
    anim = armature.animation_data
    if anim is None:
        return []
    fcurves: list[bpy.types.FCurve] = []
    if anim.action is not None and _alone(anim.action):
        fcurves += compat.assigned_fcurves(armature)
    for track in anim.nla_tracks:
        for strip in track.strips:
            if strip.action is not None and _alone(strip.action):
                fcurves += compat.slot_fcurves(strip.action, compat.strip_slot(strip))
    return fcurves


def _alone(action: bpy.types.Action) -> bool:
    """Whether one user plays the Action (a fake user aside)."""
    return action.users - int(action.use_fake_user) <= 1


def _plain(obj: bpy.types.Object) -> bool:
    """Whether all that moves ``obj`` is in its links (``closure``): an armature or an Empty; whose drivers
    each read an object (not the context, not other data), none on its data (an armature's bone settings);
    with no constraint that reads more than its targets' places (a B-Bone's shape, which the bones beside it
    bend; a motion track, a camera)."""
    if obj.type not in ("ARMATURE", "EMPTY"):
        return False
    data_anim = getattr(obj.data, "animation_data", None)
    if data_anim is not None and len(data_anim.drivers) > 0:
        return False
    anim = obj.animation_data
    for fcurve in () if anim is None else anim.drivers:
        for variable in fcurve.driver.variables if fcurve.driver is not None else ():
            if variable.type == "CONTEXT_PROP" or any(
                target.id is None or target.id_type != "OBJECT" for target in variable.targets
            ):
                return False
    pose_bones = obj.pose.bones if obj.pose is not None else ()
    constraints = [*obj.constraints, *(c for bone in pose_bones for c in bone.constraints)]
    return not any(c.type in _READING_MORE or getattr(c, "use_bbone_shape", False) for c in constraints)
