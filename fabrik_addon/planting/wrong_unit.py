"""Plant Feet's settings that look given in another unit: its lengths are in leg lengths (hip to ankle) and its
speeds in leg lengths per second, so a height of 4 meant as 4 cm asks for 4 legs, under which every frame of a
walk counts as near the floor; such a planting is done as asked, with a warning that says what the value means on
these legs and what was likely meant (``wrong_unit``). Pure Python, no ``bpy``."""

from __future__ import annotations

from dataclasses import dataclass

from ..setting_names import plant_named
from ..words import Unit, length_words
from .plan import PlantRules


@dataclass(frozen=True)
class _Limit:
    """A setting in leg lengths (or leg lengths a second) past which it cannot be meant, and why."""

    keyword: str
    most: float
    why: str
    per_second: bool = False


#: The most each setting can be meant as, in leg lengths (a second): a human leg is about 0.8 m, hip to ankle.
_LIMITS = (
    _Limit("contact_height", 0.25, "every frame the ball is that low counts as near the floor"),
    _Limit("contact_speed", 4.0, "a ball that fast is swinging, not planted", per_second=True),
    _Limit("hips_speed", 4.0, "hips that fast jolt", per_second=True),
    _Limit("tolerance", 0.01, "a ball that far from its pin slides visibly"),
)


def wrong_unit(rules: PlantRules, leg_length: float, unit: Unit) -> tuple[str, ...]:
    """A warning for each setting of ``rules`` too large to be meant in leg lengths, given legs ``leg_length``
    long (scene units, hip to ankle) and the ``unit`` the warning gives lengths in; none where every one is
    plausible."""
    values, default = _in_legs(rules), _in_legs(PlantRules())
    warnings = []
    for limit in _LIMITS:
        value = values[limit.keyword]
        if value <= limit.most:
            continue
        rate = " a second" if limit.per_second else ""
        usual = default[limit.keyword]
        warnings.append(
            f"{plant_named(limit.keyword)} {value:g} is in leg lengths{rate}: {length_words(value * leg_length, unit)}"
            f"{rate} on these legs ({length_words(leg_length, unit)} hip to ankle), more than {limit.most:g} can be "
            f"meant ({limit.why}): was it given in another unit? It was used as given; {usual:g} (the default) is "
            f"{length_words(usual * leg_length, unit)}{rate} on these legs"
        )
    return tuple(warnings)


def _in_legs(rules: PlantRules) -> dict[str, float]:
    """The settings of ``rules`` given in leg lengths (a second), by keyword."""
    return {
        "contact_height": rules.contacts.height,
        "contact_speed": rules.contacts.speed,
        "hips_speed": rules.hips_speed,
        "tolerance": rules.tolerance,
    }
