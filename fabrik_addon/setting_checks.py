"""The checks every settings value makes of plain values (``settings``, ``planting.settings``): whole numbers,
frames, positive numbers, flags, keyword arguments, each raising an error that names the setting, the rule and
the value. Pure Python, no ``bpy``."""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from .setting_names import named

#: Blender's first and last frame (its MINAFRAME and MAXFRAME: the range of ``Scene.frame_current``). Keys
#: past them could not be reached by the timeline, and frames are kept as float32, exact only to 2**24.
FRAME_MIN, FRAME_MAX = -1_048_574, 1_048_574

_Function = TypeVar("_Function", bound=Callable[..., Any])


def check_keywords(keywords: Mapping[str, object], known: Sequence[str], call: str) -> None:
    """Every keyword is one of ``known`` (those of ``api.<call>``).

    Raises
    ------
    TypeError
        Naming each unknown keyword with the known one it is closest to, as Python names an unexpected
        keyword argument, and the known ones.
    """
    unknown = [name for name in keywords if name not in known]
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise TypeError(f"{call}() got an unexpected keyword argument {', '.join(hints)}; known: {', '.join(known)}")


def keywords_checked(function: _Function, call: str | None = None) -> _Function:
    """``function`` with its keyword arguments checked as a config file's keys are (``check_keywords``): an
    unknown one raises a ``TypeError`` that names the known keyword it is closest to ("did you mean") and the
    function as ``call`` (its own name by default), before ``function`` runs. A function that takes
    ``**keywords`` checks those itself and is returned as it is."""
    parameters = inspect.signature(function).parameters.values()
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return function
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    known = tuple(parameter.name for parameter in parameters if parameter.kind in named)

    @functools.wraps(function)
    def checked(*args: Any, **keywords: Any) -> Any:
        check_keywords(keywords, known, call or function.__name__)
        return function(*args, **keywords)

    return checked  # type: ignore[return-value]


def whole_number(value: object, name: str, *, low: int | None = None, hint: str = "") -> int:
    """``value`` as an ``int`` if it is a whole number (not a bool) of at least ``low``.

    Raises
    ------
    ValueError
        Naming ``name``, the rule (with ``hint``) and the value.
    """
    rule = "a whole number" + ("" if low is None else f" >= {low}") + hint
    number = real_number(value)
    if not number.is_integer() or (low is not None and number < low):  # NaN and infinity are not integers
        raise ValueError(f"{name} must be {rule}, got {value!r}")
    return int(number)


def frame_number(value: object, name: str) -> int:
    frame = whole_number(value, name)
    if not FRAME_MIN <= frame <= FRAME_MAX:
        raise ValueError(f"{name} must be one of Blender's frames, {FRAME_MIN} to {FRAME_MAX}, got {frame}")
    return frame


def positive_number(value: object, name: str) -> float:
    number = real_number(value)
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return number


def key_error_distance(value: object, name: str) -> float:
    """``value`` as a float if it is an error allowed in world units: a finite number >= 0 (0: a key on every
    frame).

    Raises
    ------
    ValueError
        Naming ``name``, the rule and the value.
    """
    number = real_number(value)
    if not (math.isfinite(number) and number >= 0.0):
        raise ValueError(
            f"{name} must be a distance in world units, a finite number >= 0 (0: a key on every frame), got {value!r}"
        )
    return number


def real_number(value: object) -> float:
    """``value`` as a float if it is a real number (not a bool), else NaN."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def check_flag(value: object, name: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")


def check_order(start: int, end: int) -> None:
    if end < start:
        raise ValueError(
            f"the frames end before they start: {named('frame_end')} {end}, {named('frame_start')} {start}"
        )


def set_field(value: object, name: str, checked: object) -> None:
    """Store a checked field of a frozen dataclass (in its ``__post_init__``)."""
    object.__setattr__(value, name, checked)
