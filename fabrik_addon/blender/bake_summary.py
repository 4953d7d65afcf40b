"""What the last bake of each chain did, stored with the chain (``FABRIK_PG_chain.last_bake``) for the panel's
Last Bake: frames, error, and the frames off target by cause."""

from __future__ import annotations

import bpy
from bpy.props import FloatProperty, IntProperty, StringProperty

#: Settings an animator may change on a library override of a linked rig.
_OVERRIDABLE = {"LIBRARY_OVERRIDABLE"}


class FABRIK_PG_bake_summary(bpy.types.PropertyGroup):
    """What the last bake of a chain did, for the panel (set by the Bake operator)."""

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
    off_target_causes: StringProperty(  # type: ignore[valid-type]
        name="Why Off Target",
        description=(
            "The frames off target by cause: out of reach, soft reach, IK limits, goals apart, not converged, within "
            "key error, the scene"
        ),
        override=_OVERRIDABLE,
    )
    seconds: FloatProperty(name="Time", unit="TIME_ABSOLUTE", override=_OVERRIDABLE)  # type: ignore[valid-type]
