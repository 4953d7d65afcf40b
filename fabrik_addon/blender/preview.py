"""Live preview: while an armature's ``live_preview`` is on, FABRIK poses its chain (without keys) whenever the
target moves or the frame changes, so the animator sees the chain follow the target as they drag it.

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

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ..solver import FloatArray
from . import properties
from .adapter import prepare_chain, solve_chain
from .chain import chain_bone_names
from .channels import rotation_property
from .properties import chain_settings, settings_of, solver_settings
from .sampling import current_inputs, walking_frames

#: A rotation channel that moves less than this (radians, or quaternion units) is left as it is.
_UNCHANGED = 1e-6

#: Why the preview of an armature cannot pose it, by armature name; cleared when it can.
_problems: dict[str, str] = {}

_busy = False


def follow(armature: bpy.types.Object, frame: int) -> bool:
    """Pose the chain of ``armature`` so its tip reaches the target, without keying.

    Parameters
    ----------
    armature : bpy.types.Object
        An armature with FABRIK settings (``armature.fabrik``).
    frame : int
        The current frame (named in error messages).

    Returns
    -------
    bool
        Whether the pose changed: nothing is written when the tip is already within tolerance of the target,
        or when solving gives the pose the chain has.

    Raises
    ------
    TypeError, ValueError
        When the settings or the chain cannot be solved, with the same messages as ``api.bake``.
    """
    chain = chain_settings(armature)
    if chain.target is None:
        raise ValueError("pick a target object")
    if not chain.tip_bone:
        raise ValueError("pick a tip bone")
    solver = solver_settings(armature)
    if _tip_distance(armature, chain.tip_bone, chain.target) <= solver.tolerance:
        return False
    prepared = prepare_chain(chain, solver)
    solved = solve_chain(prepared, current_inputs(prepared), np.array([frame]), solver)
    changed = False
    for k, (pose_bone, channels) in enumerate(zip(prepared.chain.pose_bones, solved.channels, strict=True)):
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


def unstretch(armature: bpy.types.Object) -> None:
    """Stretch was turned off while previewing: give the chain's bones back their length (a Y scale of 1),
    which the preview stretched and which a chain solved without stretch must have.

    Parameters
    ----------
    armature : bpy.types.Object
        An armature with FABRIK settings (``armature.fabrik``); nothing happens if they name no chain.
    """
    settings = settings_of(armature)
    try:
        names = chain_bone_names(armature, settings.tip_bone, settings.chain_length)
    except (TypeError, ValueError):
        return  # no chain to give back: the preview shows why
    pose = armature.pose
    assert pose is not None
    for name in names:
        if abs(pose.bones[name].scale[1] - 1.0) > _UNCHANGED:
            pose.bones[name].scale[1] = 1.0


def _tip_distance(armature: bpy.types.Object, tip_bone: str, target: bpy.types.Object) -> float:
    """World distance from the tip bone's tail to the target as last evaluated (infinite if there is no such bone)."""
    pose = armature.pose
    assert pose is not None
    if tip_bone not in pose.bones:
        return float("inf")
    tip = pose.bones[tip_bone]
    return float((armature.matrix_world @ tip.tail - target.matrix_world.translation).length)


def problem(armature: bpy.types.Object) -> str | None:
    """Why the live preview of ``armature`` cannot pose it now, or None (for the panel)."""
    return _problems.get(armature.name) if settings_of(armature).live_preview else None


def _setting_changed(armature: bpy.types.Object, name: str) -> None:
    """A setting the preview uses changed (the property group's listener): turning Stretch off gives the
    bones back their length; then the chain is posed at once, or its problem forgotten if the preview is off."""
    settings = settings_of(armature)
    if name == "use_stretch" and settings.live_preview and not settings.use_stretch:
        unstretch(armature)
    if settings.live_preview:
        scene = bpy.context.scene
        _follow_guarded([armature], scene.frame_current if scene is not None else 0)
    else:
        _problems.pop(armature.name, None)


def _follow_guarded(armatures: list[bpy.types.Object], frame: int) -> None:
    """Pose each armature, noting its problem instead of raising (handlers must not raise)."""
    global _busy
    if _busy or walking_frames():
        return
    _busy = True
    try:
        for armature in armatures:
            try:
                follow(armature, frame)
            except (TypeError, ValueError) as error:
                _problems[armature.name] = str(error)
            else:
                _problems.pop(armature.name, None)
    finally:
        _busy = False


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
    if depsgraph.mode != "VIEWPORT" or view_layer is None or _busy:
        return
    armatures = _previewing(view_layer)
    if armatures:
        _follow_guarded(armatures, scene.frame_current)


@persistent  # type: ignore[untyped-decorator]
def _on_load(*_: object) -> None:
    _problems.clear()


_HANDLERS = (
    (bpy.app.handlers.depsgraph_update_post, _on_update),
    (bpy.app.handlers.frame_change_post, _on_update),
    (bpy.app.handlers.load_post, _on_load),
)


def register() -> None:
    properties.subscribe(_setting_changed)
    for handlers, handler in _HANDLERS:
        if handler not in handlers:
            handlers.append(handler)


def unregister() -> None:
    for handlers, handler in _HANDLERS:
        while handler in handlers:
            handlers.remove(handler)
    properties.unsubscribe(_setting_changed)
    _problems.clear()
