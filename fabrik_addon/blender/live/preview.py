"""Live preview: while an armature's ``live_preview`` is on, FABRIK poses its enabled chains (without keys)
whenever a target moves or the frame changes, so the animator sees each chain follow its target as they drag
it. The chains are solved as a bake solves them (those that share bones together, as one tree; a chain hanging
below another after it, from where its new pose puts it, in the same update), each from the pose Blender last
evaluated: on a frame change, the pose its animation gives there.

Each update does what it must and no more. What the preview checked of an armature's chains is kept between
updates (``rig_plan.RigPlan``) and made again only when the settings or the rig change, or on undo, redo,
loading a file and a change of relations. An update that touches none of the objects a plan watches (the
armature, the targets and poles) costs nothing more; on one that does, the pose is read in bulk
(``PoseRows``), a unit is solved only if something it reads has changed and its tips are not on their goals
already, every bone that moved is written back in one call per property, and Blender evaluates the pose once,
in the same update.

The handlers stay registered while the add-on is enabled, persistent so that they survive loading a file, and
look at the settings on every call: a file saved with the preview on resumes it when loaded, and nothing is
kept from one file to the next. They only act on the viewport's evaluation (not a render's), and not while a
bake steps through frames.

Recursion: Blender evaluates a pose written in ``depsgraph_update_post`` or ``frame_change_post`` in a second
pass of the same update, without calling the handlers again. A flag still keeps the handlers from re-entering
while they pose (if something evaluates the scene meanwhile), and a pose is written only where it changes, so
an update after a write finds the unit's inputs as it left them and does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from bpy.app.handlers import persistent
from numpy.typing import NDArray

from ...settings import ChainSettings, SolverSettings
from .. import setting_changes
from ..bake import Solved, goal_matrix, moved_inputs
from ..properties import FABRIK_PG_chain, settings_of
from ..rig import chain_bone_names
from .pose_rows import UNCHANGED, PoseRows
from .rig_plan import RigPlan, UnitPlan, make_plan
from .state import LIVE
from .updates import Touched


@dataclass(frozen=True)
class Followed:
    """What posing an armature's enabled chains did.

    Attributes
    ----------
    changed : bool
        Whether any chain's pose changed.
    iterations : dict of int to int
        The solver's iterations for each chain solved, by its place in the list (none for a chain already on
        its goal, or whose inputs did not change, which is left as it is).
    problems : dict of int to str
        Why a chain could not be posed, by its place in the list.
    """

    changed: bool
    iterations: dict[int, int]
    problems: dict[int, str]


def follow(armature: bpy.types.Object, frame: int, check_rig: bool = True) -> bool:
    """Pose every enabled chain of ``armature`` so its tip reaches its target, with the armature's plan (made
    again if its settings, or with ``check_rig`` its rig, changed), and note the chains that cannot be solved
    (``problems``); whether any chain's pose changed."""
    plan = LIVE.plans.get(armature.session_uid)
    if plan is None or plan.armature != armature or not plan.holds(check_rig):
        plan = LIVE.plans[armature.session_uid] = make_plan(armature)
    followed = pose_with(plan, frame)
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
    """Pose every enabled chain of ``armature`` so its tip reaches its target, without keying, each checked
    anew: each alone, or with the chains it shares bones with, as one tree (as a bake solves them); a chain
    that cannot be solved is left as it is and its problem noted.

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
    return pose_with(make_plan(armature), frame)


def pose_with(plan: RigPlan, frame: int) -> Followed:
    """Pose the chains of ``plan`` as Blender evaluated the scene last: read the pose in bulk, solve each unit
    in order whose inputs changed since it was solved (or that hangs below a unit solved now) and whose tips
    are not all on their goals already, and write every bone that moved.

    Returns
    -------
    Followed
    """
    found = dict(plan.problems)
    iterations: dict[int, int] = {}
    if not plan.units:
        return Followed(False, iterations, found)
    rows = PoseRows(plan.armature, plan.reads)
    solved: list[Solved | None] = [None] * len(plan.units)
    looked: dict[int, list[NDArray[np.float32]]] = {}
    for u, hangs in plan.order:
        unit = plan.units[u]
        goals = unit.goals()
        fingerprint = unit.fingerprint(rows, goals)
        carried = any(solved[hang.upper] is not None for hang in hangs)  # moved by a unit above: not settled
        unchanged = unit.last is not None and np.array_equal(fingerprint, unit.last)
        if not carried and (unchanged or _settled(unit, plan.solver)):
            unit.last = fingerprint
            continue
        unit.last = None
        try:
            inputs = moved_inputs(unit.inputs(rows, goals), hangs, solved)
            result = unit.unit.solve(inputs, np.array([frame]), plan.solver)
        except (TypeError, ValueError) as error:
            found.update((index, str(error)) for index in unit.members)
            continue
        solved[u] = result
        _set(rows, unit, result)
        looked[u] = goals
        iterations.update((i, int(spent[0])) for i, spent in zip(unit.members, result.iterations, strict=True))
    changed = rows.write()
    for u, goals in looked.items():  # what the unit reads now, its bones as it left them
        plan.units[u].last = plan.units[u].fingerprint(rows, goals)
    return Followed(changed, iterations, found)


def _set(rows: PoseRows, unit: UnitPlan, solved: Solved) -> None:
    """Set a solved unit's first frame's rotations (and Y scales, with stretch) in ``rows``."""
    for name in set(unit.channels):
        picked = [k for k, channel in enumerate(unit.channels) if channel == name]
        rows.set(name, unit.bones[picked], np.array([solved.channels[k][0] for k in picked]))
    if solved.y_scales is not None:
        rows.set("scale", unit.bones, solved.y_scales[0], column=1)


def _settled(unit: UnitPlan, solver: SolverSettings) -> bool:
    """Whether every tip of the unit is within tolerance of its goal already, and none has a pole or
    orientation to follow, nor eases in near its reach (soft reach may pull a tip on its target back): then
    solving it again would give the pose it has."""
    return all(
        chain.pole_target is None
        and not chain.use_rotation
        and not (chain.soft_reach > 0.0 and not chain.use_stretch)
        and tip_distance(chain) <= solver.tolerance
        for chain in unit.settings
    )


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
        if abs(pose.bones[name].scale[1] - 1.0) > UNCHANGED:
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
        LIVE.plans.pop(armature.session_uid, None)


def _follow_guarded(armatures: list[bpy.types.Object], frame: int, touched: Touched | None = None) -> None:
    """Pose each armature's chains, unless a bake is stepping through frames or the preview is posing already.
    With ``touched`` (what a depsgraph update or frame change touched), only the armatures whose plans watch
    something it touched, their rigs checked only if the armature was touched by a depsgraph update (``rig``);
    without, every armature."""
    if LIVE.busy():
        return
    LIVE.posing = True
    try:
        if len(LIVE.plans) > len(armatures):  # an armature was deleted, or its preview turned off
            uids = {armature.session_uid for armature in armatures}
            for uid in [uid for uid in LIVE.plans if uid not in uids]:
                del LIVE.plans[uid]
        for armature in armatures:
            uid = armature.session_uid
            if uid in LIVE.paused:
                continue
            plan = LIVE.plans.get(uid)
            if touched is not None and plan is not None and not touched.any(plan.watched):
                continue  # nothing the chains read has changed
            follow(armature, frame, check_rig=touched is None or (touched.rig and uid in touched.ids))
    finally:
        LIVE.posing = False


def _previewing(view_layer: bpy.types.ViewLayer) -> list[bpy.types.Object]:
    return [
        obj
        for obj in view_layer.objects
        if obj.type == "ARMATURE" and obj.mode != "EDIT" and settings_of(obj).live_preview
    ]


def _on_change(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph, rig: bool) -> None:
    """Pose every previewed armature of the view layer that the update touched (``rig``: the update may have
    edited a rig)."""
    view_layer = depsgraph.view_layer
    if depsgraph.mode != "VIEWPORT" or view_layer is None or LIVE.posing:
        return
    armatures = _previewing(view_layer)
    if not armatures:
        return
    touched = Touched.of(depsgraph, rig)
    if touched.relations:
        LIVE.plans.clear()
    _follow_guarded(armatures, scene.frame_current, touched)


@persistent  # type: ignore[untyped-decorator]
def _on_update(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """``depsgraph_update_post``: something was edited (a target moved, a bone posed, a rig edited)."""
    _on_change(scene, depsgraph, rig=True)


@persistent  # type: ignore[untyped-decorator]
def _on_frame_change(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """``frame_change_post``: the animation moved what it animates; no rig was edited."""
    _on_change(scene, depsgraph, rig=False)


@persistent  # type: ignore[untyped-decorator]
def _on_load(*_: object) -> None:
    LIVE.forget()


@persistent  # type: ignore[untyped-decorator]
def _on_undo(*_: object) -> None:
    """An undo or redo reads the file anew, every armature with it: the plans go before their data does."""
    LIVE.plans.clear()


_HANDLERS = (
    (bpy.app.handlers.depsgraph_update_post, _on_update),
    (bpy.app.handlers.frame_change_post, _on_frame_change),
    (bpy.app.handlers.load_post, _on_load),
    (bpy.app.handlers.undo_pre, _on_undo),
    (bpy.app.handlers.redo_pre, _on_undo),
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
