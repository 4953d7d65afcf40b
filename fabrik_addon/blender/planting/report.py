"""What planting feet did: per foot its contacts and how far the ball slid in each before and after, as Blender
evaluates the keys, and the frames its pins were out of reach; for the whole, the error, the hips' drop and
the time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...reduction import KeysReport
from ...solver import FloatArray
from ..bake import RigBakeReport


@dataclass(frozen=True)
class FootReport:
    """One foot of a planting.

    Attributes
    ----------
    foot : str
        The foot bone.
    contacts : tuple of (int, int)
        Its contacts as (first, last) frames, both included.
    marked : bool
        Whether they came from the foot's contact marks (else found in the animation).
    skate_before, skate_after : tuple of float
        Per contact, how far the ball slides in it (the largest horizontal distance between its places on any
        two frames of it), in the animation and as Blender evaluates the keys; scene units.
    out_of_reach_frames : tuple of int
        Frames whose pin the leg could not reach (with the hips lowered, where that was asked).
    """

    foot: str
    contacts: tuple[tuple[int, int], ...]
    marked: bool
    skate_before: tuple[float, ...]
    skate_after: tuple[float, ...]
    out_of_reach_frames: tuple[int, ...]


@dataclass(frozen=True)
class PlantReport:
    """What ``plant_feet`` did.

    Attributes
    ----------
    feet : tuple of FootReport
        In the order the feet were given.
    max_error : float
        The largest distance of any ball from its goal on any frame, as Blender evaluates the keys.
    hips_drop : ndarray, shape (F,)
        How far the hips went down on each frame planted (scene units; zeros when they were left alone).
    floor : float
        The floor's height the contacts were found against.
    seconds : float
        Wall time of the whole planting.
    bake : RigBakeReport
        The bake of the legs: per leg the frames, the error on each and the evaluated balls (``tips``).
    """

    feet: tuple[FootReport, ...]
    max_error: float
    hips_drop: FloatArray
    floor: float
    seconds: float
    bake: RigBakeReport

    @property
    def contacts(self) -> dict[str, list[tuple[int, int]]]:
        """Per foot, its contacts as (first, last) frames, both included."""
        return {foot.foot: list(foot.contacts) for foot in self.feet}

    @property
    def skate_before(self) -> dict[str, list[float]]:
        """Per foot, how far the ball slid in each contact in the animation (scene units)."""
        return {foot.foot: list(foot.skate_before) for foot in self.feet}

    @property
    def skate_after(self) -> dict[str, list[float]]:
        """Per foot, how far the ball slides in each contact after planting, as Blender evaluates the keys."""
        return {foot.foot: list(foot.skate_after) for foot in self.feet}

    @property
    def frames_out_of_reach(self) -> dict[str, tuple[int, ...]]:
        """Per foot, the frames whose pin its leg could not reach."""
        return {foot.foot: foot.out_of_reach_frames for foot in self.feet}

    @property
    def keys(self) -> KeysReport | None:
        """With a ``key_error``: the legs' and the hips' keys kept, and how far Blender's evaluation of them puts
        the bones from the planted pose (``RigBakeReport.keys``); None where every frame is keyed."""
        return self.bake.keys

    @property
    def max_hips_drop(self) -> float:
        return float(np.max(self.hips_drop, initial=0.0))
