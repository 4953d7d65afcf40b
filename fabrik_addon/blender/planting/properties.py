"""The Plant Feet settings of an armature, stored in its FABRIK settings (``Object.fabrik.planting``) and saved
in the .blend, and the ``PlantSettings`` value they stand for (``plant_settings``). Defaults are the planting
core's own (``ContactRules``, ``PlantRules``)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ...planting import PIN_AT, ContactRules, PlantRules, PlantSettings
from ...settings import FrameRange, SolverSettings

_OVERRIDABLE = {"LIBRARY_OVERRIDABLE"}
_CONTACTS, _RULES = ContactRules(), PlantRules()


class FABRIK_PG_foot(bpy.types.PropertyGroup):
    """One foot to plant: its bone."""

    bone: StringProperty(  # type: ignore[valid-type]
        name="Foot",
        description="A foot bone: the tip of its leg; its tail (the ball of the foot) is planted",
        override=_OVERRIDABLE,
    )


class FABRIK_PG_planting(bpy.types.PropertyGroup):
    """What Plant Feet and Detect Contacts do to the armature's animation (lengths in leg lengths)."""

    feet: CollectionProperty(type=FABRIK_PG_foot, name="Feet", override={"LIBRARY_OVERRIDABLE", "USE_INSERTION"})  # type: ignore[valid-type]
    chain_length: IntProperty(  # type: ignore[valid-type]
        name="Leg Length",
        description="Bones in each leg, from the foot up (3: foot, shin and thigh)",
        default=3,
        min=2,
        soft_max=6,
        override=_OVERRIDABLE,
    )
    hips_bone: StringProperty(  # type: ignore[valid-type]
        name="Hips",
        description=(
            "A bone above every leg (the pelvis), lowered with keys on its Location far enough that every pin is "
            "within reach, along a slowly changing curve; empty: the hips are left alone"
        ),
        override=_OVERRIDABLE,
    )
    use_marks: BoolProperty(  # type: ignore[valid-type]
        name="Use Contact Marks",
        description="Plant the contacts a foot's marks say (Detect Contacts keys them; edit them in the Dope Sheet)",
        default=True,
        override=_OVERRIDABLE,
    )
    contact_height: FloatProperty(  # type: ignore[valid-type]
        name="Height",
        description="A contact: the ball of the foot at most this far above the floor, in leg lengths (hip to ankle)",
        default=_CONTACTS.height,
        min=1e-4,
        soft_max=0.2,
        precision=3,
        override=_OVERRIDABLE,
    )
    contact_speed: FloatProperty(  # type: ignore[valid-type]
        name="Speed",
        description="... and slower than this, in leg lengths per second",
        default=_CONTACTS.speed,
        min=1e-4,
        soft_max=2.0,
        precision=2,
        override=_OVERRIDABLE,
    )
    contact_seconds: FloatProperty(  # type: ignore[valid-type]
        name="Shortest",
        description="... for at least this long, in seconds",
        default=_CONTACTS.seconds,
        min=0.0,
        soft_max=1.0,
        precision=2,
        subtype="TIME_ABSOLUTE",
        override=_OVERRIDABLE,
    )
    contact_gap: IntProperty(  # type: ignore[valid-type]
        name="Gap Closed",
        description="Contacts this many frames apart or less are one",
        default=_CONTACTS.gap_frames,
        min=0,
        soft_max=10,
        override=_OVERRIDABLE,
    )
    blend_seconds: FloatProperty(  # type: ignore[valid-type]
        name="Blend",
        description="The longest ease into and out of each pin, in seconds",
        default=_RULES.blend_seconds,
        min=0.0,
        soft_max=1.0,
        precision=2,
        subtype="TIME_ABSOLUTE",
        override=_OVERRIDABLE,
    )
    pin_at: EnumProperty(  # type: ignore[valid-type]
        name="Pin At",
        description="Where in a contact the ball is pinned",
        items=[(value.upper(), value.title(), f"Where the ball is on the contact's {value} frame") for value in PIN_AT],
        default=_RULES.pin_at.upper(),
        override=_OVERRIDABLE,
    )
    hips_speed: FloatProperty(  # type: ignore[valid-type]
        name="Hips Speed",
        description="The fastest the hips go down or up, in leg lengths per second",
        default=_RULES.hips_speed,
        min=1e-3,
        soft_max=2.0,
        precision=2,
        override=_OVERRIDABLE,
    )
    hips_seconds: FloatProperty(  # type: ignore[valid-type]
        name="Hips Smoothing",
        description=(
            "How slowly the hips' drop changes, in seconds: it eases in and out over about this long, and the hips "
            "keep their own motion (a walk's bob) within it; 0: the least drop on each frame"
        ),
        default=_RULES.hips_seconds,
        min=0.0,
        soft_max=4.0,
        precision=2,
        subtype="TIME_ABSOLUTE",
        override=_OVERRIDABLE,
    )
    soft_reach: FloatProperty(  # type: ignore[valid-type]
        name="Soft Reach",
        description=(
            "A pinned leg eases straight over this many leg lengths (hip to ankle) short of full reach instead of "
            "snapping straight; lowered hips keep every pin this far inside the reach"
        ),
        default=_RULES.soft_reach,
        min=0.0,
        max=0.25,
        soft_max=0.1,
        precision=3,
        override=_OVERRIDABLE,
    )
    use_floor: BoolProperty(  # type: ignore[valid-type]
        name="Floor Height",
        description="Give the floor's height; off: where the balls of the feet rest",
        override=_OVERRIDABLE,
    )
    floor: FloatProperty(  # type: ignore[valid-type]
        name="Floor",
        description="The floor's height",
        subtype="DISTANCE",
        unit="LENGTH",
        override=_OVERRIDABLE,
    )


def plant_settings(
    armature: bpy.types.Object, planting: FABRIK_PG_planting, frames: FrameRange, solver: SolverSettings
) -> PlantSettings[bpy.types.Object]:
    """The planting that an armature's Plant Feet settings name, over ``frames`` (every frame) with ``solver``.

    Raises
    ------
    TypeError, ValueError
        As ``PlantSettings`` does.
    """
    rules = PlantRules(
        ContactRules(planting.contact_height, planting.contact_speed, planting.contact_seconds, planting.contact_gap),
        blend_seconds=planting.blend_seconds,
        pin_at=planting.pin_at.lower(),
        hips_speed=planting.hips_speed,
        hips_seconds=planting.hips_seconds,
        soft_reach=planting.soft_reach,
        floor=planting.floor if planting.use_floor else None,
    )
    return PlantSettings(
        armature,
        tuple(foot.bone for foot in planting.feet),
        chain_length=planting.chain_length,
        hips_bone=planting.hips_bone,
        frames=FrameRange(frames.start, frames.end),
        rules=rules,
        use_marks=planting.use_marks,
        solver=SolverSettings(max_iterations=solver.max_iterations),
    )


CLASSES = (FABRIK_PG_foot, FABRIK_PG_planting)
