"""The add-on's settings, stored on each armature object as ``Object.fabrik`` and saved in the .blend, and the
``BakeSettings`` value they stand for (``bake_settings``, ``chain_settings``, ``solver_settings``).

An armature holds a list of chains (``chains``, each a ``FABRIK_PG_chain``: its bones, target, pole and
options, whether it is enabled, its last bake); the solver, the frames, the live preview and Plant Feet
(``planting``) are the armature's. A setting that the live preview uses calls the listeners subscribed here
when it changes; the preview subscribes when it registers, so this module needs nothing of it.

Layout versions (``FABRIK_PG_settings.version``): 0, one chain whose settings sat on the armature's settings
themselves (``target``, ``tip_bone``...; still registered, hidden, so that older files' values load), and
``SETTINGS_VERSION``, the chain list. ``versioning`` brings version 0 up to date when a file loads.
"""

from __future__ import annotations

import math

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..settings import DEFAULTS, BakeSettings, ChainSettings, FrameRange, SolverSettings
from .bake_summary import FABRIK_PG_bake_summary
from .planting import PLANTING_CLASSES, FABRIK_PG_planting
from .reduction import KEYS_CLASSES, FABRIK_PG_keys
from .setting_changes import watched

#: The layout of the settings that this version of the add-on writes: 1, a list of chains.
SETTINGS_VERSION = 1

#: Settings an animator may change on a library override of a linked rig.
_OVERRIDABLE = {"LIBRARY_OVERRIDABLE"}
#: The chain list: overridable, and chains may be added on an override.
_OVERRIDABLE_LIST = {"LIBRARY_OVERRIDABLE", "USE_INSERTION"}


class FABRIK_PG_chain(bpy.types.PropertyGroup):
    """One chain of an armature: its bones, what its tip follows, its pole and options. Its ``name`` (that of
    every property group) names it in the list and in reports; left empty, its tip bone does."""

    enabled: BoolProperty(  # type: ignore[valid-type]
        name="Enabled",
        description="Bake, clear and preview this chain with the others",
        default=True,
        update=watched("enabled"),
        override=_OVERRIDABLE,
    )
    target: PointerProperty(  # type: ignore[valid-type]
        name="Target",
        description="The object the tip bone's tail follows (its world location, or its Bone's head, on each frame)",
        type=bpy.types.Object,
        update=watched("target"),
        override=_OVERRIDABLE,
    )
    target_bone: StringProperty(  # type: ignore[valid-type]
        name="Bone",
        description="A bone of the target armature: its head is the goal (as the IK constraint's Bone)",
        default=DEFAULTS["target_bone"],
        update=watched("target_bone"),
        override=_OVERRIDABLE,
    )
    tip_bone: StringProperty(  # type: ignore[valid-type]
        name="Tip Bone",
        description="The last bone of the chain: its tail goes to the target",
        update=watched("tip_bone"),
        override=_OVERRIDABLE,
    )
    chain_length: IntProperty(  # type: ignore[valid-type]
        name="Chain Length",
        description="Bones in the chain, counted from the tip bone up through its parents (0: up to the root bone)",
        default=DEFAULTS["chain_length"],
        min=0,
        soft_max=64,
        update=watched("chain_length"),
        override=_OVERRIDABLE,
    )
    pole_target: PointerProperty(  # type: ignore[valid-type]
        name="Pole Target",
        description="The chain bends toward this object, as with the pole target of Blender's IK constraint",
        type=bpy.types.Object,
        update=watched("pole_target"),
        override=_OVERRIDABLE,
    )
    pole_bone: StringProperty(  # type: ignore[valid-type]
        name="Pole Bone",
        description="A bone of the pole armature: its head is the pole (as the IK constraint's Pole Bone)",
        default=DEFAULTS["pole_bone"],
        update=watched("pole_bone"),
        override=_OVERRIDABLE,
    )
    pole_angle: FloatProperty(  # type: ignore[valid-type]
        name="Pole Angle",
        description=(
            "Pole rotation offset, as the IK constraint's: the chain turns so that the root bone's X axis, turned "
            "by this angle about the bone, faces the pole"
        ),
        default=DEFAULTS["pole_angle"],
        subtype="ANGLE",
        min=-math.pi,
        max=math.pi,
        update=watched("pole_angle"),
        override=_OVERRIDABLE,
    )
    use_stretch: BoolProperty(  # type: ignore[valid-type]
        name="Stretch",
        description=(
            "Let bones lengthen by their IK Stretch share to reach farther (keys their Y scale; the live preview "
            "stretches them too, and gives them back their length when this is turned off)"
        ),
        default=DEFAULTS["use_stretch"],
        update=watched("use_stretch"),
        override=_OVERRIDABLE,
    )
    use_rotation: BoolProperty(  # type: ignore[valid-type]
        name="Rotation",
        description="The tip bone also turns to the target's orientation, as the IK constraint's Rotation option",
        default=DEFAULTS["use_rotation"],
        update=watched("use_rotation"),
        override=_OVERRIDABLE,
    )
    rotation_weight: FloatProperty(  # type: ignore[valid-type]
        name="Weight",
        description="How far the tip turns toward the target's orientation (the IK constraint's Rotation weight)",
        default=DEFAULTS["rotation_weight"],
        min=0.01,
        max=1.0,
        subtype="FACTOR",
        update=watched("rotation_weight"),
        override=_OVERRIDABLE,
    )
    weight: FloatProperty(  # type: ignore[valid-type]
        name="Tree Weight",
        description=(
            "How hard this chain's tip pulls when it shares bones with other chains, solved with them as one "
            "tree (the IK constraint's Weight): only the weights' ratios matter"
        ),
        default=DEFAULTS["weight"],
        min=0.01,
        soft_max=10.0,
        update=watched("weight"),
        override=_OVERRIDABLE,
    )
    soft_reach: FloatProperty(  # type: ignore[valid-type]
        name="Soft Reach",
        description=(
            "Over this distance short of full extension the chain eases straight instead of snapping straight "
            "(a knee that does not pop); the tip then stops short of a target that far out, and those frames "
            "count as out of reach. 0: off. Not with Stretch"
        ),
        default=DEFAULTS["soft_reach"],
        min=0.0,
        soft_max=1.0,
        subtype="DISTANCE",
        unit="LENGTH",
        update=watched("soft_reach"),
        override=_OVERRIDABLE,
    )
    last_bake: PointerProperty(  # type: ignore[valid-type]
        type=FABRIK_PG_bake_summary, options={"HIDDEN"}, override=_OVERRIDABLE
    )


class FABRIK_PG_settings(bpy.types.PropertyGroup):
    """FABRIK settings of one armature: its chains, the solver and the frames to bake."""

    version: IntProperty(  # type: ignore[valid-type]
        name="Settings Version",
        description="The layout these settings were saved in (0: one chain, before the chain list)",
        options={"HIDDEN"},
        override=_OVERRIDABLE,
    )
    chains: CollectionProperty(  # type: ignore[valid-type]
        type=FABRIK_PG_chain, name="Chains", description="The armature's chains", override=_OVERRIDABLE_LIST
    )
    active_chain: IntProperty(  # type: ignore[valid-type]
        name="Active Chain", description="The chain whose settings the panel shows", options={"HIDDEN"}
    )
    method: EnumProperty(  # type: ignore[valid-type]
        name="Method",
        description="The inverse kinematics solver",
        items=(
            ("FABRIK", "FABRIK", "Forward And Backward Reaching Inverse Kinematics (Aristidou and Lasenby, 2011)"),
            ("CCD", "CCD", "Cyclic Coordinate Descent, for comparison"),
        ),
        default=DEFAULTS["method"].upper(),
        update=watched("method"),
        override=_OVERRIDABLE,
    )
    tolerance: FloatProperty(  # type: ignore[valid-type]
        name="Tolerance",
        description="How close the tip must come to the target",
        default=DEFAULTS["tolerance"],
        min=1e-6,
        soft_max=0.1,
        precision=5,
        step=0.01,
        subtype="DISTANCE",
        unit="LENGTH",
        update=watched("tolerance"),
        override=_OVERRIDABLE,
    )
    max_iterations: IntProperty(  # type: ignore[valid-type]
        name="Max Iterations",
        description="Most solver iterations per frame",
        default=DEFAULTS["max_iterations"],
        min=1,
        soft_max=1000,
        update=watched("max_iterations"),
        override=_OVERRIDABLE,
    )
    warm_start: BoolProperty(  # type: ignore[valid-type]
        name="Warm Start",
        description=(
            "For a chain with no animation of its own, start each frame from the frames before it: follows "
            "continuous motion with fewer iterations (an animated chain starts every frame from its own pose)"
        ),
        default=DEFAULTS["warm_start"],
        override=_OVERRIDABLE,
    )
    use_custom_range: BoolProperty(  # type: ignore[valid-type]
        name="Custom Range",
        description="Bake and clear the frames below instead of the scene's frame range",
        override=_OVERRIDABLE,
    )
    frame_start: IntProperty(  # type: ignore[valid-type]
        name="Start", description="First frame to bake", default=1, override=_OVERRIDABLE
    )
    frame_end: IntProperty(  # type: ignore[valid-type]
        name="End", description="Last frame to bake", default=250, override=_OVERRIDABLE
    )
    frame_step: IntProperty(  # type: ignore[valid-type]
        name="Step",
        description="Key every n-th frame from the first, and the last frame too",
        default=DEFAULTS["frame_step"],
        min=1,
        soft_max=100,
        override=_OVERRIDABLE,
    )
    output: EnumProperty(  # type: ignore[valid-type]
        name="Output",
        description="Where Bake, Bake IK Constraints and Plant Feet put their keys",
        items=(
            (
                "LAYER",
                "Layer",
                "Key a layer of its own over the animation (an NLA track blended with Combine): mute it, or set its "
                "influence to 0, for the animation as it was; Apply Layer merges it down",
            ),
            ("ACTION", "Action", "Key the chains into the active Action, replacing their keys in the frame range"),
        ),
        default="LAYER",
        override=_OVERRIDABLE,
    )
    live_preview: BoolProperty(  # type: ignore[valid-type]
        name="Live Preview",
        description=(
            "Pose the enabled chains with FABRIK whenever a target moves or the frame changes, without keying "
            "them (the pose stays when turned off; Bake to key it)"
        ),
        update=watched("live_preview"),
        override=_OVERRIDABLE,
    )
    planting: PointerProperty(type=FABRIK_PG_planting, override=_OVERRIDABLE)  # type: ignore[valid-type]
    keys: PointerProperty(type=FABRIK_PG_keys, override=_OVERRIDABLE)  # type: ignore[valid-type]
    # Layout 0: the one chain's settings, read only to move them into ``chains`` (``versioning``).
    target: PointerProperty(type=bpy.types.Object, options={"HIDDEN"}, override=_OVERRIDABLE)  # type: ignore[valid-type]
    tip_bone: StringProperty(options={"HIDDEN"}, override=_OVERRIDABLE)  # type: ignore[valid-type]
    chain_length: IntProperty(default=DEFAULTS["chain_length"], options={"HIDDEN"}, override=_OVERRIDABLE)  # type: ignore[valid-type]
    pole_target: PointerProperty(type=bpy.types.Object, options={"HIDDEN"}, override=_OVERRIDABLE)  # type: ignore[valid-type]
    pole_angle: FloatProperty(default=DEFAULTS["pole_angle"], options={"HIDDEN"}, override=_OVERRIDABLE)  # type: ignore[valid-type]
    use_stretch: BoolProperty(default=DEFAULTS["use_stretch"], options={"HIDDEN"}, override=_OVERRIDABLE)  # type: ignore[valid-type]
    last_bake: PointerProperty(type=FABRIK_PG_bake_summary, options={"HIDDEN"}, override=_OVERRIDABLE)  # type: ignore[valid-type]


#: The settings of layout 0 that a chain now holds, under the same names.
LEGACY_CHAIN_SETTINGS = ("target", "tip_bone", "chain_length", "pole_target", "pole_angle", "use_stretch")


def settings_pointer() -> object:
    """The ``Object.fabrik`` property: one pointer to the armature's settings."""
    return PointerProperty(type=FABRIK_PG_settings, name="FABRIK", override={"LIBRARY_OVERRIDABLE"})  # type: ignore[func-returns-value]


def settings_of(obj: bpy.types.Object) -> FABRIK_PG_settings:
    """The FABRIK settings of an object (``obj.fabrik``)."""
    return obj.fabrik  # type: ignore[attr-defined, no-any-return]


def chain_label(chain: FABRIK_PG_chain, index: int) -> str:
    """How the panel and reports name the chain at ``index``: its name, else its tip bone, else its place."""
    return str(chain.name or chain.tip_bone or f"Chain {index + 1}")


def enabled_chains(armature: bpy.types.Object) -> list[tuple[int, FABRIK_PG_chain]]:
    """The armature's enabled chains with their places in its list, in its order."""
    return [(index, chain) for index, chain in enumerate(settings_of(armature).chains) if chain.enabled]


def chain_settings(armature: bpy.types.Object, chain: FABRIK_PG_chain) -> ChainSettings[bpy.types.Object]:
    """The chain that one of the armature's chains (an item of its ``chains``) names.

    Raises
    ------
    TypeError, ValueError
        As ``ChainSettings`` does.
    """
    return ChainSettings(
        armature,
        chain.target,
        chain.tip_bone,
        chain.chain_length,
        pole_target=chain.pole_target,
        pole_angle=chain.pole_angle,
        use_stretch=chain.use_stretch,
        target_bone=chain.target_bone,
        pole_bone=chain.pole_bone,
        use_rotation=chain.use_rotation,
        rotation_weight=chain.rotation_weight,
        weight=chain.weight,
        soft_reach=chain.soft_reach,
    )


def output_of(armature: bpy.types.Object) -> str:
    """Where the armature's settings put a bake's keys: ``"layer"`` or ``"action"`` (``BakeSettings.output``)."""
    return str(settings_of(armature).output).lower()


def key_error_of(armature: bpy.types.Object) -> float:
    """The armature's Key Error (``BakeSettings.key_error``), read without making its settings group where it was
    never set (reading a group makes it, and a bake that reads it would then change the file)."""
    settings = settings_of(armature)
    return float(settings.keys.key_error) if settings.is_property_set("keys") else float(DEFAULTS["key_error"])


def solver_settings(armature: bpy.types.Object) -> SolverSettings:
    settings = settings_of(armature)
    return SolverSettings(settings.tolerance, settings.max_iterations, settings.method.lower(), settings.warm_start)


def frame_range(armature: bpy.types.Object, scene: bpy.types.Scene) -> FrameRange:
    """The frames the armature's settings bake and clear: the scene's range, or the custom one."""
    settings = settings_of(armature)
    if settings.use_custom_range:
        return FrameRange(settings.frame_start, settings.frame_end, settings.frame_step)
    return FrameRange(scene.frame_start, scene.frame_end, settings.frame_step)


def bake_settings(armature: bpy.types.Object, scene: bpy.types.Scene) -> BakeSettings[bpy.types.Object]:
    """Everything the armature's settings ask a bake (or Clear) for, as the one value the bake takes: its
    enabled chains, in the list's order, the frames, the solver and where the keys go.

    Raises
    ------
    TypeError, ValueError
        As the settings value does, naming the bad setting; a ValueError if no chain is enabled.
    """
    chains = tuple(chain_settings(armature, chain) for _, chain in enabled_chains(armature))
    if not chains:
        raise ValueError(no_chain_text(armature))
    return BakeSettings(
        chains,
        frame_range(armature, scene),
        solver_settings(armature),
        None,
        output_of(armature),
        key_error_of(armature),
    )


def no_chain_text(armature: bpy.types.Object) -> str:
    """Why the armature has nothing to bake: no chain, or none enabled."""
    if not settings_of(armature).chains:
        return f"armature '{armature.name}' has no chain: add one in the FABRIK panel"
    return f"no chain of armature '{armature.name}' is enabled: tick one in the FABRIK panel's list"


CLASSES = (*PLANTING_CLASSES, *KEYS_CLASSES, FABRIK_PG_bake_summary, FABRIK_PG_chain, FABRIK_PG_settings)
