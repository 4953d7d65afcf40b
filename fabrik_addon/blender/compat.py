"""What differs between the Blender versions we support, in one place.

- 4.2: an Action holds its F-curves directly (``Action.fcurves``), grouped by ``action_group``.
- 4.4 and 4.5: slotted Actions; an ID animates through the slot assigned to it, whose F-curves live in a
  channelbag of a keyframe strip on a layer. ``ActionChannelbagFCurves.new`` has no group argument yet, so
  new F-curves stay ungrouped there.
- 4.3: ``bpy.app.handlers.blend_import_post`` runs after appending or linking from another file.
- 5.0: ``Action.fcurves`` is gone; ``new`` takes ``group_name``. Selection moved from ``Bone.select`` to
  ``PoseBone.select``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import bpy

SLOTTED_ACTIONS = bpy.app.version >= (4, 4, 0)
GROUP_ON_NEW_FCURVE = bpy.app.version >= (5, 0, 0)


def assigned_fcurves(obj: bpy.types.Object) -> Sequence[bpy.types.FCurve]:
    """The F-curves animating ``obj`` through its active Action (and slot): empty if there are none."""
    anim = obj.animation_data
    if anim is None or anim.action is None:
        return ()
    return tuple(slot_fcurves(anim.action, object_slot(obj)))


def action_fcurves(action: bpy.types.Action) -> list[bpy.types.FCurve]:
    """Every F-curve of ``action``, for every slot (4.4+) it animates."""
    if not SLOTTED_ACTIONS:
        return list(action.fcurves)  # type: ignore[attr-defined]
    return [
        fcurve
        for layer in action.layers
        for strip in layer.strips
        for channelbag in strip.channelbags  # type: ignore[attr-defined]
        for fcurve in channelbag.fcurves
    ]


def fcurves_on_assignment(obj: bpy.types.Object, action: bpy.types.Action) -> list[bpy.types.FCurve]:
    """The F-curves of ``action`` that would animate ``obj`` once it is assigned (``assign_action``): in
    4.2 all of them; from 4.4 on those of the slot Blender would pick for it (``slot_on_assignment``), none if
    it would get a new slot."""
    if not SLOTTED_ACTIONS:
        return list(action.fcurves)  # type: ignore[attr-defined]
    slot = slot_on_assignment(obj, action)
    channelbag = _channelbag(action, slot, ensure=False) if slot is not None else None
    return list(channelbag.fcurves) if channelbag is not None else []


def slot_on_assignment(obj: bpy.types.Object, action: bpy.types.Action) -> bpy.types.ActionSlot | None:
    """The slot of ``action`` that animates ``obj`` (4.4+): its own if ``action`` is its active Action, else the
    one Blender would pick on assigning it (the one it had last, or one named for it); None if it would get a
    new slot, and in 4.2."""
    anim = obj.animation_data
    if not SLOTTED_ACTIONS:
        return None
    if anim is not None and anim.action == action:
        return anim.action_slot  # type: ignore[no-any-return]
    wanted = {f"OB{obj.name}", *((anim.last_slot_identifier,) if anim is not None else ())}
    return next((slot for slot in action.slots if slot.identifier in wanted), None)


def objects_sharing_channels(
    action: bpy.types.Action, obj: bpy.types.Object, slot: bpy.types.ActionSlot | None = None
) -> list[str]:
    """Other objects that keys written for ``obj`` into ``action`` would also animate, and whose channels
    would animate ``obj``: those that play ``action``, as their active Action or in an NLA strip, in 4.2 (an
    Action animates every object it is assigned to with all its F-curves); from 4.4 on those that play it
    through the slot ``obj`` keys (``slot``, by default ``slot_on_assignment``; ``Object.copy`` shares it)."""
    slot = slot if slot is not None else slot_on_assignment(obj, action)
    if SLOTTED_ACTIONS and slot is None:
        return []  # a new slot of its own
    names = []
    for other in bpy.data.objects:
        anim = other.animation_data
        if other == obj or anim is None:
            continue
        plays = [(anim.action, object_slot(other))]
        plays += [(strip.action, strip_slot(strip)) for track in anim.nla_tracks for strip in track.strips]
        if (action, slot) in plays:
            names.append(other.name)
    return names


def action_assignment(obj: bpy.types.Object) -> tuple[bpy.types.Action | None, bpy.types.ActionSlot | None]:
    """The Action assigned to ``obj`` and, from 4.4 on, its slot: what ``restore_action_assignment`` puts back."""
    anim = obj.animation_data
    if anim is None:
        return None, None
    return anim.action, anim.action_slot if SLOTTED_ACTIONS else None


def restore_action_assignment(
    obj: bpy.types.Object, assignment: tuple[bpy.types.Action | None, bpy.types.ActionSlot | None]
) -> None:
    anim = obj.animation_data or obj.animation_data_create()
    action, slot = assignment
    anim.action = action
    if slot is not None:
        anim.action_slot = slot


def assign_action(obj: bpy.types.Object, action: bpy.types.Action) -> bool:
    """Make ``action`` the active Action of ``obj``; whether it then needs a slot of its own (4.4+; give it one
    with ``new_slot`` and ``set_object_slot``).

    Assigning the Action lets Blender pick a slot as it does for users (the one this object had, or one
    named for it); where it picks none, a new slot is to be made, so another object's slot is never shared.
    """
    anim = obj.animation_data or obj.animation_data_create()
    if anim.action != action:
        anim.action = action
    return SLOTTED_ACTIONS and anim.action_slot is None


def set_object_slot(obj: bpy.types.Object, slot: bpy.types.ActionSlot | None) -> None:
    """Animate ``obj`` through ``slot`` of its active Action (4.4+; nothing to do in 4.2)."""
    anim = obj.animation_data
    if SLOTTED_ACTIONS and anim is not None and slot is not None:
        anim.action_slot = slot


def remove_slot(action: bpy.types.Action, slot: bpy.types.ActionSlot) -> None:
    """Remove a slot from an Action (4.4+)."""
    action.slots.remove(slot)


def remove_fcurve(obj: bpy.types.Object, fcurve: bpy.types.FCurve) -> None:
    """Remove one F-curve from ``obj``'s active Action."""
    anim = obj.animation_data
    assert anim is not None
    assert anim.action is not None
    remove_slot_fcurve(anim.action, anim.action_slot if SLOTTED_ACTIONS else None, fcurve)


def slot_fcurves(action: bpy.types.Action, slot: bpy.types.ActionSlot | None) -> list[bpy.types.FCurve]:
    """The F-curves of ``action`` that animate through ``slot`` (4.4+; in 4.2 every F-curve: ``slot`` is None)."""
    if not SLOTTED_ACTIONS:
        return list(action.fcurves)  # type: ignore[attr-defined]
    channelbag = _channelbag(action, slot, ensure=False)
    return list(channelbag.fcurves) if channelbag is not None else []


def find_slot_fcurve(
    action: bpy.types.Action, slot: bpy.types.ActionSlot | None, data_path: str, index: int
) -> bpy.types.FCurve | None:
    """The F-curve of ``action`` (through ``slot``, 4.4+) for ``data_path[index]``, or None."""
    if not SLOTTED_ACTIONS:
        return action.fcurves.find(data_path, index=index)  # type: ignore[attr-defined, no-any-return]
    channelbag = _channelbag(action, slot, ensure=False)
    return None if channelbag is None else channelbag.fcurves.find(data_path, index=index)


def new_slot_fcurve(
    action: bpy.types.Action, slot: bpy.types.ActionSlot | None, data_path: str, index: int, group: str
) -> bpy.types.FCurve:
    """A new F-curve of ``action`` (through ``slot``, 4.4+) for ``data_path[index]``, in ``group`` where the
    version allows (``find_slot_fcurve`` found none)."""
    if not SLOTTED_ACTIONS:
        return action.fcurves.new(data_path, index=index, action_group=group)  # type: ignore[attr-defined, no-any-return]
    channelbag = _channelbag(action, slot, ensure=True)
    assert channelbag is not None
    if GROUP_ON_NEW_FCURVE:
        return channelbag.fcurves.new(data_path, index=index, group_name=group)
    return channelbag.fcurves.new(data_path, index=index)


def remove_slot_fcurve(action: bpy.types.Action, slot: bpy.types.ActionSlot | None, fcurve: bpy.types.FCurve) -> None:
    """Remove one F-curve of ``action`` (through ``slot``, 4.4+)."""
    if not SLOTTED_ACTIONS:
        action.fcurves.remove(fcurve)  # type: ignore[attr-defined]
        return
    channelbag = _channelbag(action, slot, ensure=False)
    assert channelbag is not None
    channelbag.fcurves.remove(fcurve)


def new_slot(action: bpy.types.Action, obj: bpy.types.Object) -> bpy.types.ActionSlot | None:
    """A new slot of ``action`` for ``obj`` (4.4+), named for it; None in 4.2, where an Action has no slots."""
    return action.slots.new(obj.id_type, obj.name) if SLOTTED_ACTIONS else None  # one line: made whole or not


def object_slot(obj: bpy.types.Object) -> bpy.types.ActionSlot | None:
    """The slot ``obj`` animates through in its active Action (4.4+), None in 4.2."""
    anim = obj.animation_data
    return anim.action_slot if SLOTTED_ACTIONS and anim is not None else None


def strip_slot(strip: bpy.types.NlaStrip) -> bpy.types.ActionSlot | None:
    """The slot an NLA strip plays its Action through (4.4+), None in 4.2."""
    return strip.action_slot if SLOTTED_ACTIONS else None  # type: ignore[attr-defined, no-any-return]


def set_strip_slot(strip: bpy.types.NlaStrip, slot: bpy.types.ActionSlot | None) -> None:
    """Play a strip's Action through ``slot`` (4.4+; nothing to do in 4.2)."""
    if SLOTTED_ACTIONS and slot is not None and strip.action_slot != slot:  # type: ignore[attr-defined]
        strip.action_slot = slot  # type: ignore[attr-defined]


def _channelbag(
    action: bpy.types.Action, slot: bpy.types.ActionSlot | None, *, ensure: bool
) -> bpy.types.ActionChannelbag | None:
    """The channelbag of ``slot`` on the action's first keyframe strip (what Blender itself keys into)."""
    if slot is None:
        return None
    if not action.layers:
        if not ensure:
            return None
        action.layers.new("Layer")
    layer = action.layers[0]
    if not layer.strips:
        if not ensure:
            return None
        layer.strips.new(type="KEYFRAME")
    strip = layer.strips[0]
    channelbag: bpy.types.ActionChannelbag | None = strip.channelbag(slot, ensure=ensure)  # type: ignore[attr-defined]
    return channelbag


def file_handlers() -> list[list[Any]]:
    """The handler lists that run when a file's data arrives: ``load_post``, and from 4.3 on
    ``blend_import_post`` (after appending or linking from another file)."""
    handlers = bpy.app.handlers
    lists: list[list[Any]] = [handlers.load_post]
    if hasattr(handlers, "blend_import_post"):
        lists.append(handlers.blend_import_post)
    return lists


def set_bone_selected(obj: bpy.types.Object, bone_name: str, selected: bool) -> None:
    """Select a bone for the user (5.0 moved selection from ``Bone`` to ``PoseBone``)."""
    if bpy.app.version >= (5, 0, 0):
        assert obj.pose is not None
        obj.pose.bones[bone_name].select = selected  # type: ignore[attr-defined]
    else:
        assert isinstance(obj.data, bpy.types.Armature)
        obj.data.bones[bone_name].select = selected  # type: ignore[attr-defined]


def selected_bones(obj: bpy.types.Object) -> list[str]:
    """The names of the armature's selected bones (5.0 moved selection from ``Bone`` to ``PoseBone``)."""
    if bpy.app.version >= (5, 0, 0):
        assert obj.pose is not None
        return [bone.name for bone in obj.pose.bones if bone.select]  # type: ignore[attr-defined]
    assert isinstance(obj.data, bpy.types.Armature)
    return [bone.name for bone in obj.data.bones if bone.select]  # type: ignore[attr-defined]
