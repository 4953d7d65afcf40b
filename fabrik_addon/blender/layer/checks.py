"""Whether a bake can key the FABRIK layer and have it play as baked (``check_layer``): the NLA stack evaluated,
nothing active or on a track above playing over the layer's channels, its Action the armature's own and
editable, its strip playing its keys frame for frame at full influence (``check_strip``, which Apply Layer
asks too)."""

from __future__ import annotations

from collections.abc import Collection

import bpy

from .. import compat
from ..rig import check_playing, enum_name
from .stack import Layer, find_layer
from .writer import key_span

#: The channels that move a bone: an active Action keying them plays over the layer.
_MOVING = (".location", ".rotation_quaternion", ".rotation_euler", ".rotation_axis_angle", ".scale")


def check_layer(armature: bpy.types.Object, channels: Collection[tuple[str, int]]) -> None:
    """A layer bake can key ``channels`` (data path, index) of ``armature`` into its FABRIK layer and play them
    there over the animation: the NLA stack is evaluated (not switched off, no track soloed), no Action is
    active above an existing layer, the layer's Action is the armature's own and editable, and its F-curves for
    ``channels`` take keys and play them.

    Raises
    ------
    ValueError
        Naming what is in the way and what to do.
    """
    anim = armature.animation_data
    if anim is None:
        return
    name = f"armature '{armature.name}'"
    if anim.use_tweak_mode:
        raise ValueError(f"{name} is in NLA tweak mode: leave it before baking")
    if not anim.use_nla and len(anim.nla_tracks):
        raise ValueError(
            f"{name} has its NLA tracks switched off (the NLA editor's checkbox beside its name), so a layer would "
            "not play: switch them on, or bake with output 'action'"
        )
    solo = [track.name for track in anim.nla_tracks if track.is_solo]
    if solo:
        raise ValueError(
            f"{name} plays only its soloed NLA track '{solo[0]}', so a layer would not play: un-solo it, or bake "
            "with output 'action'"
        )
    layer = find_layer(armature)
    if layer is None:
        return
    moving = [f.data_path for f in compat.assigned_fcurves(armature) if f.data_path.endswith(_MOVING)]
    if anim.action is not None and moving:
        raise ValueError(
            f"{name} has an active Action, '{anim.action.name}', which moves bones ({moving[0]}...) above its FABRIK "
            "layer (keys made after the layer's bake): apply the layer first (Apply Layer), or push that Action "
            "down and move its track below the layer's in the NLA editor"
        )
    library: bpy.types.Library | None = layer.action.library
    if library is not None:
        raise ValueError(
            f"the FABRIK layer's Action '{layer.action.name}' is linked from the library '{library.filepath}' and "
            "cannot take new keys: make it local first"
        )
    sharing = _other_users(layer.action, armature)
    if sharing:
        raise ValueError(
            f"the FABRIK layer's Action '{layer.action.name}' also plays on {', '.join(map(repr, sharing))}: a bake "
            f"into it would move them too; make the layer single-user (or remove it from them) first"
        )
    for fcurve in layer.fcurves():
        if (fcurve.data_path, fcurve.array_index) in channels:
            where = f"{fcurve.data_path}[{fcurve.array_index}]"
            name = f"the F-curve {where} of the FABRIK layer of '{armature.name}'"
            check_playing(armature, fcurve, name, "remove the modifier first")
    check_strip(layer)
    _check_influence(layer)
    _check_above(layer, channels)


def check_strip(layer: Layer) -> None:
    """The layer's strip plays its keys frame for frame, blended with Combine: a bake keys what it must play.

    Raises
    ------
    ValueError
        Naming what was changed and what to do.
    """
    strip = layer.strip
    if strip is None:
        return
    changed = [
        what
        for what, wrong in (
            (
                f"blends with {enum_name(strip, 'blend_type')} (a layer blends with Combine)",
                strip.blend_type != "COMBINE",
            ),
            ("plays reversed", strip.use_reverse),
            ("is scaled", strip.scale != 1.0),
            ("repeats", strip.repeat != 1.0),
            ("was moved", strip.frame_start != strip.action_frame_start),
            ("holds its keys past them", strip.extrapolation != "NOTHING"),
            ("plays only part of its keys", _trimmed(layer)),
        )
        if wrong
    ]
    if changed:
        raise ValueError(
            f"the FABRIK layer's strip of '{layer.armature.name}' {' and '.join(changed)}, so its keys would not play "
            "on the frames they are baked for: set it back in the NLA editor (Combine, frame for frame), or apply "
            "the layer (Apply Layer) and bake a new one"
        )


def _trimmed(layer: Layer) -> bool:
    """Whether the layer's strip leaves out some of its Action's keys."""
    strip = layer.strip
    assert strip is not None
    spans = [key_span(fcurve) for fcurve in layer.fcurves() if len(fcurve.keyframe_points)]
    return bool(spans) and (
        strip.action_frame_start > min(s for s, _ in spans) or strip.action_frame_end < max(e for _, e in spans)
    )


def _check_influence(layer: Layer) -> None:
    """The layer plays at full influence: a bake keys what it must play at influence 1.

    Raises
    ------
    ValueError
        Where its influence is set or keyed below 1.
    """
    strip = layer.strip
    if strip is None:
        return
    curve = next((f for f in strip.fcurves if f.data_path == "influence"), None)
    if strip.use_animated_influence and curve is not None:
        lowest = min((point.co[1] for point in curve.keyframe_points), default=1.0)
    else:
        lowest = strip.influence if strip.use_animated_influence else 1.0
    if lowest < 1.0:
        raise ValueError(
            f"the FABRIK layer of '{layer.armature.name}' plays at an influence below 1 ({lowest:.2g}), and a bake "
            "keys what it plays at influence 1: key its influence back to 1 to bake it again, or apply the layer "
            "(Apply Layer) and bake a new one"
        )


def _check_above(layer: Layer, channels: Collection[tuple[str, int]]) -> None:
    """No NLA track above the layer animates what the bake keys: it would play over the layer's keys.

    Raises
    ------
    ValueError
        Naming the track and a channel.
    """
    for track in layer.tracks_above():
        if track.mute:
            continue
        for strip in track.strips:
            if strip.mute or strip.action is None:
                continue
            for fcurve in compat.slot_fcurves(strip.action, compat.strip_slot(strip)):
                if (fcurve.data_path, fcurve.array_index) in channels and not fcurve.mute:
                    raise ValueError(
                        f"the NLA track '{track.name}' above the FABRIK layer of '{layer.armature.name}' animates "
                        f"{fcurve.data_path}[{fcurve.array_index}], which it would play over the layer's keys: move "
                        "it below the layer in the NLA editor, or mute it"
                    )


def _other_users(action: bpy.types.Action, armature: bpy.types.Object) -> list[str]:
    """Other objects that play ``action`` in one of their NLA strips or as their active Action."""
    names = []
    for obj in bpy.data.objects:
        anim = obj.animation_data
        if obj == armature or anim is None:
            continue
        strips = (strip for track in anim.nla_tracks for strip in track.strips)
        if anim.action == action or any(strip.action == action for strip in strips):
            names.append(obj.name)
    return names
