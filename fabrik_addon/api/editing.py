"""Editing animation through IK: ``targets_from_animation`` (targets and poles keyed where the chains are in
the animation), ``apply_layer`` (the FABRIK layer, a bake with ``output="layer"``, merged down) and
``reduce_keys`` (keys that exist thinned within an error)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import bpy

from .. import blender
from ..blender import AppliedLayer, TargetsReport
from ..reduction import KeysReport
from ..setting_checks import keywords_checked
from ..settings import FrameRange


@keywords_checked
def targets_from_animation(
    armature: bpy.types.Object,
    *,
    chains: Sequence[str] | None = None,
    frame_start: int | None = None,
    frame_end: int | None = None,
    poles: bool = True,
    replace: bool = False,
    key_error: float = 0.0,
    progress: Callable[[float], None] | None = None,
) -> TargetsReport:
    """Make targets for the armature's chains from its animation: for each chain an Empty keyed on every frame
    where the chain's tip (the tip bone's tail) is, turned as the tip bone where the chain uses Rotation, and for a
    chain of two bones or more a pole Empty keyed beside the bend, with the chain's pole angle set so that a bake
    reproduces the bend. The Empties become the chains' targets and poles; they are named after the chains, sized
    to them, in a collection named after the armature. Baking the chain list toward them (``bake_chains``) gives
    the animation back; moving them edits it.

    Parameters
    ----------
    armature : bpy.types.Object
        An armature with a chain list (the add-on must be enabled).
    chains : sequence of str, optional
        The chains, by name (or tip bone); by default every enabled chain.
    frame_start, frame_end : int, optional
        The frames keyed, both included; the scene's frame range by default.
    poles : bool
        Give chains of two bones or more a pole Empty (True), or leave their poles as they are.
    replace : bool
        Give chains that have a target (or pole) new ones (Empties made here before are keyed again); without
        it such a chain is refused.
    key_error : float
        World units (>= 0; 0, the default, keys every frame): keep the Empties' keys on the fewest frames that
        keep each Empty within ``key_error`` of where the animation has its chain on every frame (and, for a
        target that turns, points a fifth of the chain's length off it), as Blender plays the keys; the report's
        ``keys`` says how many.
    progress : callable, optional
        Called with the fraction done, from 0 to 1.

    Returns
    -------
    TargetsReport
        ``targets`` and ``poles`` (chain name to Empty), ``pole_angles``, ``collection``, ``frames``, ``seconds``,
        ``keys``.

    Raises
    ------
    TypeError, ValueError
        Naming the problem (an unknown chain, a chain with a target already, a missing bone); nothing is made
        then.
    """
    frames = FrameRange(frame_start, frame_end)
    for name, flag in (("poles", poles), ("replace", replace)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    return blender.targets_from_animation(
        armature, chains=chains, frames=frames, poles=poles, replace=replace, key_error=key_error, progress=progress
    )


@keywords_checked
def apply_layer(armature: bpy.types.Object) -> AppliedLayer:
    """Merge the armature's FABRIK layer (a bake with ``output="layer"``) down into the Action below it, and remove
    the layer: each channel it keys is keyed on every frame of the layer's keys with what plays now, so the
    armature plays as it did, from the Action alone (the one the first layer bake pushed down is active again).

    Returns
    -------
    AppliedLayer
        ``action`` (merged into), ``channels`` and ``frames`` (first, last).

    Raises
    ------
    ValueError
        Without a layer, with the layer muted, or where what plays below the layer is not one Action played
        frame for frame; nothing is changed then.
    """
    return blender.apply_layer(armature)


@keywords_checked
def reduce_keys(
    armature: bpy.types.Object,
    bones: Sequence[str] | None = None,
    *,
    key_error: float,
    frame_start: int | None = None,
    frame_end: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> KeysReport:
    """Thin the keys that bones have (motion capture, an older bake) to the fewest frames found that keep every
    bone within ``key_error`` of where its keys put it on every frame, as Blender plays them: its head, its tail
    and points a fifth of its length off its axis, the whole pose weighed at once (a thigh's turn moves the foot),
    each bone (and its location, rotation and scale apart) keyed on frames of its own. All or nothing.

    Parameters
    ----------
    armature : bpy.types.Object
    bones : sequence of str, optional
        The bones whose keys to thin; by default every bone with keys on its location, rotation or scale in the
        armature's active Action.
    key_error : float
        World units (> 0).
    frame_start, frame_end : int, optional
        The frames thinned, both included (the scene's range by default); keys outside them are left as they are,
        and the bones keep a key on both.
    progress : callable, optional
        Called with the fraction done, from 0 to 1.

    Returns
    -------
    KeysReport
        ``keys`` written in the range against ``dense_keys`` (a key on every frame), and ``max_error`` and
        ``p99_error``: how far Blender's evaluation of the new keys puts the bones' points from where the old
        ones did.

    Raises
    ------
    TypeError, ValueError
        Naming the problem: a ``key_error`` that is not a distance above 0, a bone without keys, an F-curve
        that is locked, muted or has a modifier (Cycles aside), keys between frames in the range, a bone that
        something besides its keys moves (a constraint, a driver, NLA strips); nothing is changed then.

    Notes
    -----
    The keys become Bezier keys with Free handles, each segment's handles fitted to the frames it spans.
    """
    frames = FrameRange(frame_start, frame_end)
    return blender.reduce_keys(armature, bones, key_error=key_error, frames=frames, progress=progress)
