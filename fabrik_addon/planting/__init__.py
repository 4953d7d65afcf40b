"""Planting feet, in numpy: when each foot is planted and where the animation cuts (``contacts``), where its ball
goes through each contact and its blends (``pins``), how far the hips go down so every pin is within reach and
where a leg eases rather than snaps straight (``reach``), which bones are the feet (``feet``), all of it for a
bake's feet at once (``plan``), the settings value every entry point makes (``settings``), and warnings for
settings that look given in another unit (``wrong_unit``).

Imports nothing of Blender; positions are world positions in scene units with +Z up, times in seconds,
thresholds in leg lengths.
"""

from .contacts import (
    CUT_JUMP,
    Contact,
    ContactRules,
    contact_flags,
    cut_frames,
    find_contacts,
    floor_height,
    horizontal_speeds,
    runs,
    skate,
    split_at,
)
from .feet import TOUCH, FootBones, check_foot, foot_bones, side
from .pins import PIN_AT, PinnedPath, pinned_path, smooth_step
from .plan import Foot, Planting, PlantRules, plant
from .reach import HipsDrop, eased_heads, hips_drop, lowered, needed_drop, rate_limited, smooth_drop
from .settings import PLANT_KEYWORDS, PlantSettings
from .wrong_unit import wrong_unit

__all__ = [
    "CUT_JUMP",
    "PIN_AT",
    "PLANT_KEYWORDS",
    "TOUCH",
    "Contact",
    "ContactRules",
    "Foot",
    "FootBones",
    "HipsDrop",
    "PinnedPath",
    "PlantRules",
    "PlantSettings",
    "Planting",
    "check_foot",
    "contact_flags",
    "cut_frames",
    "eased_heads",
    "find_contacts",
    "floor_height",
    "foot_bones",
    "hips_drop",
    "horizontal_speeds",
    "lowered",
    "needed_drop",
    "pinned_path",
    "plant",
    "rate_limited",
    "runs",
    "side",
    "skate",
    "smooth_drop",
    "smooth_step",
    "split_at",
    "wrong_unit",
]
