"""Baking chains: ``bake`` (one chain toward its target), ``bake_chains`` (an armature's saved chain list, as
the sidebar's Bake button bakes it), ``bake_ik_constraints`` (Blender's IK constraints as the chains) and
``clear``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bpy

from .. import blender
from ..blender import BakeReport, RigBakeReport
from ..blender import bake as bake_settings
from ..blender import clear as clear_settings
from ..setting_checks import key_error_distance, keywords_checked
from ..setting_names import named
from ..settings import KEYWORDS, BakeSettings, ChainSettings, FrameRange, SolverSettings, check_output
from ..solver import DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE


@keywords_checked
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
    output: str = "action",
    key_error: float = 0.0,
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
    output : {"action", "layer"}
        Where the keys go: ``"action"`` (the default) keys the chain into the Action (``action_name``),
        replacing its keys in the range; ``"layer"`` keys it into the armature's FABRIK layer, an NLA track
        over its animation blended with Combine at influence 1, which leaves the Action that was there as it
        was (pushed down beneath the layer if it was the active one): mute the layer, or set its influence to 0,
        for the animation as it was; ``apply_layer`` merges it down. Baking again with ``"layer"`` replaces the
        chain's keys in the same layer, and reads the animation below it.
    key_error : float
        World units (>= 0). 0 (the default) keys every frame. Above 0, the keys are kept on the fewest frames
        found such that, as Blender plays them (Bezier keys, their handles in line), every bone of the chain
        (its head, its tail and points a fifth of its length off its axis) stays within ``key_error`` of the
        solved pose on every frame; each bone keeps keys on frames of its own. The report's ``keys`` says how
        many were kept and how far Blender's evaluation of them strays. A solve that jitters by its tolerance
        cannot be thinned below it: bake with a tolerance well under ``key_error``.
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


@keywords_checked
def bake_chains(
    armature: bpy.types.Object, *, progress: Callable[[float], None] | None = None, **overrides: Any
) -> RigBakeReport:
    """Bake the armature's chain list, saved in the file (the sidebar's list), as the sidebar's Bake button does:
    its enabled chains in the list's order, in one walk through the frames, with the frames, solver and output
    saved on the armature (the Frames and Solver panels, Output), and each chain's Last Bake summary written.

    Parameters
    ----------
    armature : bpy.types.Object
        An armature whose chain list has enabled chains, each with a target. The add-on must be enabled (its
        settings hold the list).
    progress : callable, optional
        Called with the fraction done, from 0 to 1.
    **overrides
        Any of ``frame_start``, ``frame_end``, ``frame_step``, ``tolerance``, ``max_iterations``, ``method``,
        ``warm_start``, ``output``, ``key_error`` and ``action_name`` (as for ``bake``), in place of the
        armature's settings.

    Returns
    -------
    RigBakeReport
        One ``BakeReport`` per enabled chain, in the list's order.

    Raises
    ------
    TypeError, ValueError
        For an unknown or bad override, an armature without enabled chains, a chain without a target, or
        anything ``bake`` refuses; nothing is written then.
    """
    return blender.bake_chains(armature, overrides, progress)


@keywords_checked
def bake_ik_constraints(
    armature: bpy.types.Object,
    *,
    frame_start: int | None = None,
    frame_end: int | None = None,
    frame_step: int = 1,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    after: str = "mute",
    output: str = "action",
    key_error: float = 0.0,
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
    frame_start, frame_end, frame_step, tolerance, max_iterations, output, key_error, progress
        As for ``bake`` (``key_error`` thins every constraint's chain's keys; the report's ``keys`` says how).
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
    check_output(output, None)
    key_error = key_error_distance(key_error, named("key_error"))
    return blender.bake_ik_constraints(
        armature, frames, solver, after=after, output=output, key_error=key_error, progress=progress
    )


@keywords_checked
def clear(
    armature: bpy.types.Object,
    *,
    tip_bone: str,
    chain_length: int = 0,
    frame_start: int | None = None,
    frame_end: int | None = None,
    output: str = "action",
) -> int:
    """Remove the rotation and Y scale keys of a chain's bones from ``frame_start`` to ``frame_end``.

    Parameters
    ----------
    armature : bpy.types.Object
    tip_bone, chain_length
        The chain, as for ``bake``.
    frame_start, frame_end : int, optional
        Both included; the scene's frame range by default.
    output : {"action", "layer"}
        Where the keys are: the Action, or the armature's FABRIK layer (a layer left without keys is removed,
        the Action it pushed down active again), as ``bake``'s ``output``.

    Returns
    -------
    int
        How many keys were removed (see ``fabrik_addon.blender.clear.clear``).

    Raises
    ------
    TypeError, ValueError
        For bad input, as ``bake`` raises them; nothing is removed then.
    """
    check_output(output, None)
    chain = ChainSettings(armature, None, tip_bone, chain_length)
    return clear_settings(BakeSettings((chain,), FrameRange(frame_start, frame_end), output=output))


@keywords_checked
def armatures_with_chains() -> list[bpy.types.Object]:
    """The armatures of the open file with an enabled chain in their chain list (what ``bake_chains`` bakes),
    read with or without the add-on enabled."""
    return blender.armatures_with_chains()
