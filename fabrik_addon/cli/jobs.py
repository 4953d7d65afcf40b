"""The jobs of the ``fabrik_bake`` command: a chain to bake, or an armature's IK constraints, each checked by
the settings value's own rules when it is read (from the command line or a config file), before any .blend
file is opened. Pure Python, no ``bpy``."""

from __future__ import annotations

import difflib
import fnmatch
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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


#: Either kind of job.
AnyJob = Job | IKJob

#: The keys of an IK job besides ``armature`` and ``files``: the settings ``api.bake_ik_constraints`` takes.
IK_KEYWORDS = ("frame_start", "frame_end", "frame_step", "tolerance", "max_iterations", "after")


def chain_job(entry: object, where: str, defaults: Mapping[str, Any]) -> Job:
    """A config file's job (or the command line's chain), its keys over the command line's ``defaults``."""
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: must be a table of keys, got {entry!r}")
    allowed = {*OBJECT_KEYS, "files", *KEYWORDS}
    for key in entry:
        if key not in allowed:
            close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.5)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise UsageError(f"{where}: unknown key '{key}'{hint}; known keys: {', '.join(sorted(allowed))}")
    missing = [key for key in ("armature", "tip_bone", "target") if key not in entry]
    if missing:
        raise UsageError(f"{where}: missing {', '.join(map(repr, missing))}")
    for key in (*OBJECT_KEYS, *OBJECT_KEYWORDS):
        if key in entry and (not isinstance(entry[key], str) or not entry[key]):
            raise UsageError(f"{where}: '{key}' must be an object's name, got {entry[key]!r}")
    files = entry.get("files", [])
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list) or not all(isinstance(p, str) for p in files):
        raise UsageError(f"{where}: 'files' must be a list of file name patterns, got {files!r}")
    keywords = {**defaults, **{key: value for key, value in entry.items() if key not in {*OBJECT_KEYS, "files"}}}
    try:
        settings = BakeSettings.from_keywords(entry["armature"], entry["target"], **keywords)
    except (TypeError, ValueError) as error:
        raise UsageError(f"{where}: {error}") from None
    return Job(settings, tuple(files))


def ik_job(entry: dict[str, Any], where: str, defaults: Mapping[str, Any]) -> IKJob:
    """A job baking an armature's IK constraints: its keys over the command line's ``defaults``."""
    allowed = {"armature", "from_ik_constraints", "files", *IK_KEYWORDS}
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise UsageError(f"{where}: an IK constraints job takes {', '.join(sorted(allowed))}; not {', '.join(unknown)}")
    if not isinstance(entry.get("armature"), str) or not entry["armature"]:
        raise UsageError(f"{where}: 'armature' must be an object's name, got {entry.get('armature')!r}")
    if defaults.get("method", "fabrik") != "fabrik":
        raise UsageError(f"{where}: IK constraints are baked with FABRIK (leave out --method)")
    keywords = {key: value for key, value in {**defaults, **entry}.items() if key in IK_KEYWORDS}
    try:
        FrameRange(keywords.get("frame_start"), keywords.get("frame_end"), keywords.get("frame_step", 1))
        SolverSettings(keywords.get("tolerance", DEFAULTS["tolerance"]), keywords.get("max_iterations", 1))
    except (TypeError, ValueError) as error:
        raise UsageError(f"{where}: {error}") from None
    if keywords.get("after", "mute") not in IK_AFTER:
        raise UsageError(f"{where}: 'after' must be one of {', '.join(IK_AFTER)}, got {keywords['after']!r}")
    files = entry.get("files", [])
    return IKJob(entry["armature"], keywords, tuple([files] if isinstance(files, str) else files))


def baked_together(jobs: Sequence[AnyJob]) -> list[AnyJob]:
    """The jobs that apply to one file, those on the same armature with the same frames, solver and Action
    joined into one job, so that their chains are baked in one walk through the frames (and chains sharing
    bones as one tree, as a bake of the sidebar's chain list does). The others stay as they are, in order."""
    merged: list[AnyJob] = []
    where: dict[tuple[Any, ...], int] = {}
    for job in jobs:
        if isinstance(job, IKJob):
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


def read_config(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read the config file {path}: {error.strerror or error}") from None
    try:
        if path.suffix.lower() == ".toml":
            return tomllib.loads(text)
        if path.suffix.lower() == ".json":
            data = json.loads(text)
            if not isinstance(data, dict):
                raise UsageError(f"{path}: must hold a JSON object with a 'jobs' list")
            return data
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{path} does not parse: {error}") from None
    raise UsageError(f"{path}: a config file must end in .toml or .json")
