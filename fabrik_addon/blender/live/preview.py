"""Live preview: while an armature's ``live_preview`` is on, FABRIK poses its enabled chains (without keys)
whenever a target moves or the frame changes, so the animator sees each chain follow its target as they drag
it. The chains are solved one after another (those that share bones together, as one tree), each from the
pose Blender last evaluated: a chain hanging below another one is solved before that one's new pose is
evaluated (which happens after the handler), so it catches up at the next change in the scene.

The handlers stay registered while the add-on is enabled, persistent so that they survive loading a file, and
look at the settings on every call: a file saved with the preview on resumes it when loaded, and nothing is
kept from one file to the next. They only act on the viewport's evaluation (not a render's), and not while a
bake steps through frames.

Recursion: Blender evaluates a pose written in ``depsgraph_update_post`` or ``frame_change_post`` in a second
pass of the same update, without calling the handlers again. A flag still keeps the handlers from re-entering
while they pose (if something evaluates the scene meanwhile), and a pose is written only where it changes, so
the update that a write causes finds the tip on target and does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ...settings import ChainSettings, SolverSettings
from ...solver import FloatArray
from .. import setting_changes
from ..bake import (
    PreparedChain,
    Solved,
    Unit,
    current_inputs,
    goal_matrix,
    groups,
    moved_inputs,
    prepare_chain,
    solve_order,
)
from ..properties import FABRIK_PG_chain, chain_settings, enabled_chains, settings_of, solver_settings
from ..rig import chain_bone_names, rotation_property
from .state import LIVE

#: A rotation channel that moves less than this (radians, or quaternion units) is left as it is.
_UNCHANGED = 1e-6


@dataclass(frozen=True)
class Followed:
    """What posing an armature's enabled chains did.

    Attributes
    ----------
    changed : bool
        Whether any chain's pose changed.
    iterations : dict of int to int
        The solver's iterations for each chain solved, by its place in the list (none for a chain already on
        its goal, which is left as it is).
    problems : dict of int to str
        Why a chain could not be posed, by its place in the list.
    """

    changed: bool
    iterations: dict[int, int]
    problems: dict[int, str]


def follow(armature: bpy.types.Object, frame: int) -> bool:
    """Pose every enabled chain of ``armature`` so its tip reaches its target (``pose_chains``) and note the
    chains that cannot be solved (``problems``); whether any chain's pose changed."""
    followed = pose_chains(armature, frame)
    LIVE.problems[armature.name] = followed.problems
    return followed.changed


def pause(armature_uid: int, paused: bool) -> None:
    """Leave the pose of the armature whose ``session_uid`` is ``armature_uid`` alone (``paused``), or preview
    it again (by its id, not its name, which the user may change meanwhile)."""
    if paused:
        LIVE.paused.add(armature_uid)
    else:
        LIVE.paused.discard(armature_uid)


def pose_chains(armature: bpy.types.Object, frame: int) -> Followed:
    """Pose every enabled chain of ``armature`` so its tip reaches its target, without keying: each alone, or
    with the chains it shares bones with, as one tree (as a bake solves them); a chain that cannot be solved
    is left as it is and its problem noted.

    Parameters
    ----------
    armature : bpy.types.Object
        An armature with FABRIK settings (``armature.fabrik``).
    frame : int
        The current frame (named in error messages).

    Returns
    -------
    Followed
    """
    solver = solver_settings(armature)
    found: dict[int, str] = {}
    wanted: list[tuple[int, ChainSettings[bpy.types.Object]]] = []
    for index, item in enabled_chains(armature):
        try:
            chain = chain_settings(armature, item)
            if chain.target is None:
                raise ValueError("pick a target object")
            if not chain.tip_bone:
                raise ValueError("pick a tip bone")
            wanted.append((index, chain))
        except (TypeError, ValueError) as error:
            found[index] = str(error)
    if all(_settled(chain, solver) for _, chain in wanted):  # the common update: nothing to do, checked cheaply
        return Followed(False, {}, found)
    ready: list[tuple[int, PreparedChain]] = []
    for index, chain in wanted:
        try:
            ready.append((index, prepare_chain(chain, solver)))
        except (TypeError, ValueError) as error:
            found[index] = str(error)
    chains = [prepared for _, prepared in ready]
    units: list[Unit] = []
    for group in groups(chains):
        try:
            units.append(Unit.of(chains, group, solver))
        except (TypeError, ValueError) as error:
            found.update((ready[i][0], str(error)) for i in group)
    try:
        order = solve_order(units)
    except ValueError as error:
        found.update((ready[i][0], str(error)) for unit in units for i in unit.members)
        return Followed(False, {}, found)
    changed = False
    iterations: dict[int, int] = {}
    solved: list[Solved | None] = [None] * len(units)
    for u, hangs in order:
        unit = units[u]
        carried = any(solved[hang.upper] is not None for hang in hangs)  # moved by a unit above: not settled
        if not carried and all(_settled(c.settings, solver) for c in unit.chains):
            continue
        try:
            inputs = moved_inputs([current_inputs(prepared) for prepared in unit.chains], hangs, solved)
            result = unit.solve(inputs, np.array([frame]), solver)
        except (TypeError, ValueError) as error:
            found.update((ready[i][0], str(error)) for i in unit.members)
            continue
        solved[u] = result
        changed |= _pose(result)
        iterations.update(
            (ready[i][0], int(spent[0])) for i, spent in zip(unit.members, result.iterations, strict=True)
        )
    return Followed(changed, iterations, found)


def _settled(chain: ChainSettings[bpy.types.Object], solver: SolverSettings) -> bool:
    """Whether the chain's tip is within tolerance of its goal already, and it has no pole or orientation to
    follow: then solving it again would give the pose it has."""
    return chain.pole_target is None and not chain.use_rotation and tip_distance(chain) <= solver.tolerance


def _pose(solved: Solved) -> bool:
    """Pose a solved unit's bones (its first frame's rotations, and Y scales with stretch), writing only what
    changes; whether anything did."""
    changed = False
    for k, (pose_bone, channels) in enumerate(zip(solved.pose_bones, solved.channels, strict=True)):
        changed |= _set(pose_bone, rotation_property(pose_bone.rotation_mode), channels[0])
        if solved.y_scales is not None:
            changed |= _set(pose_bone, "scale", np.array([1.0, solved.y_scales[0, k], 1.0]))
    return changed


def _set(pose_bone: bpy.types.PoseBone, path: str, values: FloatArray) -> bool:
    """Write ``values`` to the pose bone's property ``path`` unless they are already there; whether it wrote."""
    if np.abs(np.array(getattr(pose_bone, path)) - values).max() <= _UNCHANGED:
        return False
    setattr(pose_bone, path, values.tolist())
    return True


def unstretch(armature: bpy.types.Object, chain: FABRIK_PG_chain) -> None:
    """Stretch was turned off for one of the armature's chains while previewing: give its bones back their
    length (a Y scale of 1), which the preview stretched and which a chain solved without stretch must have.
    Nothing happens if the chain names no bones of the armature."""
    try:
        names = chain_bone_names(armature, chain.tip_bone, chain.chain_length)
    except (TypeError, ValueError):
        return  # no chain to give back: the preview shows why
    pose = armature.pose
    assert pose is not None
    for name in names:
        if abs(pose.bones[name].scale[1] - 1.0) > _UNCHANGED:
            pose.bones[name].scale[1] = 1.0


def tip_distance(chain: ChainSettings[bpy.types.Object]) -> float:
    """World distance from the tip bone's tail to the chain's goal as last evaluated (infinite if a bone named
    is missing)."""
    pose = chain.armature.pose
    assert pose is not None
    assert chain.target is not None
    target_pose = chain.target.pose
    missing_goal = chain.target_bone and (target_pose is None or chain.target_bone not in target_pose.bones)
    if chain.tip_bone not in pose.bones or missing_goal:
        return float("inf")
    tip = chain.armature.matrix_world @ pose.bones[chain.tip_bone].tail
    return float((tip - goal_matrix(chain.target, chain.target_bone).translation).length)


def problems(armature: bpy.types.Object) -> dict[int, str]:
    """Why the live preview of ``armature`` cannot pose some of its chains now, by the chain's place in the
    list (for the panel); empty when it poses them all, or is off."""
    return dict(LIVE.problems.get(armature.name, {})) if settings_of(armature).live_preview else {}


def _setting_changed(armature: bpy.types.Object, group: bpy.types.PropertyGroup, name: str) -> None:
    """A setting the preview uses changed (the property groups' listener): turning a chain's Stretch off gives
    its bones back their length; then the chains are posed at once, or their problems forgotten if the
    preview is off."""
    settings = settings_of(armature)
    if name == "use_stretch" and isinstance(group, FABRIK_PG_chain) and settings.live_preview and not group.use_stretch:
        unstretch(armature, group)
    if settings.live_preview:
        scene = bpy.context.scene
        _follow_guarded([armature], scene.frame_current if scene is not None else 0)
    else:
        LIVE.problems.pop(armature.name, None)


def _follow_guarded(armatures: list[bpy.types.Object], frame: int) -> None:
    """Pose each armature's chains, unless a bake is stepping through frames or the preview is posing already."""
    if LIVE.busy():
        return
    LIVE.posing = True
    try:
        for armature in armatures:
            if armature.session_uid not in LIVE.paused:
                follow(armature, frame)
    finally:
        LIVE.posing = False


def _previewing(view_layer: bpy.types.ViewLayer) -> list[bpy.types.Object]:
    return [
        obj
        for obj in view_layer.objects
        if obj.type == "ARMATURE" and obj.mode != "EDIT" and settings_of(obj).live_preview
    ]


@persistent  # type: ignore[untyped-decorator]
def _on_update(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """``depsgraph_update_post`` and ``frame_change_post``: pose every previewed armature of the view layer."""
    view_layer = depsgraph.view_layer
    if depsgraph.mode != "VIEWPORT" or view_layer is None or LIVE.posing:
        return
    armatures = _previewing(view_layer)
    if armatures:
        _follow_guarded(armatures, scene.frame_current)


@persistent  # type: ignore[untyped-decorator]
def _on_load(*_: object) -> None:
    LIVE.forget()


_HANDLERS = (
    (bpy.app.handlers.depsgraph_update_post, _on_update),
    (bpy.app.handlers.frame_change_post, _on_update),
    (bpy.app.handlers.load_post, _on_load),
)


def register() -> None:
    setting_changes.subscribe(_setting_changed)
    for handlers, handler in _HANDLERS:
        if handler not in handlers:
            handlers.append(handler)


def unregister() -> None:
    for handlers, handler in _HANDLERS:
        while handler in handlers:
            handlers.remove(handler)
    setting_changes.unsubscribe(_setting_changed)
    LIVE.forget()
