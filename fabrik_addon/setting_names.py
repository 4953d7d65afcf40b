"""How messages name a setting: as the panel labels it, with the keyword of ``api.bake`` in parentheses
(``named``): ``Chain Length (chain_length) 10 is longer than ...``. The panel shows the label alone and the
command line its option in its place (``in_words``); a keyword the panel does not show (``action_name``) is
named as it is. Pure Python, no ``bpy``.

>>> named("chain_length")
'Chain Length (chain_length)'
>>> in_words("Step (frame_step) must be at least 1", lambda label, keyword: label)
'Step must be at least 1'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

#: The panel's label of each keyword of ``api.bake`` that the panel shows (as its property is named, but where
#: the panel shows it beside another: the target's and the pole's Bone, the Rotation's Weight).
LABELS: Mapping[str, str] = {
    "tip_bone": "Tip Bone",
    "chain_length": "Chain Length",
    "target_bone": "Target Bone",
    "pole_target": "Pole Target",
    "pole_bone": "Pole Bone",
    "pole_angle": "Pole Angle",
    "use_stretch": "Stretch",
    "use_rotation": "Rotation",
    "rotation_weight": "Rotation Weight",
    "weight": "Tree Weight",
    "soft_reach": "Soft Reach",
    "frame_start": "Start",
    "frame_end": "End",
    "frame_step": "Step",
    "tolerance": "Tolerance",
    "max_iterations": "Max Iterations",
    "method": "Method",
    "warm_start": "Warm Start",
    "output": "Output",
    "key_error": "Key Error",
}
#: The Plant Feet panel's label of each keyword of ``api.plant_feet`` that it shows.
PLANT_LABELS: Mapping[str, str] = {
    "chain_length": "Leg Length",
    "hips_bone": "Hips",
    "use_marks": "Use Contact Marks",
    "contact_height": "Height",
    "contact_speed": "Speed",
    "contact_seconds": "Shortest",
    "contact_gap": "Gap Closed",
    "blend_seconds": "Blend",
    "pin_at": "Pin At",
    "hips_speed": "Hips Speed",
    "hips_seconds": "Hips Smoothing",
    "soft_reach": "Soft Reach",
    "floor": "Floor",
}
_NAMED = {
    f"{label} ({keyword})": (label, keyword) for labels in (LABELS, PLANT_LABELS) for keyword, label in labels.items()
}
_NAMED_PATTERN = re.compile("|".join(map(re.escape, sorted(_NAMED, key=len, reverse=True))))


def named(keyword: str, labels: Mapping[str, str] = LABELS) -> str:
    """How a message names the setting ``keyword``: ``Chain Length (chain_length)``, its label (in ``labels``,
    the bake's or ``PLANT_LABELS``) and keyword; a keyword the panel does not show as it is."""
    label = labels.get(keyword)
    return keyword if label is None else f"{label} ({keyword})"


def plant_named(keyword: str) -> str:
    """How a message names the keyword of ``api.plant_feet``: ``Leg Length (chain_length)`` (``named``)."""
    return named(keyword, PLANT_LABELS)


def in_words(message: str, words: Callable[[str, str], str]) -> str:
    """``message`` with each setting it names (``named``) put as ``words(label, keyword)`` puts it: the panel
    keeps the label, the command line puts its option."""
    return _NAMED_PATTERN.sub(lambda found: words(*_NAMED[found[0]]), message)
