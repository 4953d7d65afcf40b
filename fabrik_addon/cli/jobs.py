"""The jobs of the ``fabrik_bake`` command: a chain to bake, an armature's IK constraints, or feet to plant, each
checked by the settings value's own rules when it is read (from the command line or a config file), before any
.blend file is opened. Pure Python, no ``bpy``."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..planting import PLANT_KEYWORDS, PlantSettings
from ..settings import (
    DEFAULTS,
    IK_AFTER,
    KEYWORDS,
    OBJECT_KEYWORDS,
    BakeSettings,
    FrameRange,
    SolverSettings,
)

#: Job keys that name objects in the file, besides the keyword arguments of ``api.bake`` that do.
OBJECT_KEYS = ("armature", "target")


class UsageError(Exception):
    """A mistake in the arguments or the config file: exit status 2, nothing is opened."""


@dataclass(frozen=True)
class Job:
    """One chain to bake in each file it applies to.

    Attributes
    ----------
    settings : BakeSettings
        The chain and how to bake it, its objects given by name (looked up in each file).
    files : tuple of str
        Shell patterns (``shot_*.blend``) for the names of the files the job applies to; empty for all.
    """

    settings: BakeSettings[str]
    files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The chains as the progress lines and errors name them: ``armature/tip_bone`` (``+``-joined tips for
        jobs baked together)."""
        chains = self.settings.chains
        return f"{chains[0].armature}/{'+'.join(chain.tip_bone for chain in chains)}"

    def applies_to(self, path: Path) -> bool:
        return not self.files or any(fnmatch.fnmatch(path.name, pattern) for pattern in self.files)

    def to_config(self) -> dict[str, Any]:
        """The job as an entry of a config file's ``jobs`` list."""
        chain = self.settings.chains[0]
        entry = {"armature": chain.armature, "target": chain.target, **self.settings.keywords()}
        return entry | ({"files": list(self.files)} if self.files else {})


@dataclass(frozen=True)
class IKJob:
    """Every IK constraint of an armature that is on, baked in each file the job applies to
    (``api.bake_ik_constraints``).

    Attributes
    ----------
    armature : str
        The armature object's name.
    keywords : mapping
        Keyword arguments of ``api.bake_ik_constraints`` (frames, tolerance, iterations, ``after``), checked.
    files : tuple of str
        As for ``Job``.
    """

    armature: str
    keywords: Mapping[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.armature}/IK constraints"

    def applies_to(self, path: Path) -> bool:
        return not self.files or any(fnmatch.fnmatch(path.name, pattern) for pattern in self.files)

    def to_config(self) -> dict[str, Any]:
        entry = {"armature": self.armature, "from_ik_constraints": True, **self.keywords}
        return entry | ({"files": list(self.files)} if self.files else {})


@dataclass(frozen=True)
class PlantJob:
    """Feet to plant on an armature's animation in each file the job applies to (``api.plant_feet``).

    Attributes
    ----------
    armature : str
        The armature object's name.
    feet : tuple of str
        The foot bones, each the tip of a leg whose ball (the foot's tail) is held through its contacts.
    keywords : mapping
        Keyword arguments of ``api.plant_feet`` (``PLANT_KEYWORDS``: ``hips_bone``, ``chain_length``, frames,
        contact thresholds...), checked into ``settings``.
    files : tuple of str
        As for ``Job``.
    """

    armature: str
    feet: tuple[str, ...]
    keywords: Mapping[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.armature}/{'+'.join(self.feet)}"

    @property
    def settings(self) -> PlantSettings[str]:
        """The planting these keywords mean, its armature by name."""
        return PlantSettings.from_keywords(self.armature, self.feet, **self.keywords)

    def applies_to(self, path: Path) -> bool:
        return not self.files or any(fnmatch.fnmatch(path.name, pattern) for pattern in self.files)

    def to_config(self) -> dict[str, Any]:
        entry = {"armature": self.armature, "plant_feet": list(self.feet), **self.keywords}
        return entry | ({"files": list(self.files)} if self.files else {})


#: Any kind of job.
AnyJob = Job | IKJob | PlantJob

#: The keys of an IK job besides ``armature`` and ``files``: the settings ``api.bake_ik_constraints`` takes.
IK_KEYWORDS = ("frame_start", "frame_end", "frame_step", "tolerance", "max_iterations", "after")

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
    **dict.fromkeys(("tip_bone", "target_bone", "pole_bone", "method", "action_name", "after"), _TEXT),
    **dict.fromkeys(("chain_length", "frame_start", "frame_end", "frame_step", "max_iterations"), _WHOLE),
    **dict.fromkeys(("pole_angle", "rotation_weight", "weight", "soft_reach", "tolerance"), _NUMBER),
    **dict.fromkeys(("use_stretch", "use_rotation", "warm_start", "from_ik_constraints"), _FLAG),
    # planting feet
    "plant_feet": _BONES,
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
    return IKJob(entry["armature"], keywords, _patterns(entry))


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


def baked_together(jobs: Sequence[AnyJob]) -> list[AnyJob]:
    """The jobs that apply to one file, those on the same armature with the same frames, solver and Action
    joined into one job, so that their chains are baked in one walk through the frames (and chains sharing
    bones as one tree, as a bake of the sidebar's chain list does). The others stay as they are, in order."""
    merged: list[AnyJob] = []
    where: dict[tuple[Any, ...], int] = {}
    for job in jobs:
        if not isinstance(job, Job):  # IK constraints and planting are each baked on their own
            merged.append(job)
            continue
        settings = job.settings
        key = (settings.chains[0].armature, settings.frames, settings.solver, settings.action_name)
        if key not in where:
            where[key] = len(merged)
            merged.append(job)
            continue
        first = merged[where[key]]
        assert isinstance(first, Job)
        merged[where[key]] = Job(replace(first.settings, chains=first.settings.chains + settings.chains), first.files)
    return merged
