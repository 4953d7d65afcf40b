"""What a bake refuses, checked before anything is written, each check raising an error that names what is wrong
and what to do: the armature can be edited, the target and pole are objects Blender evaluates, the chain's
bones can be turned as the solver turns them, the method can honour the chain, the keys can go into the Action
and play there. Each check and its message is written here once; ``plan`` runs them in order. (What would
override the keys or move a goal with the chain: ``conflicts``; what the scene does on each frame, once it is
read: ``inputs``.)"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable

import bpy
import numpy as np

from ...setting_names import named
from ...settings import ChainSettings
from .. import compat
from ..rig import ROTATION_PATHS, ArmatureChain, armature_data, bone_path, check_playing, object_kind
from ..units import scene_length

#: The keyword that names a bone of each kind of goal.
_BONE_KEYWORDS = {"target": "target_bone", "pole target": "pole_bone"}
#: The channels a bake keys on a chain bone.
_CHAIN_CHANNELS = (*ROTATION_PATHS, "scale")


def current_scene() -> bpy.types.Scene:
    """The scene a bake steps through."""
    scene = bpy.context.scene
    if scene is None:
        raise RuntimeError("there is no active scene to bake in")
    return scene


def check_time_unmapped(scene: bpy.types.Scene) -> None:
    """The scene plays each frame's animation at that frame: Time Stretching (``frame_map_old`` and
    ``_new``) would play the keys solved for one frame at another."""
    render = scene.render
    if render.frame_map_old != render.frame_map_new:
        raise ValueError(
            f"the scene '{scene.name}' remaps time (Time Stretching, in the Output properties' Frame Range: Old "
            f"{render.frame_map_old}, New {render.frame_map_new}), so its animation plays at other frames than it "
            "is keyed on: set Old and New to the same value to bake"
        )


def check_armature(armature: object) -> bpy.types.Object:
    """An armature object whose pose and animation can be edited."""
    data = armature_data(armature)
    assert isinstance(armature, bpy.types.Object)  # armature_data raised the TypeError otherwise
    library: bpy.types.Library | None = armature.library
    if library is not None:
        raise ValueError(
            f"armature '{armature.name}' is linked from the library '{library.filepath}' and cannot be "
            "edited: make it local (or a library override) first"
        )
    override: bpy.types.IDOverrideLibrary | None = armature.override_library
    if override is not None and override.is_system_override:
        raise ValueError(
            f"armature '{armature.name}' is a system library override and cannot be edited: make it editable first"
        )
    if armature.mode == "EDIT" or data.is_editmode:
        through = "" if armature.mode == "EDIT" else f" (its Armature '{data.name}' is edited through another object)"
        raise ValueError(f"armature '{armature.name}' is in Edit Mode{through}: switch to Object or Pose Mode to bake")
    return armature


def check_goal(
    obj: object, bone: str, role: str, armature: bpy.types.Object, *others: tuple[bpy.types.Object, str]
) -> bpy.types.Object:
    """A target or pole (``role``): an object, or a bone of an armature object (``bone``); not the chain's
    armature itself (but one of its bones may be), nor one of ``others`` (the chain's other goals, as
    (object, bone) pairs); evaluated in the view layer."""
    keyword = role.replace(" ", "_")
    if not isinstance(obj, bpy.types.Object):
        raise TypeError(f"{keyword} must be a Blender Object, got {type(obj).__name__}")
    if bone:
        bones = armature_data(obj).bones if obj.type == "ARMATURE" else None
        if bones is None:
            raise ValueError(f"the {role} '{obj.name}' is {object_kind(obj)}: a bone needs an armature")
        if bone not in bones:
            close = difflib.get_close_matches(bone, bones.keys(), n=3)
            hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
            raise ValueError(f"the {role} '{obj.name}' has no bone {bone!r}{hint}")
    elif obj == armature:
        raise ValueError(
            f"the {role} cannot be the armature '{armature.name}' itself: pick an Empty or another object, "
            f"or one of its bones as the {named(_BONE_KEYWORDS[role])}"
        )
    for other, other_bone in others:
        if obj == other and bone == other_bone:
            raise ValueError(
                f"the {role} cannot be the target '{_goal_name(other, other_bone)}' too: the chain would not bend"
            )
    check_evaluated(obj, role)
    return obj


def _goal_name(obj: bpy.types.Object, bone: str) -> str:
    return f"{obj.name}/{bone}" if bone else obj.name


def check_evaluated(obj: bpy.types.Object, role: str) -> None:
    """Blender only evaluates objects in the view layer that are not disabled in viewports (hidden with the
    eye icon is fine): anything else would be read stale and baked wrong."""
    view_layer = bpy.context.view_layer
    assert view_layer is not None
    # Asking for visibility first brings the view layer up to date with its collections: an object linked
    # since the last update is not in ``view_layer.objects`` until then.
    visible = obj.visible_get() or obj.hide_get()
    # Not looked up by name: a library override and its linked original share one.
    in_layer = any(other == obj for other in view_layer.objects)
    if not in_layer or obj.hide_viewport or not visible:
        raise ValueError(
            f"the {role} '{obj.name}' is not evaluated in the view layer '{view_layer.name}': it is not in it, "
            "or it or its collection is disabled in viewports; link it to the scene and enable it to bake"
        )


def check_goals(
    settings: ChainSettings[bpy.types.Object], armature: bpy.types.Object
) -> tuple[bpy.types.Object, bpy.types.Object | None]:
    """A chain's target and pole (``check_goal``), and the armature evaluated: the goals, checked."""
    target = check_goal(settings.target, settings.target_bone, "target", armature)
    check_evaluated(armature, "armature")
    pole = settings.pole_target
    if pole is not None:
        pole = check_goal(pole, settings.pole_bone, "pole target", armature, (target, settings.target_bone))
    elif settings.pole_bone:
        raise ValueError(
            f"{named('pole_bone')} '{settings.pole_bone}' names a bone of no pole target: pick the "
            f"{named('pole_target')}"
        )
    return target, pole


def check_tips_apart(chains: Iterable[ChainSettings[bpy.types.Object]]) -> None:
    """No two chains end at the same bone: its tail follows one target (chains given, their targets checked)."""
    by_tip: dict[tuple[bpy.types.Object, str], list[str]] = {}
    for chain in chains:
        goal = "its animation" if chain.target is None else f"'{_goal_name(chain.target, chain.target_bone)}'"
        by_tip.setdefault((chain.armature, chain.tip_bone), []).append(goal)
    for (armature, tip), targets in by_tip.items():
        if len(targets) > 1:
            raise ValueError(
                f"{len(targets)} chains end at bone '{tip}' of armature '{armature.name}', toward {joined(targets)}: "
                "a bone's tail follows one target; disable or remove all but one of them, or end them at other bones"
            )


def joined(items: list[str]) -> str:
    """``items`` listed in words: "a, b and c"."""
    return f"{', '.join(items[:-1])} and {items[-1]}" if len(items) > 1 else "".join(items)


def check_chain_bones(chain: ArmatureChain) -> None:
    """Every bone but the chain's root inherits its parent's rotation and scale, as the solver poses them."""
    bones = armature_data(chain.armature).bones
    names = chain.bone_names
    for name in names[1:]:
        bone = bones[name]
        if not bone.use_inherit_rotation:
            raise ValueError(f"bone '{name}' does not inherit its parent's rotation (Inherit Rotation is off)")
        if bone.inherit_scale in {"NONE", "NONE_LEGACY"}:
            raise ValueError(
                f"bone '{name}' does not inherit its parent's scale (Inherit Scale is {bone.inherit_scale})"
            )


def check_stretch_inheritance(armature: bpy.types.Object, names: Iterable[str], whose: str) -> None:
    """Bones that stretch (``names``, the chain's or tree's bones but its root) inherit their parent's scale
    fully, so a stretched parent carries them as the solver stretches them; ``whose`` names the bones' owner
    in the message ("chain's", "tree's")."""
    bones = armature_data(armature).bones
    for name in names:
        if bones[name].inherit_scale != "FULL":
            raise ValueError(
                f"{named('use_stretch')} needs the {whose} bones to inherit their parent's scale fully: bone "
                f"'{name}' has Inherit Scale '{bones[name].inherit_scale}' (set it to Full)"
            )


def check_fabrik(method: str, needs: str) -> None:
    """Only FABRIK solves bones with limits, poles and stretch, and chains that share bones: ``needs`` says
    which the bake has."""
    if method != "fabrik":
        raise ValueError(
            f"{named('method')} {method!r} does not support joint limits, a pole target or stretch, nor chains that "
            f"share bones ({needs}): use 'fabrik'"
        )


def check_writable(
    armature: bpy.types.Object,
    action_name: str | None,
    remedy: str = "make it single-user first (Object > Relations > Make Single User > Object Animation), or bake "
    "as a layer (Output 'layer'), whose keys are the armature's own",
) -> None:
    """The keys can go into the action: not linked, not shared with other objects (``remedy`` says what to do
    then), the armature not in NLA tweak mode."""
    anim = armature.animation_data
    if anim is not None and anim.use_tweak_mode:
        raise ValueError(f"armature '{armature.name}' is in NLA tweak mode: leave it before baking")
    action = bpy.data.actions.get(action_name) if action_name else (anim.action if anim is not None else None)
    if action is None:
        return
    library: bpy.types.Library | None = action.library
    if library is not None:
        raise ValueError(
            f"the action '{action.name}' is linked from the library '{library.filepath}' and cannot take "
            "new keys: make it local first"
        )
    sharing = compat.objects_sharing_channels(action, armature)
    if sharing:
        slot = compat.slot_on_assignment(armature, action)
        how = f"through the same slot '{slot.identifier}'" if slot is not None else "with all its channels"
        raise ValueError(
            f"the action '{action.name}' also animates {', '.join(repr(name) for name in sharing)} {how}, so keys "
            f"for '{armature.name}' would move them too: {remedy}"
        )


def check_channel_fcurves(
    armature: bpy.types.Object, action_name: str | None, channels: Collection[tuple[str, int]]
) -> None:
    """The F-curves that the keys of ``channels`` (data path, index) go into take them and play them: none is
    locked (see ``rig.check_unlocked``) or muted, or has a modifier that changes its values (Cycles is
    allowed: it repeats the keys outside their range only, and the bake keys every frame of its own).
    Checked before anything is written."""
    anim = armature.animation_data
    current = anim.action if anim is not None else None
    action = bpy.data.actions.get(action_name) if action_name else current
    if action is None:
        return
    fcurves = compat.assigned_fcurves(armature) if action == current else compat.fcurves_on_assignment(armature, action)
    for fcurve in fcurves:
        if (fcurve.data_path, fcurve.array_index) in channels:
            check_playing(
                armature, fcurve, f"the F-curve {fcurve.data_path}[{fcurve.array_index}] of '{armature.name}'"
            )


def check_action_switch(armature: bpy.types.Object, action_name: str | None, chain_bones: Collection[str]) -> None:
    """Baking into ``action_name`` makes that Action the armature's active one: refused when the switch would
    change more than the chains' channels (``chain_bones``' rotations and scales), stopping the current
    Action's other channels or starting the named one's."""
    if action_name is None:
        return
    anim = armature.animation_data
    current = anim.action if anim is not None else None
    named: bpy.types.Action | None = bpy.data.actions.get(action_name)
    if current is not None and named != current:
        stopped = _other_channels(compat.assigned_fcurves(armature), chain_bones)
        if stopped:
            raise ValueError(
                f"baking into the Action '{action_name}' would make it active in place of '{current.name}', whose "
                f"other channels ({stopped}) would stop playing: leave action_name out to bake into "
                f"'{current.name}', or move those channels into '{action_name}' first"
            )
    if named is not None and named != current:
        started = _other_channels(compat.fcurves_on_assignment(armature, named), chain_bones)
        if started:
            raise ValueError(
                f"the Action '{action_name}' also animates {started}, which would start playing on armature "
                f"'{armature.name}': bake into a new Action, or into the active one"
            )


def _other_channels(fcurves: Iterable[bpy.types.FCurve], chain_bones: Collection[str]) -> str:
    """The F-curves that are not a chain bone's rotation or scale, named (the first few), or ""."""
    chain = {f"{bone_path(b)}.{p}" for b in chain_bones for p in _CHAIN_CHANNELS}
    others = sorted({fcurve.data_path for fcurve in fcurves if fcurve.data_path not in chain})
    return ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")


def check_soft_reach(settings: ChainSettings[bpy.types.Object], chain: ArmatureChain) -> None:
    """A soft reach as long as the chain's reach (world units, at rest) or longer cannot be meant: the chain would
    stop short of every target."""
    if settings.soft_reach <= 0.0 or settings.use_stretch:
        return
    scale = float(np.cbrt(abs(np.linalg.det(np.array(chain.armature.matrix_world.to_3x3())))))
    reach = float(chain.rest.lengths.sum()) * scale
    if settings.soft_reach >= reach:
        raise ValueError(
            f"{named('soft_reach')} {scene_length(settings.soft_reach)} is as long as the chain of "
            f"'{settings.tip_bone}' reaches ({scene_length(reach)}) or longer: it would stop short of its target on "
            "every frame; give the distance short of full reach over which it eases straight, a few percent of its "
            f"reach ({scene_length(0.05 * reach)} is 5%)"
        )
