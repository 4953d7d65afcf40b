"""The Python API for scripts: ``bake`` and ``clear``, ``plant_feet`` and ``detect_contacts``, with keyword
arguments.

>>> import bpy
>>> from fabrik_addon import api
>>> report = api.bake(bpy.data.objects["Armature"], bpy.data.objects["Empty"], tip_bone="hand.L", chain_length=3)
>>> report.max_error, report.unreachable_frames

Works with the ``bpy`` module or inside ``blender -b --python``, with or without the add-on enabled. The
keywords become a ``fabrik_addon.settings.BakeSettings``, the one value every entry point (the panel, the
command line) hands to the bake; ``bake_settings`` takes such a value directly, with several chains.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import bpy

from . import blender
from .blender import BakeReport, FootReport, PlantReport, RigBakeReport
from .blender import bake as bake_settings
from .blender import clear as clear_settings
from .planting import PLANT_KEYWORDS, PlantSettings
from .settings import KEYWORDS, BakeSettings, ChainSettings, FrameRange, SolverSettings
from .solver import DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE

__all__ = [
    "BakeReport",
    "BakeSettings",
    "ChainSettings",
    "FootReport",
    "FrameRange",
    "PlantReport",
    "PlantSettings",
    "RigBakeReport",
    "SolverSettings",
    "bake",
    "bake_ik_constraints",
    "bake_settings",
    "clear",
    "clear_settings",
    "detect_contacts",
    "plant_feet",
]


def bake(
    armature: bpy.types.Object,
    target: bpy.types.Object,
    *,
    tip_bone: str,
    chain_length: int = 0,
    frame_start: int | None = None,
    frame_end: int | None = None,
    frame_step: int = 1,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    method: str = "fabrik",
    warm_start: bool = True,
    action_name: str | None = None,
    pole_target: bpy.types.Object | None = None,
    pole_angle: float = 0.0,
    use_stretch: bool = False,
    target_bone: str = "",
    pole_bone: str = "",
    use_rotation: bool = False,
    rotation_weight: float = 1.0,
    weight: float = 1.0,
    soft_reach: float = 0.0,
    progress: Callable[[float], None] | None = None,
) -> BakeReport:
    """Key the rotations of a chain of bones so its tip follows a target on every frame.

    Parameters
    ----------
    armature : bpy.types.Object
        An armature object.
    target : bpy.types.Object
        Any object: its evaluated world location on each frame is the goal for the tail of ``tip_bone``
        (with ``target_bone``, an armature whose bone's head is the goal).
    tip_bone : str
        The last bone of the chain.
    chain_length : int
        Bones in the chain, counted from ``tip_bone`` up through its parents as Blender's IK constraint
        counts them; 0 goes up to the root bone.
    frame_start, frame_end : int, optional
        The frames to bake, both included; the scene's frame range by default.
    frame_step : int
        Key every ``frame_step``-th frame from ``frame_start``, and ``frame_end`` too (where the step passes it
        by), so the keys span the range.
    tolerance : float
        How close the tip must come to the target, in world units.
    max_iterations, method, warm_start
        As for ``fabrik_addon.solver.solve_frames``.
    action_name : str, optional
        Bake into this Action (created if missing) and make it the armature's active Action; by default
        the keys go into the armature's active Action, one being created if it has none.
    pole_target : bpy.types.Object, optional
        The chain bends toward this object, as with the pole target of Blender's IK constraint.
    pole_angle : float
        Radians, with the meaning of the IK constraint's Pole Angle: the root bone's X axis, turned toward
        its Z axis by this angle, faces the pole.
    use_stretch : bool
        Let bones lengthen, each by its IK Stretch share, to reach a target beyond the chain's length, as
        the IK constraint's Stretch option does; their Y scale is then keyed too.
    target_bone, pole_bone : str
        A bone of the target (pole) armature, as the IK constraint's Bone and Pole Bone: the goal is its
        head in world space. It may be a bone of the chain's own armature, outside the chain and not moving
        with it.
    use_rotation : bool
        The tip bone also turns to the target's world orientation (the bone's, with ``target_bone``), as the
        IK constraint's Rotation option; within the tip bone's limits, the nearest orientation they allow.
    rotation_weight : float
        From 0.01 to 1: how far the tip bone turns toward the target's orientation from the one it would
        take without ``use_rotation``.
    weight : float
        How hard the tip pulls when the chain shares bones with others baked with it (``bake_settings``
        with several chains: they are solved as one tree); a single chain ignores it.
    soft_reach : float
        World units (>= 0): over this distance short of full extension the chain eases straight instead of
        snapping straight, so a leg reaching for a far pin does not pop; the tip stops short of a target that
        far out (those frames count as out of reach). 0 (the default) is off, and so is ``use_stretch``.
    progress : callable, optional
        Called with the fraction done, from 0 to 1.

    Returns
    -------
    BakeReport

    Raises
    ------
    TypeError, ValueError
        For bad input, with a message naming what is wrong. Nothing is written then: the bake either
        completes or leaves the file as it was.

    Notes
    -----
    Each bone's IK settings (Bone Properties, Inverse Kinematics: Lock, Limit and Stretch per axis) are
    honoured as Blender's IK constraint honours them; with limits, a pole or stretch the bake solves on the
    bones' rotations (``fabrik_addon.solver.solve_pose``; FABRIK only, not CCD).

    Only the rotation channels of the chain's bones are keyed, in each bone's own rotation mode (and, with
    ``use_stretch``, their Y scale). Their keys from ``frame_start`` to ``frame_end`` are replaced; every
    other key and channel stays as it was.
    """
    # The keywords are the settings value's own (a test holds the signature to ``KEYWORDS`` and ``DEFAULTS``).
    keywords = {name: value for name, value in locals().items() if name in KEYWORDS}
    settings = BakeSettings.from_keywords(armature, target, **keywords)
    return bake_settings(settings, progress).chains[0]


def bake_ik_constraints(
    armature: bpy.types.Object,
    *,
    frame_start: int | None = None,
    frame_end: int | None = None,
    frame_step: int = 1,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    after: str = "mute",
    progress: Callable[[float], None] | None = None,
) -> RigBakeReport:
    """Bake every IK constraint of ``armature`` that is on with FABRIK, in one walk through the frames.

    Each constraint is read as a chain: its target (and Bone), pole target (and Pole Bone) and pole angle,
    chain length, Use Tail, Stretch, Rotation and its weight; its iterations cap the solver when they are
    more than ``max_iterations``. All chains are baked all or nothing, then the constraints are muted
    (``after="mute"``; one whose mute a driver sets is switched off by its influence instead), removed
    (``"remove"``) or kept (``"keep"``), so that the keys show.

    Parameters
    ----------
    armature : bpy.types.Object
    frame_start, frame_end, frame_step, tolerance, max_iterations, progress
        As for ``bake``.
    after : {"mute", "remove", "keep"}

    Returns
    -------
    RigBakeReport
        ``chains``: one ``BakeReport`` per constraint; ``max_error``, ``seconds``, ``timings``.

    Raises
    ------
    TypeError, ValueError
        For bad input or a constraint that cannot be baked (named, with why: see
        ``fabrik_addon.blender.ik_constraints``); nothing is written then.
    """
    frames = FrameRange(frame_start, frame_end, frame_step)
    solver = SolverSettings(tolerance=tolerance, max_iterations=max_iterations)
    return blender.bake_ik_constraints(armature, frames, solver, after=after, progress=progress)


def clear(
    armature: bpy.types.Object,
    *,
    tip_bone: str,
    chain_length: int = 0,
    frame_start: int | None = None,
    frame_end: int | None = None,
) -> int:
    """Remove the rotation and Y scale keys of a chain's bones from ``frame_start`` to ``frame_end``.

    Parameters
    ----------
    armature : bpy.types.Object
    tip_bone, chain_length
        The chain, as for ``bake``.
    frame_start, frame_end : int, optional
        Both included; the scene's frame range by default.

    Returns
    -------
    int
        How many keys were removed (see ``fabrik_addon.blender.clear.clear``).

    Raises
    ------
    TypeError, ValueError
        For bad input, as ``bake`` raises them; nothing is removed then.
    """
    chain = ChainSettings(armature, None, tip_bone, chain_length)
    return clear_settings(BakeSettings((chain,), FrameRange(frame_start, frame_end)))


def plant_feet(
    armature: bpy.types.Object,
    feet: Sequence[str] | None = None,
    *,
    chain_length: int = 3,
    frame_start: int | None = None,
    frame_end: int | None = None,
    hips_bone: str | None = None,
    use_marks: bool = True,
    contact_height: float = 0.04,
    contact_speed: float = 0.4,
    contact_seconds: float = 0.1,
    contact_gap: int = 1,
    blend_seconds: float = 0.15,
    pin_at: str = "middle",
    hips_speed: float = 0.3,
    hips_seconds: float = 1.0,
    soft_reach: float = 0.01,
    floor: float | None = None,
    tolerance: float = 2e-4,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    action_name: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> PlantReport:
    """Plant the feet of an animated armature (motion capture, a baked rig): through each contact the ball of
    each foot stays on one point, the foot rolling as it was animated; elsewhere each leg keeps its animation.

    Lengths below are in leg lengths (the bones above the foot, hip to ankle), times in seconds, so a clip
    in centimetres and one in metres, at 30 or 120 frames per second, are planted alike.

    Parameters
    ----------
    armature : bpy.types.Object
    feet : sequence of str, optional
        The foot bones: each is the tip of its leg's chain, and its tail (the ball of the foot) is planted. By
        default they are found in the animation: on each leg the highest bone whose tail touches down, left
        then right (``report.feet`` names them, ``report.found_feet`` is True). A bone that is not a foot (a
        shin, the toes, a bone that never comes near the floor) is refused, naming the one it probably meant.
    chain_length : int
        Bones in each leg, counted from the foot up as Blender's IK constraint counts them (>= 2; 3 is foot,
        shin and thigh).
    frame_start, frame_end : int, optional
        The frames planted, both included; by default the frames the rig's animation has keys on (its Action's
        and NLA strips'), within the scene's frame range (the scene's where its F-curves cycle).
    hips_bone : str, optional
        A bone above the legs (the pelvis) lowered, with keys on its Location, far enough that every pin is
        within reach, changing slowly (``hips_seconds``) and by at most ``hips_speed``; by default the hips are
        left alone and the frames whose pins are out of reach are reported.
    use_marks : bool
        Plant the contacts a foot's contact marks say (``detect_contacts``, edited by hand) where it has them.
    contact_height, contact_speed, contact_seconds, contact_gap
        A contact: the ball within ``contact_height`` of the floor, slower horizontally than ``contact_speed``
        per second, for ``contact_seconds`` at least; runs ``contact_gap`` frames apart or less are one.
    blend_seconds : float
        The longest ease into and out of each pin (shorter where contacts are closer together).
    pin_at : {"middle", "start"}
        Where in a contact the ball is pinned: where it is on the contact's middle frame, or its first.
    hips_speed : float
        Per second, the fastest the hips go down or up.
    hips_seconds : float
        How slowly the hips' drop changes: over about this long it eases in and out, and within it the hips
        keep their own motion (a walk's bob); 0: the least drop on each frame.
    soft_reach : float
        A pinned leg eases straight over this distance short of full reach instead of snapping straight;
        lowered hips keep every pin this far inside the reach.
    floor : float, optional
        The floor's height in scene units; by default where the balls rest (the lowest they rest at, but for
        a toe dipping through the floor or a frame of noise).
    tolerance : float
        How close each ball must come to its goal (0.0002 leg lengths: 0.2 mm on a human leg).
    max_iterations, action_name, progress
        As for ``bake``.

    Returns
    -------
    PlantReport
        ``contacts``, ``skate_before`` and ``skate_after`` per foot (scene units, after as Blender evaluates
        the keys), ``frames_out_of_reach``, ``max_error``, ``hips_drop``, ``seconds``.

    Raises
    ------
    TypeError, ValueError
        For bad input, naming what is wrong and what to do; nothing is written then. Legs whose bones have
        constraints (feet driven by IK controls, as Rigify's) are refused.
    """
    keywords = {name: value for name, value in locals().items() if name in PLANT_KEYWORDS}
    return blender.plant_feet(PlantSettings.from_keywords(armature, feet, **keywords), progress)


def detect_contacts(
    armature: bpy.types.Object,
    feet: Sequence[str] | None = None,
    *,
    mark: bool = True,
    chain_length: int = 3,
    frame_start: int | None = None,
    frame_end: int | None = None,
    contact_height: float = 0.04,
    contact_speed: float = 0.4,
    contact_seconds: float = 0.1,
    contact_gap: int = 1,
    floor: float | None = None,
    action_name: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, list[tuple[int, int]]]:
    """Find when each foot is planted in the animation, as ``plant_feet`` does, and with ``mark`` key it as
    the foot's contact marks: its pose bone's ``fabrik_contact`` property, 1 from a contact's first frame and
    0 from the frame after its last (constant keys an animator can move in the Dope Sheet), which
    ``plant_feet`` then plants.

    Parameters are as for ``plant_feet``. Returns, per foot, its contacts as (first, last) frames.
    """
    keywords = {name: value for name, value in locals().items() if name in PLANT_KEYWORDS}
    settings = PlantSettings.from_keywords(armature, feet, **keywords)
    return blender.detect_contacts(settings, mark=mark, progress=progress)
