"""Planting feet on an armature's animation: ``plant_feet`` and ``detect_contacts``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import bpy

from .. import blender
from ..blender import PlantReport
from ..planting import PLANT_KEYWORDS, PlantSettings
from ..setting_checks import keywords_checked
from ..solver import DEFAULT_MAX_ITERATIONS


@keywords_checked
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
    output: str = "action",
    key_error: float = 0.0,
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
    max_iterations, action_name, output, progress
        As for ``bake``: with ``output="layer"`` the legs' and the hips' keys go into the FABRIK layer.
    key_error : float
        World units (>= 0; 0, the default, keys every frame). Above 0, the legs' rotation keys and the hips'
        location keys are kept on the fewest frames found that keep every bone of the legs and the hips within
        ``key_error`` of the planted pose, and every pinned ball within ``key_error`` of its pin, on every frame,
        as Blender plays them (see ``bake``); ``report.keys`` says how many.

    Returns
    -------
    PlantReport
        ``contacts``, ``skate_before`` and ``skate_after`` per foot (scene units, after as Blender evaluates
        the keys), ``frames_out_of_reach``, ``max_error``, ``hips_drop``, ``seconds``, ``keys``.

    Raises
    ------
    TypeError, ValueError
        For bad input, naming what is wrong and what to do; nothing is written then. Legs whose bones have
        constraints (feet driven by IK controls, as Rigify's) are refused.
    """
    keywords = {name: value for name, value in locals().items() if name in PLANT_KEYWORDS}
    return blender.plant_feet(PlantSettings.from_keywords(armature, feet, **keywords), progress)


@keywords_checked
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
