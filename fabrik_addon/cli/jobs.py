"""The jobs of the ``fabrik_bake`` command: a chain to bake, an armature's IK constraints, feet to plant, the
chain list saved in a file, targets made from its animation, or its keys reduced; each checked by the settings
value's own rules when it is read (``job_entries``, from the command line or a config file), before any .blend
file is opened. Pure Python, no ``bpy``."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from ..planting import PlantSettings
from ..settings import BakeSettings

#: Job keys that name objects in the file, besides the keyword arguments of ``api.bake`` that do.
OBJECT_KEYS = ("armature", "target")


class UsageError(Exception):
    """A mistake in the arguments or the config file: exit status 2, nothing is opened."""


class _InFiles:
    """What every job shares: the files it applies to (``files``, shell patterns of their names; empty for
    all), and those as a config entry's key."""

    files: tuple[str, ...]

    def applies_to(self, path: Path) -> bool:
        return not self.files or any(fnmatch.fnmatch(path.name, pattern) for pattern in self.files)

    def _with_files(self, entry: dict[str, Any]) -> dict[str, Any]:
        return entry | ({"files": list(self.files)} if self.files else {})


@dataclass(frozen=True)
class Job(_InFiles):
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

    def to_config(self) -> dict[str, Any]:
        """The job as an entry of a config file's ``jobs`` list."""
        chain = self.settings.chains[0]
        entry = {"armature": chain.armature, "target": chain.target, **self.settings.keywords()}
        return self._with_files(entry)


@dataclass(frozen=True)
class _ArmatureJob(_InFiles):
    """A job on one armature that a config entry's flag makes (not one itself): ``KEY`` the flag, ``DOES`` how
    its label says what it does.

    Attributes
    ----------
    armature : str
        The armature object's name.
    keywords : mapping
        Keyword arguments of the API function the job calls, checked.
    files : tuple of str
        As for ``Job``.
    """

    KEY: ClassVar[str] = ""
    DOES: ClassVar[str] = ""

    armature: str
    keywords: Mapping[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.armature}/{self.DOES}"

    def to_config(self) -> dict[str, Any]:
        return self._with_files({"armature": self.armature, self.KEY: True, **self.keywords})


@dataclass(frozen=True)
class IKJob(_ArmatureJob):
    """Every IK constraint of an armature that is on, baked in each file the job applies to
    (``api.bake_ik_constraints``, its keyword arguments ``keywords``: frames, tolerance, iterations, ``after``)."""

    KEY: ClassVar[str] = "from_ik_constraints"
    DOES: ClassVar[str] = "IK constraints"


@dataclass(frozen=True)
class PlantJob(_InFiles):
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

    def to_config(self) -> dict[str, Any]:
        entry = {"armature": self.armature, "plant_feet": list(self.feet), **self.keywords}
        return self._with_files(entry)


@dataclass(frozen=True)
class _SavedChainsJob(_InFiles):
    """A job on the chain lists saved in a file: of one armature, or of every armature with enabled chains.

    Attributes
    ----------
    armature : str or None
        The armature object's name; None for every armature with enabled chains.
    keywords : mapping
        The settings the job gives, checked.
    files : tuple of str
        As for ``Job``.
    """

    #: The config key that makes a job of this kind, and how its label says what it does.
    KEY: ClassVar[str] = ""
    DOES: ClassVar[str] = ""

    armature: str | None
    keywords: Mapping[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.armature or '*'}/{self.DOES}"

    def to_config(self) -> dict[str, Any]:
        return self._with_files(
            {**({"armature": self.armature} if self.armature else {}), self.KEY: True, **self.keywords}
        )


@dataclass(frozen=True)
class ChainListJob(_SavedChainsJob):
    """The chain list saved on an armature (set up in the sidebar), baked in each file the job applies to as the
    sidebar's Bake button bakes it (``api.bake_chains``), ``keywords`` (``settings.CHAIN_LIST_KEYWORDS``) given
    in place of the armature's own settings."""

    KEY: ClassVar[str] = "chain_list"
    DOES: ClassVar[str] = "chain list"


@dataclass(frozen=True)
class TargetsJob(_SavedChainsJob):
    """Targets from Animation for the chain list saved on an armature (``api.targets_from_animation``, its
    keyword arguments ``keywords``: ``settings.TARGETS_KEYWORDS``) in each file the job applies to."""

    KEY: ClassVar[str] = "targets_from_animation"
    DOES: ClassVar[str] = "targets from animation"


@dataclass(frozen=True)
class ReduceJob(_ArmatureJob):
    """The keys of an armature's bones thinned within an error in each file the job applies to
    (``api.reduce_keys``, its keyword arguments ``keywords``: ``bones``, ``key_error``, frames)."""

    KEY: ClassVar[str] = "reduce_keys"
    DOES: ClassVar[str] = "reduce keys"


#: Any kind of job.
AnyJob = Job | IKJob | PlantJob | ChainListJob | TargetsJob | ReduceJob


def baked_together(jobs: Sequence[AnyJob]) -> list[AnyJob]:
    """The jobs that apply to one file, those on the same armature with the same frames, solver, Action, output
    (the Action or a layer) and key error joined into one job, so that their chains are baked in one walk through
    the frames (and chains sharing bones as one tree, as a bake of the sidebar's chain list does). The others stay
    as they are, in order."""
    merged: list[AnyJob] = []
    where: dict[tuple[Any, ...], int] = {}
    for job in jobs:
        if not isinstance(job, Job):  # IK constraints, planting and the rest each run on their own
            merged.append(job)
            continue
        settings = job.settings
        key = (
            settings.chains[0].armature,
            settings.frames,
            settings.solver,
            settings.action_name,
            settings.output,
            settings.key_error,
        )
        if key not in where:
            where[key] = len(merged)
            merged.append(job)
            continue
        first = merged[where[key]]
        assert isinstance(first, Job)
        merged[where[key]] = Job(replace(first.settings, chains=first.settings.chains + settings.chains), first.files)
    return merged
