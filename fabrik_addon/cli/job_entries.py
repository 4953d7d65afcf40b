"""The jobs of the ``fabrik_bake`` command as a config file (or the command line) gives them, checked: each key
of the kind it holds (``KINDS``, ``check_shape``), known to its kind of job, and each value by the settings'
own rules, the command line's options (``check_defaults``) under the job's keys. Pure Python, no ``bpy``."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..planting import PLANT_KEYWORDS, PlantSettings
from ..setting_checks import key_error_distance
from ..settings import (
    CHAIN_LIST_KEYWORDS,
    DEFAULTS,
    IK_AFTER,
    KEYWORDS,
    OBJECT_KEYWORDS,
    TARGETS_KEYWORDS,
    BakeSettings,
    FrameRange,
    SolverSettings,
    check_output,
)
from .jobs import OBJECT_KEYS, ChainListJob, IKJob, Job, PlantJob, ReduceJob, TargetsJob, UsageError

#: The keys of an IK job besides ``armature`` and ``files``: the settings ``api.bake_ik_constraints`` takes.
IK_KEYWORDS = ("frame_start", "frame_end", "frame_step", "tolerance", "max_iterations", "after", "output", "key_error")

#: The keys of a job reducing keys besides ``armature`` and ``files``: the keywords of ``api.reduce_keys``.
REDUCE_KEYWORDS = ("bones", "key_error", "frame_start", "frame_end")

#: TOML's whole numbers are 64-bit; a larger one (JSON has no limit) is no frame, length or count.
_WHOLE_LIMIT = 2**63


@dataclass(frozen=True)
class Kind:
    """What a job key holds, as a config file writes it: ``words`` for messages, ``holds`` to check a value."""

    words: str
    holds: Callable[[object], bool]


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, float) or (isinstance(value, int) and abs(value) < _WHOLE_LIMIT)


def _is_whole(value: object) -> bool:
    if isinstance(value, float):
        return value.is_integer()  # not NaN, nor infinity
    return _is_number(value)


_NAME = Kind("an object's name", lambda value: isinstance(value, str) and value != "")
_TEXT = Kind("a string", lambda value: isinstance(value, str))
_FLAG = Kind("true or false", lambda value: isinstance(value, bool))
_WHOLE = Kind("a whole number", _is_whole)
_NUMBER = Kind("a number", _is_number)
_BONES = Kind(
    "a non-empty list of bone names (strings)",
    lambda value: isinstance(value, list) and bool(value) and all(isinstance(b, str) and b for b in value),
)
_PATTERNS = Kind(
    "a list of file name patterns (strings)",
    lambda value: isinstance(value, str) or (isinstance(value, list) and all(isinstance(p, str) for p in value)),
)

#: The kind of every key a job may have: its shape is checked here, once, before the settings' own rules
#: (ranges, names of methods) see the values.
KINDS: Mapping[str, Kind] = {
    **dict.fromkeys((*OBJECT_KEYS, *OBJECT_KEYWORDS), _NAME),
    **dict.fromkeys(("tip_bone", "target_bone", "pole_bone", "method", "action_name", "after", "output"), _TEXT),
    **dict.fromkeys(("chain_length", "frame_start", "frame_end", "frame_step", "max_iterations"), _WHOLE),
    **dict.fromkeys(("pole_angle", "rotation_weight", "weight", "soft_reach", "tolerance", "key_error"), _NUMBER),
    **dict.fromkeys(("use_stretch", "use_rotation", "warm_start", "from_ik_constraints"), _FLAG),
    # the chain list, and targets from the animation
    **dict.fromkeys(("chain_list", "targets_from_animation", "poles", "replace"), _FLAG),
    "chains": Kind(
        "a non-empty list of chain names (strings)",
        lambda value: isinstance(value, list) and bool(value) and all(isinstance(c, str) and c for c in value),
    ),
    # planting feet, and reducing keys
    "plant_feet": _BONES,
    "bones": _BONES,
    "reduce_keys": _FLAG,
    **dict.fromkeys(("hips_bone", "pin_at"), _TEXT),
    **dict.fromkeys(
        ("contact_height", "contact_speed", "contact_seconds", "blend_seconds", "hips_speed", "hips_seconds"), _NUMBER
    ),
    "floor": _NUMBER,
    "contact_gap": _WHOLE,
    "use_marks": _FLAG,
    "files": _PATTERNS,
}


def chain_job(entry: object, where: str, defaults: Mapping[str, Any]) -> Job:
    """A config file's job (or the command line's chain), its keys over the command line's ``defaults``."""
    not_keywords = {*OBJECT_KEYS, "files", "from_ik_constraints"}  # the last one false, or it is an IK job
    allowed = {*not_keywords, *KEYWORDS}
    entry = _checked(entry, where, allowed, lambda unknown: _unknown_key(unknown[0], allowed))
    missing = [key for key in ("armature", "tip_bone", "target") if key not in entry]
    if missing:
        raise UsageError(_at(where, f"missing {', '.join(map(repr, missing))}"))
    keywords = {**defaults, **{key: value for key, value in entry.items() if key not in not_keywords}}
    try:
        settings = BakeSettings.from_keywords(entry["armature"], entry["target"], **keywords)
    except (TypeError, ValueError) as error:
        raise UsageError(_at(where, str(error))) from None
    return Job(settings, _patterns(entry))


def ik_job(entry: object, where: str, defaults: Mapping[str, Any]) -> IKJob:
    """A job baking an armature's IK constraints: its keys over the command line's ``defaults``."""
    allowed = {"armature", "from_ik_constraints", "files", *IK_KEYWORDS}
    entry = _checked(
        entry,
        where,
        allowed,
        lambda unknown: f"an IK constraints job takes {', '.join(sorted(allowed))}; not {', '.join(unknown)}",
    )
    if "armature" not in entry:
        raise UsageError(_at(where, "missing 'armature'"))
    if defaults.get("method", "fabrik") != "fabrik":
        raise UsageError(_at(where, "IK constraints are baked with FABRIK (leave out --method)"))
    keywords = {key: value for key, value in {**defaults, **entry}.items() if key in IK_KEYWORDS}
    try:
        FrameRange(keywords.get("frame_start"), keywords.get("frame_end"), keywords.get("frame_step", 1))
        SolverSettings(keywords.get("tolerance", DEFAULTS["tolerance"]), keywords.get("max_iterations", 1))
    except (TypeError, ValueError) as error:
        raise UsageError(_at(where, str(error))) from None
    if keywords.get("after", "mute") not in IK_AFTER:
        raise UsageError(_at(where, f"'after' must be one of {', '.join(IK_AFTER)}, got {keywords['after']!r}"))
    try:
        check_output(keywords.get("output", "action"), None)
        key_error_distance(keywords.get("key_error", 0.0), "'key_error'")
    except ValueError as error:
        raise UsageError(_at(where, str(error))) from None
    return IKJob(entry["armature"], keywords, _patterns(entry))


def chain_list_job(entry: object, where: str, defaults: Mapping[str, Any]) -> ChainListJob:
    """A job baking the chain list saved on an armature (or on every armature with one): its keys over the
    command line's ``defaults``."""
    allowed = {"armature", "chain_list", "files", *CHAIN_LIST_KEYWORDS}

    def unknown_keys(unknown: list[str]) -> str:
        chain = [key for key in unknown if key in {*KEYWORDS, "target"}]
        if chain:
            return f"a chain list job bakes the chains saved in the file: leave out {', '.join(map(repr, chain))}"
        return _unknown_key(unknown[0], allowed)

    entry = _checked(entry, where, allowed, unknown_keys)
    keywords = {key: value for key, value in {**defaults, **entry}.items() if key in CHAIN_LIST_KEYWORDS}
    keywords = {key: _whole_if_whole(key, value) for key, value in keywords.items()}
    try:
        BakeSettings.from_keywords(None, None, tip_bone="", **keywords)
    except (TypeError, ValueError) as error:
        raise UsageError(_at(where, str(error))) from None
    return ChainListJob(entry.get("armature"), keywords, _patterns(entry))


def targets_job(entry: object, where: str, defaults: Mapping[str, Any]) -> TargetsJob:
    """A job making targets from the animation for an armature's chain list (or every armature's): its keys over
    the command line's frames."""
    allowed = {"armature", "targets_from_animation", "files", *TARGETS_KEYWORDS}
    entry = _checked(entry, where, allowed, lambda unknown: _unknown_key(unknown[0], allowed))
    given = {key: value for key, value in defaults.items() if key in ("frame_start", "frame_end", "key_error")}
    keywords: dict[str, Any] = {
        key: _whole_if_whole(key, value) for key, value in {**given, **entry}.items() if key in TARGETS_KEYWORDS
    }
    try:
        FrameRange(keywords.get("frame_start"), keywords.get("frame_end"))
        key_error_distance(keywords.get("key_error", 0.0), "'key_error'")
    except (TypeError, ValueError) as error:
        raise UsageError(_at(where, str(error))) from None
    return TargetsJob(entry.get("armature"), keywords, _patterns(entry))


def plant_job(entry: object, where: str, defaults: Mapping[str, Any]) -> PlantJob:
    """A job planting feet (``plant_feet``): its keys over the command line's ``defaults`` (those that
    ``api.plant_feet`` takes: frames, tolerance, iterations)."""
    allowed = {"armature", "plant_feet", "files", *PLANT_KEYWORDS}

    def unknown_keys(unknown: list[str]) -> str:
        if "frame_step" in unknown:
            return "feet are planted on every frame: leave out 'frame_step'"
        if "method" in unknown:
            return "feet are planted with FABRIK: leave out 'method'"
        baking = [key for key in unknown if key in {*KEYWORDS, *OBJECT_KEYS, "from_ik_constraints"}]
        if baking:
            return f"a job planting feet takes no {', '.join(map(repr, baking))} (keys of a chain to bake)"
        return _unknown_key(unknown[0], allowed)

    entry = _checked(entry, where, allowed, unknown_keys)
    if "armature" not in entry:
        raise UsageError(_at(where, "missing 'armature'"))
    if defaults.get("method", "fabrik") != "fabrik":
        raise UsageError(_at(where, "feet are planted with FABRIK (leave out --method)"))
    if defaults.get("frame_step", 1) != 1:
        raise UsageError(_at(where, "feet are planted on every frame (leave out --step)"))
    keywords = {key: value for key, value in {**defaults, **entry}.items() if key in PLANT_KEYWORDS}
    keywords = {key: _whole_if_whole(key, value) for key, value in keywords.items()}
    try:
        PlantSettings.from_keywords(entry["armature"], entry["plant_feet"], **keywords)
    except (TypeError, ValueError) as error:
        raise UsageError(_at(where, str(error))) from None
    return PlantJob(entry["armature"], tuple(entry["plant_feet"]), keywords, _patterns(entry))


def reduce_job(entry: object, where: str, defaults: Mapping[str, Any]) -> ReduceJob:
    """A job reducing the keys of an armature's bones: its keys over the command line's frames and key error."""
    allowed = {"armature", "reduce_keys", "files", *REDUCE_KEYWORDS}
    entry = _checked(entry, where, allowed, lambda unknown: _unknown_key(unknown[0], allowed))
    if "armature" not in entry:
        raise UsageError(_at(where, "missing 'armature'"))
    given = {key: value for key, value in defaults.items() if key in REDUCE_KEYWORDS}
    keywords: dict[str, Any] = {
        key: _whole_if_whole(key, value) for key, value in {**given, **entry}.items() if key in REDUCE_KEYWORDS
    }
    try:
        FrameRange(keywords.get("frame_start"), keywords.get("frame_end"))
        if key_error_distance(keywords.get("key_error", 0.0), "'key_error'") == 0.0:
            raise ValueError("reducing keys needs 'key_error', the distance the fewer keys may move a bone (above 0)")
    except (TypeError, ValueError) as error:
        raise UsageError(_at(where, str(error))) from None
    return ReduceJob(entry["armature"], keywords, _patterns(entry))


def _whole_if_whole(key: str, value: object) -> object:
    """A whole number written as a float (JSON's ``2.0``) as an ``int``, for the settings that take only those."""
    return int(value) if KINDS.get(key) is _WHOLE and isinstance(value, float) else value


def check_defaults(defaults: Mapping[str, Any]) -> None:
    """The bake settings given for every job (the command line's options), by the settings' own rules, before
    any job is read.

    Raises
    ------
    UsageError
        Naming the setting by its key (``frame_step``).
    """
    check_shape(defaults, "")
    try:
        BakeSettings.from_keywords(None, None, tip_bone="", **defaults)
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None


def check_shape(values: Mapping[str, object], where: str) -> None:
    """Each value is of its key's kind (see ``KINDS``): a string where a name belongs, a whole number that fits
    in 64 bits, true or false.

    Raises
    ------
    UsageError
        In one line naming the first key whose value is of the wrong kind, the kind and the value.
    """
    for key, value in values.items():
        kind = KINDS.get(key)
        if kind is not None and not kind.holds(value):
            raise UsageError(_at(where, f"'{key}' must be {kind.words}, got {_shown(value)}"))


def _checked(entry: object, where: str, allowed: set[str], unknown_keys: Callable[[list[str]], str]) -> dict[str, Any]:
    """A job's table of keys, its keys among ``allowed`` and each value of its key's kind."""
    if not isinstance(entry, dict):
        raise UsageError(_at(where, f"must be a table of keys, got {_shown(entry)}"))
    unknown = sorted(set(entry) - allowed, key=list(entry).index)
    if unknown:
        raise UsageError(_at(where, unknown_keys(unknown)))
    check_shape(entry, where)
    return entry


def _unknown_key(key: str, allowed: set[str]) -> str:
    close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.5)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown key '{key}'{hint}; known keys: {', '.join(sorted(allowed))}"


def _patterns(entry: Mapping[str, Any]) -> tuple[str, ...]:
    files = entry.get("files", ())
    return (files,) if isinstance(files, str) else tuple(files)


def _at(where: str, message: str) -> str:
    """A message about a job: ``where`` (``chains.toml: job 2``) first, if any."""
    return f"{where}: {message}" if where else message


def _shown(value: object) -> str:
    """A value as a message shows it: a whole number too long to read by its first digits and its length."""
    text = repr(value)
    if isinstance(value, int) and len(text) > 40:
        return f"{text[:20]}... ({len(text.lstrip('-'))} digits: too large)"
    return text if len(text) <= 80 else f"{text[:77]}..."
