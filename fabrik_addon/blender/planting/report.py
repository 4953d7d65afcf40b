"""What planting feet did: per foot its contacts and how far the ball slid in each before and after, as Blender
evaluates the keys, and the frames its pins were out of reach; for the whole, the error, the hips' drop and
the time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...reduction import KeysReport
from ...solver import FloatArray
from ...words import SCENE_UNITS, Unit, causes_words, counted, length_words, missed_words, skate_words
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
    leg_length : float
        How far the leg's bones above the foot reach, hip to ankle (scene units): the length Plant Feet's
        settings are measured in.
    off_target : dict of str to tuple of int
        Frames where the ball, as Blender evaluates the keys, is farther from its pin (or its animation) than
        the tolerance, by cause (``fabrik_addon.off_target``): ``"out of reach"`` (the pin beyond the leg's
        reach, the hips lowered where asked), ``"soft reach"`` (eased short of a pin near full reach), ``"IK
        limits"``, ``"not converged"``, ``"the scene"`` (something the bake does not own moves the leg: a
        constraint, a driver). Empty where the ball is on its goal on every frame.
    length_unit : (str, float)
        The unit its ``repr`` gives lengths in, as its symbol and the scene units in one (``PlantReport``'s).
    """

    foot: str
    contacts: tuple[tuple[int, int], ...]
    marked: bool
    skate_before: tuple[float, ...]
    skate_after: tuple[float, ...]
    out_of_reach_frames: tuple[int, ...]
    leg_length: float
    off_target: dict[str, tuple[int, ...]] = field(default_factory=dict)
    length_unit: Unit = SCENE_UNITS

    def __repr__(self) -> str:
        source = "marked" if self.marked else "found"
        return (
            f"FootReport({self.foot!r}: {counted(len(self.contacts), 'contact')} ({source}), "
            f"{skate_words(self.skate_before, self.skate_after, self.length_unit)}, leg "
            f"{length_words(self.leg_length, self.length_unit)}{_out_of_reach([self])}, "
            f"{missed_words(self.off_target, len(self.off_target_frames))})"
        )

    @property
    def off_target_frames(self) -> tuple[int, ...]:
        """Every frame where the ball is off its goal, whatever the cause, in order."""
        return tuple(sorted({frame for frames in self.off_target.values() for frame in frames}))


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
    hips_bob : (float, float)
        The hips' vertical bob, the peak to peak of their height over the frames planted (the mean of the hip
        joints'), as animated and once lowered (scene units; the same where the hips were left alone).
    seconds : float
        Wall time of the whole planting.
    bake : RigBakeReport
        The bake of the legs: per leg the frames, the error on each and the evaluated balls (``tips``).
    warnings : tuple of str
        What was planted but may not be what was meant: legs implausibly long for the scene's units, a setting in
        leg lengths that looks given in another unit (``planting.wrong_unit``: a contact height of 4).
    length_unit : (str, float)
        The scene's unit for lengths this small (its Length unit; millimetres or inches where that is Adaptive)
        as its symbol and the scene units in one.
    found_feet : bool
        Whether the feet were found in the animation (none were named): on each leg the highest bone whose
        tail touches down, left then right (``feet`` says which).
    goals : ndarray, shape (F, L, 3)
        Per frame and foot, where its ball should be (world space): on its pin through a contact, its
        animation outside contacts and their blends, between them in the blends; ``off_target`` counts the
        frames where Blender's evaluation of the keys puts it farther than the tolerance.
    """

    feet: tuple[FootReport, ...]
    max_error: float
    hips_drop: FloatArray
    floor: float
    hips_bob: tuple[float, float]
    seconds: float
    bake: RigBakeReport
    warnings: tuple[str, ...] = ()
    length_unit: Unit = SCENE_UNITS
    goals: FloatArray = field(default_factory=lambda: np.empty((0, 0, 3)))
    found_feet: bool = False

    def __repr__(self) -> str:
        unit = self.length_unit
        first, last = self.frames if self.bake.chains else (0, 0)
        missed = [foot for foot in self.feet if foot.off_target]
        frames = sum(len(foot.off_target_frames) for foot in missed)
        verdict = (
            missed_words({})
            if not missed
            else (f"off target on {counted(frames, 'frame')}{causes_words(foot.off_target for foot in missed)}")
        )
        hips = f", hips lowered up to {length_words(self.max_hips_drop, unit)}" if self.max_hips_drop > 0 else ""
        keys = "" if self.keys is None else f", {self.keys.words()}"
        warnings = f"; {counted(len(self.warnings), 'warning')}" if self.warnings else ""
        return (
            f"PlantReport({', '.join(repr(foot.foot) for foot in self.feet)}, frames {first}-{last}: "
            f"{counted(sum(len(foot.contacts) for foot in self.feet), 'contact')}, "
            f"{skate_words(_every(self.skate_before), _every(self.skate_after), unit)}, "
            f"max error {length_words(self.max_error, unit)}{hips}{_out_of_reach(self.feet)}, {verdict}{keys}; "
            f"{self.seconds:.2f} s{warnings})"
        )

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
    def frames(self) -> tuple[int, int]:
        """The first and last frame planted."""
        keyed = self.bake.chains[0].frames
        return int(keyed[0]), int(keyed[-1])

    @property
    def keys(self) -> KeysReport | None:
        """With a ``key_error``: the legs' and the hips' keys kept, and how far Blender's evaluation of them puts
        the bones from the planted pose (``RigBakeReport.keys``); None where every frame is keyed."""
        return self.bake.keys

    @property
    def max_hips_drop(self) -> float:
        return float(np.max(self.hips_drop, initial=0.0))


def _out_of_reach(feet: Sequence[FootReport]) -> str:
    """``", 12 frames out of reach"`` over the feet's pins; nothing where every pin was within reach."""
    frames = sum(len(foot.out_of_reach_frames) for foot in feet)
    return f", {counted(frames, 'frame')} out of reach" if frames else ""


def _every(per_foot: dict[str, list[float]]) -> list[float]:
    return [value for values in per_foot.values() for value in values]
