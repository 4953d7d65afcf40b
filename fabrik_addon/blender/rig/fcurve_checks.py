"""Whether an F-curve takes keys and plays them as keyed (not locked, muted, changed or repeated by a modifier), whether
NLA strips play beneath an Action, and how Blender's interface names an enum value: the checks a writer of keys
and the bake's refusals share."""

from __future__ import annotations

from typing import TypeGuard

import bpy


def nla_plays(anim: bpy.types.AnimData | None) -> TypeGuard[bpy.types.AnimData]:
    """Whether Blender plays NLA strips of the animation data ``anim`` (beneath its active Action, if any)."""
    return anim is not None and anim.use_nla and any(not t.mute and len(t.strips) for t in anim.nla_tracks)


def check_unlocked(obj: bpy.types.Object, fcurve: bpy.types.FCurve) -> None:
    """A locked F-curve, or one in a locked group, takes no keys and loses none, as with Blender's own keying.

    Raises
    ------
    ValueError
        Naming the F-curve and what to unlock.
    """
    locked = "its group" if fcurve.group is not None and fcurve.group.lock else "it" if fcurve.lock else ""
    if locked:
        raise ValueError(
            f"the F-curve {fcurve.data_path}[{fcurve.array_index}] of '{obj.name}' is locked: unlock {locked} first"
        )


def check_playing(
    obj: bpy.types.Object, fcurve: bpy.types.FCurve, name: str, cycled: str, doing: str = "baking"
) -> None:
    """An F-curve (``name`` says whose) takes keys and plays them as keyed: not locked (``check_unlocked``), not
    muted, no modifier that changes its values, and no Cycles modifier (it would repeat the new keys on every
    frame its cycle covers, outside the frames written too); ``cycled`` says what to do about one, ``doing``
    what writes the keys ("baking").

    Raises
    ------
    ValueError
        Naming the F-curve and what to do.
    """
    check_unlocked(obj, fcurve)
    if fcurve.mute:
        raise ValueError(f"{name} is muted, so its keys do not play: unmute it before {doing}")
    for modifier in fcurve.modifiers:
        if modifier.mute:
            continue
        if modifier.type != "CYCLES":
            raise ValueError(
                f"{name} has a {enum_name(modifier, 'type')} modifier, which changes the values its keys play: "
                f"remove it, or mute it, before {doing}"
            )
        assert isinstance(modifier, bpy.types.FModifierCycles)
        if modifier.mode_before != "NONE" or modifier.mode_after != "NONE":
            raise ValueError(
                f"{name} has a Cycles modifier, which repeats its keys before and after them: new keys would be "
                f"repeated too, changing frames outside those written; {cycled}"
            )


def enum_name(struct: bpy.types.bpy_struct, prop: str) -> str:
    """The name Blender's interface shows for the value of ``struct``'s enum property ``prop`` ("Noise")."""
    rna = struct.bl_rna.properties[prop]
    assert isinstance(rna, bpy.types.EnumProperty)
    return str(rna.enum_items[getattr(struct, prop)].name)
