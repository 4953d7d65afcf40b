"""How many keys an armature's bakes keep, stored in its FABRIK settings (``Object.fabrik.keys``) and saved in the
.blend: the error the keys may leave, which Bake, Bake IK Constraints and Plant Feet keep to, and Reduce Keys
thins keys that exist to."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, FloatProperty

from ...settings import DEFAULTS

_OVERRIDABLE = {"LIBRARY_OVERRIDABLE"}


class FABRIK_PG_keys(bpy.types.PropertyGroup):
    """How many keys the armature's bakes keep, and what Reduce Keys thins."""

    key_error: FloatProperty(  # type: ignore[valid-type]
        name="Key Error",
        description=(
            "Keep keys on the fewest frames that hold every baked bone (its head, tail and points off its axis) "
            "within this distance of the solved pose on every frame, as Blender plays them; 0: a key on every frame"
        ),
        default=DEFAULTS["key_error"],
        min=0.0,
        soft_max=0.01,
        precision=5,
        step=0.01,
        subtype="DISTANCE",
        unit="LENGTH",
        override=_OVERRIDABLE,
    )
    only_selected: BoolProperty(  # type: ignore[valid-type]
        name="Selected Bones",
        description="Reduce Keys thins the keys of the selected bones only (in Pose Mode); off: of every keyed bone",
        default=False,
        override=_OVERRIDABLE,
    )


CLASSES = (FABRIK_PG_keys,)
