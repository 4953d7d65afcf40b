"""Motion capture for the Blender tests and benchmarks: the BVH clips of ``tests/data`` imported with Blender's
own importer, their legs, arms and spine found by the clip's joint names, where Blender puts their joints on
each frame, Empties keyed on those places, and the measures the mocap work aims at: how far a knee strays from
its animated place, knee flips, and foot skate during contacts.

Everything here drives Blender through ``bpy`` and nothing imports the add-on (as ``rigs``), so a test of the
installed extension can build its scene with it too. Positions are world positions in scene units: the clip's
own units times the import scale (``Clip.metres_per_unit`` converts the clips of ``tests/data``). Blender's
importer turns the BVH's Y-up into Blender's Z-up, so "horizontal" is the XY plane. Angles are in radians.

Blender names each bone after the BVH joint at its head; the bone reaches to its child joint (to the mean of
its children's, or to the End Site). So on a CMU skeleton "LeftKnee" is the shin, from the knee to the ankle.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import bpy
import numpy as np
from numpy.typing import NDArray
from rigs import keyed_empty, scene

FloatArray = NDArray[np.float64]

#: The committed clips (see ``tests/data/README.md``).
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"

#: CMU's unit in metres, from the database's FAQ: (1.0 / 0.45) * 2.54 / 100.
CMU_UNIT = 0.056444


@dataclass(frozen=True)
class Clip:
    """A clip of ``tests/data``: its file and how long one of its units is, in metres."""

    file: str
    metres_per_unit: float

    @property
    def path(self) -> Path:
        return DATA / self.file


#: The clips by short name: a walk and a hop at 120 fps in CMU's units, and another walk at 30 fps in metres.
CLIPS = {
    "walk": Clip("cmu_131_01_walk.bvh", CMU_UNIT),
    "hop": Clip("cmu_131_03_hop.bvh", CMU_UNIT),
    "walk_30fps_m": Clip("cmu_131_02_walk_30fps_m.bvh", 1.0),
}


#: The importer's Rotation choices.
RotateMode = Literal["QUATERNION", "NATIVE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]


def clip_path(name_or_path: str | Path) -> Path:
    """The file of a clip: one of ``CLIPS`` by name, or a path to any BVH file."""
    if isinstance(name_or_path, str) and name_or_path in CLIPS:
        return CLIPS[name_or_path].path
    path = Path(name_or_path)
    if not path.is_file():
        raise FileNotFoundError(f"no clip {str(name_or_path)!r}: neither one of {sorted(CLIPS)} nor a file")
    return path


def import_clip(
    name_or_path: str | Path,
    *,
    scale: float = 1.0,
    frame_start: int = 1,
    rotate_mode: RotateMode = "NATIVE",
    use_fps_scale: bool = False,
    update_scene_fps: bool = True,
) -> bpy.types.Object:
    """Import a clip with Blender's own BVH importer (``bpy.ops.import_anim.bvh``) and set the scene's frame
    range to the clip's keys. Returns the armature (active and selected, in Object Mode), named after the file.

    Parameters
    ----------
    name_or_path : str or Path
        One of ``CLIPS`` or a path to a BVH file.
    scale : float
        The importer's Scale: scene units per BVH unit, for offsets and root positions alike.
    frame_start : int
        The scene frame of the clip's first frame (the importer raises anything below 1 to 1).
    rotate_mode : str
        The importer's Rotation: "NATIVE" gives each pose bone the Euler mode spelt like its channel list
        ("ZYX" for "Zrotation Yrotation Xrotation", though those channels compose as Blender's "XYZ"); the
        keys are each frame's rotation turned into the bone's rest frame and written in that mode, so the
        pose is the file's but the angles are not its numbers. "QUATERNION" or an Euler order keys every bone
        that way.
    use_fps_scale : bool
        The importer's Scale FPS: spread the keys so the clip plays at its own speed at the scene's frame
        rate (keys then fall between frames); by default one BVH frame is one scene frame.
    update_scene_fps : bool
        The importer's Update Scene FPS: the scene's frame rate becomes the clip's (``fps`` the rounded rate,
        ``fps_base`` what is left, e.g. 0.999996 for a Frame Time of .0083333).

    Notes
    -----
    Every row of the MOTION section becomes a key, the first one at ``frame_start`` (the importer's own
    "skip" drops only its internal rest row). Keys are linear. The armature gets the axis conversion applied
    to its bones (object rotation and scale stay identity), so its rest bones stand in Blender's Z-up.
    """
    path = clip_path(name_or_path)
    if "io_anim_bvh" not in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_enable(module="io_anim_bvh")
    with contextlib.redirect_stdout(io.StringIO()):  # the importer prints its progress
        # The stubs type operators as returning None; they return the set of how they ended.
        result = cast(
            set[str],
            bpy.ops.import_anim.bvh(
                filepath=str(path),
                global_scale=scale,
                frame_start=frame_start,
                rotate_mode=rotate_mode,
                use_fps_scale=use_fps_scale,
                update_scene_fps=update_scene_fps,
                update_scene_duration=False,
            ),
        )
    if "FINISHED" not in result:
        raise RuntimeError(f"Blender's BVH importer did not finish on {path}: {result}")
    armature = bpy.context.object
    assert armature is not None
    assert armature.type == "ARMATURE"
    keys = armature.animation_data.action.frame_range
    scene().frame_start, scene().frame_end = round(keys[0]), math.ceil(keys[1])
    scene().frame_set(scene().frame_start)
    return armature


def import_through_fbx(name_or_path: str | Path, folder: Path) -> bpy.types.Object:
    """A clip as Mixamo users bring one: imported from BVH (``import_clip``), exported to FBX (into ``folder``),
    a new file, and the FBX imported back with Blender's FBX importer and its Automatic Bone Orientation (bones
    with quaternion rotations, their rolls changed). The scene's frame range is set to the clip's keys. Returns
    the armature."""
    armature = import_clip(name_or_path)
    path = folder / f"{armature.name}.fbx"
    if "io_scene_fbx" not in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_enable(module="io_scene_fbx")
    with contextlib.redirect_stdout(io.StringIO()):  # the exporter and importer print their progress
        bpy.ops.export_scene.fbx(filepath=str(path), bake_anim=True, add_leaf_bones=False)
        bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.ops.preferences.addon_enable(module="io_scene_fbx")
        bpy.ops.import_scene.fbx(filepath=str(path), automatic_bone_orientation=True)
    (imported,) = [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]
    keys = imported.animation_data.action.frame_range
    scene().frame_start, scene().frame_end = round(keys[0]), math.ceil(keys[1])
    scene().frame_set(scene().frame_start)
    return imported


def scene_frames() -> range:
    """The scene's frame range, both ends included."""
    return range(scene().frame_start, scene().frame_end + 1)


def scene_fps() -> float:
    """The scene's frame rate, frames per second."""
    render = scene().render
    return render.fps / render.fps_base


@dataclass(frozen=True)
class Naming:
    """How one BVH release names the joints of a skeleton: templates for each limb's joints ("{side}" is
    "Left" or "Right"), and the spine's joints from the pelvis up to the head."""

    hip: str
    knee: str
    ankle: str
    toe: str
    shoulder: str
    elbow: str
    wrist: str
    spine: tuple[str, ...]

    def names(self) -> list[str]:
        limbs = (self.hip, self.knee, self.ankle, self.toe, self.shoulder, self.elbow, self.wrist)
        return [template.format(side=side) for template in limbs for side in SIDES] + list(self.spine)


SIDES = ("Left", "Right")

#: The CMU database's skeleton as two of its BVH conversions (cgspeed's) name it. Both keep CMU's zero-length
#: joints: LHipJoint, lowerback (LowerBack) and the collar joints start where their parent does, and the neck
#: (lowerneck, Neck) starts where the top of the chest (Chest2, Spine1) does.
NAMINGS = {
    "cmu-3dsmax": Naming(
        hip="{side}Hip",
        knee="{side}Knee",
        ankle="{side}Ankle",
        toe="{side}Toe",
        shoulder="{side}Shoulder",
        elbow="{side}Elbow",
        wrist="{side}Wrist",
        spine=("Hips", "lowerback", "Chest", "Chest2", "lowerneck", "Neck", "Head"),
    ),
    "cmu-motionbuilder": Naming(
        hip="{side}UpLeg",
        knee="{side}Leg",
        ankle="{side}Foot",
        toe="{side}ToeBase",
        shoulder="{side}Arm",
        elbow="{side}ForeArm",
        wrist="{side}Hand",
        spine=("Hips", "LowerBack", "Spine", "Spine1", "Neck", "Neck1", "Head"),
    ),
}


def naming(armature: bpy.types.Object) -> Naming:
    """The naming of ``NAMINGS`` whose every joint is a bone of ``armature``.

    Raises
    ------
    ValueError
        No naming fits; the message lists what each one misses.
    """
    bones = armature.data.bones
    missing = {}
    for key, candidate in NAMINGS.items():
        absent = [name for name in candidate.names() if name not in bones]
        if not absent:
            return candidate
        missing[key] = absent
    raise ValueError(f"armature '{armature.name}' has no known joint naming; missing: {missing}")


@dataclass(frozen=True)
class Leg:
    """One leg's bones, each named after the joint at its head.

    ``thigh`` runs from the hip to the knee, ``shin`` from the knee to the ankle, ``foot`` from the ankle to
    the ball of the foot, ``toe`` from the ball to the tip of the toes (the BVH End Site).

    The natural IK chain is thigh-shin with the shin as its tip: the shin's tail is the ankle, the goal, and
    the chain is 2 bones long. With the foot (``chain(with_foot=True)``) it is thigh-shin-foot, 3 bones, the
    ball of the foot the goal. Either way the knee is the shin's head.
    """

    side: str
    thigh: str
    shin: str
    foot: str
    toe: str

    @property
    def knee(self) -> str:
        """The bone whose head is the knee."""
        return self.shin

    def chain(self, with_foot: bool = False) -> tuple[str, int]:
        """The IK chain as (tip bone, chain length): the shin (its tail the ankle), or the foot (its tail the
        ball of the foot)."""
        return (self.foot, 3) if with_foot else (self.shin, 2)


@dataclass(frozen=True)
class Arm:
    """One arm's bones, each named after the joint at its head: ``upper`` from the shoulder to the elbow,
    ``forearm`` from the elbow to the wrist, ``hand`` from the wrist on. The IK chain is upper-forearm, the
    forearm its tip (its tail the wrist), 2 bones; the elbow is the forearm's head."""

    side: str
    upper: str
    forearm: str
    hand: str

    @property
    def elbow(self) -> str:
        """The bone whose head is the elbow."""
        return self.forearm

    def chain(self) -> tuple[str, int]:
        """The IK chain as (tip bone, chain length)."""
        return self.forearm, 2


def legs(armature: bpy.types.Object) -> dict[str, Leg]:
    """The clip's legs by side, "Left" and "Right"."""
    found = naming(armature)
    return {
        side: Leg(side, *(template.format(side=side) for template in (found.hip, found.knee, found.ankle, found.toe)))
        for side in SIDES
    }


def arms(armature: bpy.types.Object) -> dict[str, Arm]:
    """The clip's arms by side, "Left" and "Right"."""
    found = naming(armature)
    return {
        side: Arm(side, *(template.format(side=side) for template in (found.shoulder, found.elbow, found.wrist)))
        for side in SIDES
    }


def spine(armature: bpy.types.Object) -> tuple[str, ...]:
    """The clip's spine bones from the pelvis up to the head, each named after the joint at its head."""
    return naming(armature).spine


def leg_length(armature: bpy.types.Object, leg: Leg) -> float:
    """Thigh plus shin at rest, in scene units (the importer leaves the object unscaled)."""
    bones = armature.data.bones
    return float(bones[leg.thigh].length + bones[leg.shin].length)


#: A point of a bone: (bone name, "head" or "tail").
Joint = tuple[str, Literal["head", "tail"]]


def animated_joints(armature: bpy.types.Object, joints: Sequence[Joint], frames: Iterable[int]) -> FloatArray:
    """Where Blender puts each of ``joints`` on each of ``frames``, in world space, shape (F, J, 3); leaves the
    scene on the last frame."""
    pose = armature.pose
    assert pose is not None
    points = []
    for frame in frames:
        scene().frame_set(frame)
        world = armature.matrix_world
        points.append([tuple(world @ getattr(pose.bones[bone], where)) for bone, where in joints])
    return np.array(points, dtype=np.float64).reshape(-1, len(joints), 3)


def animated_positions(
    armature: bpy.types.Object, bone: str, frames: Iterable[int], where: Literal["head", "tail"] = "head"
) -> FloatArray:
    """Where Blender puts ``bone``'s head (or tail) on each of ``frames``, in world space, shape (F, 3)."""
    return animated_joints(armature, [(bone, where)], frames)[:, 0]


def keyed_targets(positions: Mapping[str, FloatArray], frames: Sequence[int]) -> dict[str, bpy.types.Object]:
    """An Empty per name of ``positions``, keyed on each of ``frames`` at that frame's row of its positions,
    shape (F, 3) in world space, with linear interpolation between keys (e.g. on the animated ankles: a bake
    toward them should change nothing)."""
    targets = {}
    for name, points in positions.items():
        if len(points) != len(frames):
            raise ValueError(f"{len(points)} positions for '{name}' but {len(frames)} frames")
        targets[name] = keyed_empty(name, zip(frames, np.asarray(points).tolist(), strict=True))
    return targets


def drift(points: FloatArray, reference: FloatArray) -> FloatArray:
    """Per frame, how far ``points`` (F, 3) are from ``reference`` (F, 3): shape (F,), in scene units."""
    return np.asarray(np.linalg.norm(np.asarray(points) - np.asarray(reference), axis=-1), dtype=np.float64)


def _unit(vectors: FloatArray) -> FloatArray:
    lengths = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.asarray(vectors / np.where(lengths > 0.0, lengths, 1.0))


def knee_bends(hip: FloatArray, knee: FloatArray, ankle: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each frame's knee bend and bend plane, from the hip, knee and ankle positions, shape (F, 3) each.

    Returns
    -------
    bend : ndarray, shape (F,)
        The angle between the thigh (hip to knee) and the shin (knee to ankle), radians: 0 for a straight leg.
    normal : ndarray, shape (F, 3)
        The bend plane's unit normal, thigh x shin (zero where the leg is exactly straight).
    """
    thigh, shin = _unit(knee - hip), _unit(ankle - knee)
    bend = np.arccos(np.clip(np.sum(thigh * shin, axis=-1), -1.0, 1.0))
    return bend, _unit(np.cross(thigh, shin))


def knee_flips(
    hip: FloatArray,
    knee: FloatArray,
    ankle: FloatArray,
    *,
    max_turn: float = math.radians(30.0),
    min_bend: float = math.radians(10.0),
) -> NDArray[np.int64]:
    """The frames where the knee flips: its bend plane (hip, knee, ankle; positions (F, 3) each) turns by more
    than ``max_turn`` radians from the frame before while the knee is bent more than ``min_bend`` radians on
    both frames (on a nearly straight leg the plane means nothing). Returns indices into the frames, shape (K,),
    each the later frame of its pair."""
    bend, normal = knee_bends(hip, knee, ankle)
    turn = np.arccos(np.clip(np.sum(normal[1:] * normal[:-1], axis=-1), -1.0, 1.0))
    bent = (bend[1:] > min_bend) & (bend[:-1] > min_bend)
    return np.flatnonzero(bent & (turn > max_turn)).astype(np.int64) + 1


@dataclass(frozen=True)
class Contact:
    """A run of frames during which the ball of a foot is planted: frames ``start`` to ``stop`` - 1 (indices
    into the frames measured), and ``skate``, the farthest the ball moves horizontally from where it was on the
    first of them, in scene units."""

    start: int
    stop: int
    skate: float


#: Contacts as fractions of the leg's length (thigh + shin): the ball within this height of the floor...
CONTACT_HEIGHT = 0.04
#: ... moving horizontally slower than this many leg lengths per second...
CONTACT_SPEED = 0.3
#: ... for at least this long, seconds.
CONTACT_SECONDS = 0.1


def floor_height(*balls: FloatArray) -> float:
    """The floor under feet whose balls move through ``balls`` (each (F, 3)): the 10th percentile of their
    heights, not the lowest, which one frame of noise (or a toe dipping through the floor) would set."""
    return float(np.percentile(np.concatenate([np.asarray(ball)[:, 2] for ball in balls]), 10.0))


def foot_contacts(
    ball: FloatArray,
    *,
    fps: float,
    leg_length: float,
    floor: float | None = None,
    height: float = CONTACT_HEIGHT,
    speed: float = CONTACT_SPEED,
    seconds: float = CONTACT_SECONDS,
) -> list[Contact]:
    """The contacts of a foot whose ball moves through ``ball`` (F, 3), one row a frame at ``fps``: runs of
    frames where the ball is within ``height`` leg lengths of the floor and its horizontal speed is below
    ``speed`` leg lengths per second, lasting ``seconds`` or more (as many frames as that rounds to: a
    frame rate of 120.0005, as the importer sets for a Frame Time of .0083333, still counts 12 frames).

    Parameters
    ----------
    floor : float, optional
        The floor's height; by default ``floor_height(ball)`` (pass both feet's to share one floor).

    Notes
    -----
    A frame's speed is the mean of its horizontal moves from the frame before and to the frame after (one
    of them at the ends). Measured in leg lengths, the same clip gives the same contacts in any unit.
    """
    ball = np.asarray(ball, dtype=np.float64)
    ground = floor_height(ball) if floor is None else floor
    step = np.linalg.norm(np.diff(ball[:, :2], axis=0), axis=1) * fps
    moves = np.concatenate([step[:1], step]) + np.concatenate([step, step[-1:]])
    planted = (ball[:, 2] - ground < height * leg_length) & (moves / 2.0 < speed * leg_length)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], planted.astype(np.int8), [0]])))
    contacts = []
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        if stop - start >= round(seconds * fps):
            skate = np.linalg.norm(ball[start:stop, :2] - ball[start, :2], axis=1).max()
            contacts.append(Contact(int(start), int(stop), float(skate)))
    return contacts
