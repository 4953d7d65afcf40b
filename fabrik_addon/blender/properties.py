"""The add-on's settings, stored on each armature object as ``Object.fabrik`` and saved in the .blend, and the
``BakeSettings`` value they stand for (``bake_settings``, ``chain_settings``, ``solver_settings``).

A setting that the live preview uses calls the listeners subscribed here when it changes; the preview
subscribes when it registers, so this module needs nothing of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from ..settings import DEFAULTS, BakeSettings, ChainSettings, FrameRange, SolverSettings

#: Settings an animator may change on a library override of a linked rig.
_OVERRIDABLE = {"LIBRARY_OVERRIDABLE"}

#: Called with the armature and the name of a setting of it that changed (see ``subscribe``).
Listener = Callable[[bpy.types.Object, str], None]
_listeners: list[Listener] = []


def subscribe(listener: Listener) -> None:
    """Call ``listener(armature, name)`` whenever a setting the live preview uses changes."""
    if listener not in _listeners:
        _listeners.append(listener)


def unsubscribe(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def _notify(name: str) -> Callable[[FABRIK_PG_settings, bpy.types.Context], None]:
    """The update callback of the setting ``name``: settings are not scene data, so changing one does not
    update the scene; the listeners are told instead."""

    def changed(settings: FABRIK_PG_settings, context: bpy.types.Context) -> None:
        armature = settings.id_data
        assert isinstance(armature, bpy.types.Object)
        for listener in tuple(_listeners):
            listener(armature, name)

    return changed


def _not_the_armature(settings: FABRIK_PG_settings, obj: bpy.types.Object) -> bool:
    """Targets offered in the picker: any object but the armature itself."""
    return obj != settings.id_data


class FABRIK_PG_bake_summary(bpy.types.PropertyGroup):
    """What the last bake of this armature did, for the panel (set by the Bake operator)."""

    frames: IntProperty(name="Frames", description="Frames keyed (0: never baked)", override=_OVERRIDABLE)  # type: ignore[valid-type]
    frame_start: IntProperty(name="Start", override=_OVERRIDABLE)  # type: ignore[valid-type]
    frame_end: IntProperty(name="End", override=_OVERRIDABLE)  # type: ignore[valid-type]
    bones: IntProperty(name="Bones", description="Bones in the chain", override=_OVERRIDABLE)  # type: ignore[valid-type]
    max_error: FloatProperty(  # type: ignore[valid-type]
        name="Max Error",
        description="Largest distance from the tip to the target, as Blender evaluates the keys",
        subtype="DISTANCE",
        unit="LENGTH",
        override=_OVERRIDABLE,
    )
    unreachable: IntProperty(name="Out of Reach", description="Frames out of reach", override=_OVERRIDABLE)  # type: ignore[valid-type]
    off_target: IntProperty(  # type: ignore[valid-type]
        name="Off Target",
        description="Frames where the tip misses the target by more than the tolerance, whatever the cause",
        override=_OVERRIDABLE,
    )
    off_target_frames: StringProperty(name="Frames Off Target", override=_OVERRIDABLE)  # type: ignore[valid-type]
    unreachable_frames: StringProperty(name="Frames Out of Reach", override=_OVERRIDABLE)  # type: ignore[valid-type]
    seconds: FloatProperty(name="Time", unit="TIME_ABSOLUTE", override=_OVERRIDABLE)  # type: ignore[valid-type]


class FABRIK_PG_settings(bpy.types.PropertyGroup):
    """FABRIK settings of one armature: the chain, its target, the solver and the frames to bake."""

    target: PointerProperty(  # type: ignore[valid-type]
        name="Target",
        description="The object the tip bone's tail follows (its world location on each frame)",
        type=bpy.types.Object,
        poll=_not_the_armature,
        update=_notify("target"),
        override=_OVERRIDABLE,
    )
    tip_bone: StringProperty(  # type: ignore[valid-type]
        name="Tip Bone",
        description="The last bone of the chain: its tail goes to the target",
        update=_notify("tip_bone"),
        override=_OVERRIDABLE,
    )
    chain_length: IntProperty(  # type: ignore[valid-type]
        name="Chain Length",
        description="Bones in the chain, counted from the tip bone up through its parents (0: up to the root bone)",
        min=0,
        soft_max=64,
        update=_notify("chain_length"),
        override=_OVERRIDABLE,
    )
    pole_target: PointerProperty(  # type: ignore[valid-type]
        name="Pole Target",
        description="The chain bends toward this object, as with the pole target of Blender's IK constraint",
        type=bpy.types.Object,
        poll=_not_the_armature,
        update=_notify("pole_target"),
        override=_OVERRIDABLE,
    )
    pole_angle: FloatProperty(  # type: ignore[valid-type]
        name="Pole Angle",
        description="Pole rotation offset, as the IK constraint's: the root bone's X axis turned so faces the pole",
        subtype="ANGLE",
        min=-math.pi,
        max=math.pi,
        update=_notify("pole_angle"),
        override=_OVERRIDABLE,
    )
    use_stretch: BoolProperty(  # type: ignore[valid-type]
        name="Stretch",
        description=(
            "Let bones lengthen by their IK Stretch share to reach farther (keys their Y scale; the live preview "
            "stretches them too, and gives them back their length when this is turned off)"
        ),
        default=DEFAULTS["use_stretch"],
        update=_notify("use_stretch"),
        override=_OVERRIDABLE,
    )
    method: EnumProperty(  # type: ignore[valid-type]
        name="Method",
        description="The inverse kinematics solver",
        items=(
            ("FABRIK", "FABRIK", "Forward And Backward Reaching Inverse Kinematics (Aristidou and Lasenby, 2011)"),
            ("CCD", "CCD", "Cyclic Coordinate Descent, for comparison"),
        ),
        default="FABRIK",
        update=_notify("method"),
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
        update=_notify("tolerance"),
        override=_OVERRIDABLE,
    )
    max_iterations: IntProperty(  # type: ignore[valid-type]
        name="Max Iterations",
        description="Most solver iterations per frame",
        default=DEFAULTS["max_iterations"],
        min=1,
        soft_max=1000,
        update=_notify("max_iterations"),
        override=_OVERRIDABLE,
    )
    warm_start: BoolProperty(  # type: ignore[valid-type]
        name="Warm Start",
        description="Start each frame from the frames before it: follows continuous motion with fewer iterations",
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
        description="Key every n-th frame",
        default=DEFAULTS["frame_step"],
        min=1,
        soft_max=100,
        override=_OVERRIDABLE,
    )
    live_preview: BoolProperty(  # type: ignore[valid-type]
        name="Live Preview",
        description=(
            "Pose the chain with FABRIK whenever the target moves or the frame changes, without keying it "
            "(the pose stays when turned off; Bake to key it)"
        ),
        update=_notify("live_preview"),
        override=_OVERRIDABLE,
    )
    last_bake: PointerProperty(  # type: ignore[valid-type]
        type=FABRIK_PG_bake_summary, options={"HIDDEN"}, override=_OVERRIDABLE
    )


def settings_of(obj: bpy.types.Object) -> FABRIK_PG_settings:
    """The FABRIK settings of an object (``obj.fabrik``)."""
    return obj.fabrik  # type: ignore[attr-defined, no-any-return]


def chain_settings(armature: bpy.types.Object) -> ChainSettings[bpy.types.Object]:
    """The chain the armature's settings name.

    Raises
    ------
    TypeError, ValueError
        As ``ChainSettings`` does.
    """
    settings = settings_of(armature)
    return ChainSettings(
        armature,
        settings.target,
        settings.tip_bone,
        settings.chain_length,
        pole_target=settings.pole_target,
        pole_angle=settings.pole_angle,
        use_stretch=settings.use_stretch,
    )


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
    """Everything the armature's settings ask a bake for, as the one value the bake takes.

    Raises
    ------
    TypeError, ValueError
        As the settings value does, naming the bad setting.
    """
    return BakeSettings((chain_settings(armature),), frame_range(armature, scene), solver_settings(armature))


CLASSES = (FABRIK_PG_bake_summary, FABRIK_PG_settings)
