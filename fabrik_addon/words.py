"""How reports put numbers in words, one way for the panel, the command line and the API's reports: a length
with its unit (``length_words``), counts (``counted``), frames off target by cause (``missed_words``) and keys
kept (``kept_words``). Pure Python, no ``bpy``.

A unit is a pair (symbol, scene units in one), as the Blender layer reads it from the scene
(``blender.named_unit``): ``("mm", 0.001)`` in a scene of metres.

>>> length_words(0.0016, ("mm", 0.001))
'1.6 mm'
>>> missed_words({"out of reach": (3, 4), "the scene": (9,)})
'off target on 3 frames (2 out of reach, 1 the scene)'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

#: A length's unit: its symbol and how many scene units make one.
Unit: TypeAlias = tuple[str, float]
#: Lengths in Blender's own units, where the scene's are not known (or it has no unit system).
SCENE_UNITS: Unit = ("units", 1.0)


#: A unit, the larger one a length in it is given in from this many of it on, and how many make the larger.
_LARGER = {"mm": ("m", 1000.0), "in": ("ft", 12.0)}


def length_words(value: float, unit: Unit = SCENE_UNITS) -> str:
    """A length given in scene units, in ``unit`` with its symbol: ``"1.6 mm"``; a length of a metre or more
    given in millimetres in metres (``"3.2 m"``), one of 100 inches or more in feet."""
    symbol, per = unit
    amount = value / per
    larger, times = _LARGER.get(symbol, (symbol, 1.0))
    if abs(amount) >= max(times, 100.0) and larger != symbol:
        return f"{digits(amount / times)} {larger}"
    return f"{digits(amount)} {symbol}"


def digits(value: float) -> str:
    """A number as few digits show it: ``27.4``, ``0.071``, ``1.2e-05``."""
    return f"{value:.1f}" if abs(value) >= 1 else f"{value:.2g}"


def counted(number: int, noun: str) -> str:
    """``number`` of ``noun``: ``"1 frame"``, ``"3 frames"``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def frames_words(frames: Sequence[int]) -> str:
    """The frames a bake keyed: ``"frames 1-250 (250 keyed)"``, ``"frames 1-250 (84 keyed)"`` with a step."""
    if not len(frames):
        return "no frames"
    return f"frames {frames[0]}-{frames[-1]} ({len(frames)} keyed)"


def causes_words(causes: Iterable[Mapping[str, Sequence[int]]]) -> str:
    """How many frames missed for each cause, over several reports' causes: ``" (3 out of reach, 1 the
    scene)"``; empty where none missed."""
    counts: dict[str, int] = {}
    for found in causes:
        for cause, frames in found.items():
            counts[cause] = counts.get(cause, 0) + len(frames)
    return f" ({', '.join(f'{count} {cause}' for cause, count in counts.items())})" if counts else ""


def missed_words(causes: Mapping[str, Sequence[int]], frames: int | None = None) -> str:
    """Whether a tip (a ball) was on target, and where not on how many frames, by cause: ``"on target on every
    frame"``, ``"off target on 3 frames (2 out of reach, 1 the scene)"``. ``frames`` counts the frames off target
    where a frame may have more than one cause (by default each frame has one)."""
    if not any(causes.values()):
        return "on target on every frame"
    total = sum(len(found) for found in causes.values()) if frames is None else frames
    return f"off target on {counted(total, 'frame')}{causes_words([causes])}"


def kept_words(keys: int, dense_keys: int, max_error: float, unit: Unit = SCENE_UNITS) -> str:
    """How many keys a reduction kept and the largest error Blender's evaluation of them shows: ``"kept 8% of the
    keys (1234 of 15360), largest error 0.48 mm"``."""
    share = 100 * keys / dense_keys if dense_keys else 100.0
    return f"kept {share:.0f}% of the keys ({keys} of {dense_keys}), largest error {length_words(max_error, unit)}"


def skate_words(before: Iterable[float], after: Iterable[float], unit: Unit = SCENE_UNITS) -> str:
    """How far balls slid in their contacts at most, before planting and after: ``"skate up to 27.4 -> 0.071
    mm"``."""
    symbol, per = unit
    most = max(before, default=0.0) / per, max(after, default=0.0) / per
    return f"skate up to {digits(most[0])} -> {digits(most[1])} {symbol}"


def block_name(block: Any) -> str:
    """A Blender data-block's name, quoted, for a report's ``repr``: ``"'Walk'"``, or ``"(removed)"`` where the
    data-block is gone since (reading its name would raise)."""
    try:
        return repr(block.name)
    except (ReferenceError, AttributeError):
        return "(removed)"
