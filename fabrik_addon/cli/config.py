"""The config file of the ``fabrik_bake`` command (``--config FILE``): a UTF-8 TOML or JSON file whose ``jobs`` list
the chains to bake, IK constraints to bake and feet to plant in each file. Pure Python, no ``bpy``."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .job_entries import chain_job, chain_list_job, ik_job, plant_job, reduce_job, targets_job
from .jobs import AnyJob, UsageError


def config_jobs(path: Path, defaults: Mapping[str, Any]) -> tuple[AnyJob, ...]:
    """The jobs a config file lists (``{"jobs": [...]}``), their keys over the command line's ``defaults``.

    Raises
    ------
    UsageError
        If the file cannot be read, is not UTF-8 TOML or JSON, or a job in it is wrong.
    """
    data = _read_config(path)
    extra = sorted(set(data) - {"jobs"})
    if extra:
        raise UsageError(f"{path}: unknown top-level key {', '.join(map(repr, extra))}: list the chains in 'jobs'")
    entries = data.get("jobs")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: 'jobs' must be a non-empty list of jobs (chains to bake, feet to plant)")
    return tuple(job(entry, f"{path}: job {i}", defaults) for i, entry in enumerate(entries, start=1))


def _read_config(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read the config file {path}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark, as some editors write, is no mistake
    except UnicodeDecodeError as error:
        byte = raw[error.start]
        raise UsageError(
            f"{path} is not UTF-8 text (byte 0x{byte:02x} at offset {error.start}): save it as UTF-8"
        ) from None
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


def job(entry: object, where: str, defaults: Mapping[str, Any]) -> AnyJob:
    """A config file's job: a chain, an armature's IK constraints (``from_ik_constraints = true``), feet to
    plant (``plant_feet = [...]``), the chain list saved in the file (``chain_list = true``), targets made
    from the animation for it (``targets_from_animation = true``), or the keys of bones reduced
    (``reduce_keys = true``)."""
    if isinstance(entry, dict) and entry.get("from_ik_constraints") is True:
        return ik_job(entry, where, defaults)
    if isinstance(entry, dict) and "plant_feet" in entry:
        return plant_job(entry, where, defaults)
    if isinstance(entry, dict) and entry.get("chain_list") is True:
        return chain_list_job(entry, where, defaults)
    if isinstance(entry, dict) and entry.get("targets_from_animation") is True:
        return targets_job(entry, where, defaults)
    if isinstance(entry, dict) and entry.get("reduce_keys") is True:
        return reduce_job(entry, where, defaults)
    return chain_job(entry, where, defaults)
