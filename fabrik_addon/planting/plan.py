"""Compute every foot's goals for a bake that plants feet, given what the animation does: contacts (found, or
given), pins with their blends, how far the hips go down, and where a leg eases rather than snaps straight.

A foot is the tip bone of a leg chain; it keeps its animated world orientation, so its ball (the tip's tail)
hangs at a fixed offset from its ankle (the tip's head) on each frame, and the bones above it only have to
bring the ankle to the ball's goal less that offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from ..setting_names import plant_named
from ..solver import FloatArray
from .contacts import Contact, ContactRules, cut_frames, find_contacts, floor_height, split_at
from .pins import PIN_AT, pinned_path
from .reach import eased_heads, hips_drop, lowered

#: The most soft reach a planting takes, in leg lengths: a quarter of the leg eases it straight from a knee bent
#: by about 80 degrees; more cannot be meant (a value in scene units given as leg lengths, say).
_MOST_SOFT_REACH = 0.25


@dataclass(frozen=True)
class PlantRules:
    """How feet are planted; lengths in leg lengths (the bones above the foot), times in seconds.

    Attributes
    ----------
    contacts : ContactRules
        When a ball counts as planted (where contacts are not given).
    blend_seconds : float
        The longest ease into and out of a pin (>= 0).
    pin_at : {"middle", "start"}
        Where in a contact the ball is pinned: where it is on the contact's middle frame, or its first.
    hips_speed : float
        Leg lengths per second (> 0): how fast the hips may go down or up when lowered.
    hips_seconds : float
        Seconds (>= 0): how slowly the hips' drop changes (``reach.smooth_drop``): over about this long, and no
        less than a stride of the feet (their contacts' median spacing), it eases in and out, and within it the
        hips keep their own motion (a walk's bob) rather than going down with each step; slower still where
        that would make the hips bob more than ``MOST_BOB`` times as much as animated. 0: the least drop on each
        frame.
    soft_reach : float
        Leg lengths (0 to 0.25): a pinned leg eases straight over this distance short of full reach instead of
        snapping straight; with the hips lowered, they go down far enough that no pin comes this near.
    floor : float or None
        The floor's height in scene units; None: where the balls rest, the lowest but for noise
        (``contacts.floor_height``).
    tolerance : float
        Leg lengths (> 0): how close each ball must come to its goal (0.0002: 0.2 mm on a human leg, so a
        ball held within it slides at most twice that).
    """

    contacts: ContactRules = field(default_factory=ContactRules)
    blend_seconds: float = 0.15
    pin_at: str = "middle"
    hips_speed: float = 0.3
    hips_seconds: float = 1.0
    soft_reach: float = 0.01
    floor: float | None = None
    tolerance: float = 2e-4

    def __post_init__(self) -> None:
        if not isinstance(self.contacts, ContactRules):
            raise TypeError(f"contacts must be ContactRules, got {type(self.contacts).__name__}")
        _number(self.blend_seconds, "blend_seconds", 0.0)
        if self.pin_at not in PIN_AT:
            choices = ", ".join(map(repr, PIN_AT))
            raise ValueError(f"{plant_named('pin_at')} must be one of {choices}, got {self.pin_at!r}")
        _number(self.hips_speed, "hips_speed", 0.0, strict=True)
        _number(self.hips_seconds, "hips_seconds", 0.0)
        _number(self.soft_reach, "soft_reach", 0.0)
        if self.soft_reach > _MOST_SOFT_REACH:
            raise ValueError(
                f"{plant_named('soft_reach')} {self.soft_reach:g} is in leg lengths: a leg cannot ease straight over "
                f"{self.soft_reach:g} of its length (the hips would go down that much); give at most "
                f"{_MOST_SOFT_REACH:g} (0.01 by default: 1 cm on a 1 m leg)"
            )
        if self.floor is not None:
            _number(self.floor, "floor")
        _number(self.tolerance, "tolerance", 0.0, strict=True)


def _number(value: object, name: str, low: float | None = None, *, strict: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and bool(np.isfinite(value))
    if ok and low is not None:
        ok = value > low if strict else value >= low  # type: ignore[operator]
    if not ok:
        bound = "" if low is None else f" {'>' if strict else '>='} {low:g}"
        raise ValueError(f"{plant_named(name)} must be a number{bound}, got {value!r}")


@dataclass(frozen=True)
class Foot:
    """One foot as animated, on every frame planted, in world space.

    Attributes
    ----------
    ball, ankle, hip : ndarray, shape (F, 3)
        The foot bone's tail and head, and the head of the leg chain's root (the hip joint).
    reach : float
        How far the bones above the foot reach from the hip joint to the ankle (scene units): the leg length
        the rules are measured in.
    contacts : list of (first, last), or None
        The foot's contacts if given (marked by hand); None: found from the animation.
    """

    ball: FloatArray
    ankle: FloatArray
    hip: FloatArray
    reach: float
    contacts: list[Contact] | None = None


@dataclass(frozen=True)
class Planting:
    """The goals of a bake that plants feet, and what they took.

    Attributes
    ----------
    contacts : list of list of (first, last)
        Per foot, its contacts (indices into the frames, both included).
    goals : ndarray, shape (F, L, 3)
        Per frame and foot, where the ball should be: its pin (or its animation, or between), eased toward the
        hip where a leg straightens gradually (soft reach).
    pinned : ndarray, shape (F, L, 3)
        The same without the easing: where the ball would be on its pin.
    weights : ndarray, shape (F, L)
        How far each frame is pinned (0 outside contacts and their blends, where the goal is the animation).
    drop : ndarray, shape (F,)
        How far the hips go down (scene units; 0 without lowering).
    out_of_reach : ndarray of bool, shape (F, L)
        Pinned frames whose pin the leg cannot reach (the hips lowered where asked): the leg eases toward it.
    floor : float
        The floor's height used.
    hips_height : ndarray, shape (F,)
        The hip joints' mean height as animated (scene units): the hips' own motion, which ``drop`` lowers.
    """

    contacts: list[list[Contact]]
    goals: FloatArray
    pinned: FloatArray
    weights: FloatArray
    drop: FloatArray
    out_of_reach: NDArray[np.bool_]
    floor: float
    hips_height: FloatArray

    @property
    def bob_before(self) -> float:
        """The hips' vertical bob as animated: the peak to peak of their height (scene units)."""
        return float(np.ptp(self.hips_height)) if len(self.hips_height) else 0.0

    @property
    def bob_after(self) -> float:
        """The hips' vertical bob once lowered by ``drop`` (scene units)."""
        return float(np.ptp(self.hips_height - self.drop)) if len(self.hips_height) else 0.0


#: The most the hips' bob may grow by lowering them (their height's peak to peak, planted over animated): a drop
#: that changes faster than that allows is made slower (``hips_seconds`` doubled until it is within).
MOST_BOB = 1.25


def _stride(contacts: Sequence[Sequence[Contact]]) -> float:
    """The feet's stride in frames: the median spacing of each foot's contacts' starts (0 without two)."""
    spacings = [b[0] - a[0] for found in contacts for a, b in pairwise(found)]
    return float(np.median(spacings)) if spacings else 0.0


def plant(feet: Sequence[Foot], rules: PlantRules, *, fps: float, lower_hips: bool) -> Planting:
    """Compute the goals of every foot (see the module's notes) given the feet as animated, the rules, the
    frame rate and whether the hips go down to bring pins within reach."""
    if not feet:
        raise ValueError("planting needs at least one foot")
    floor = rules.floor
    if floor is None:
        slowest = [rules.contacts.speed * foot.reach for foot in feet]
        floor = floor_height([foot.ball for foot in feet], fps=fps, slowest=slowest)
    cuts = cut_frames(
        [path for foot in feet for path in (foot.hip, foot.ball)], leg_length=min(f.reach for f in feet), fps=fps
    )
    contacts = [
        split_at(
            foot.contacts
            if foot.contacts is not None
            else find_contacts(foot.ball, fps=fps, leg_length=foot.reach, floor=floor, rules=rules.contacts),
            cuts,
        )
        for foot in feet
    ]
    blend = round(rules.blend_seconds * fps)
    paths = [
        pinned_path(foot.ball, found, blend_frames=blend, pin_at=rules.pin_at, cuts=cuts)
        for foot, found in zip(feet, contacts, strict=True)
    ]
    ball = np.stack([foot.ball for foot in feet], axis=1)  # (F, L, 3)
    hang = ball - np.stack([foot.ankle for foot in feet], axis=1)  # the ball from the ankle, as animated
    hips = np.stack([foot.hip for foot in feet], axis=1)
    weights = np.stack([path.weights for path in paths], axis=1)
    pinned = np.stack([path.goals for path in paths], axis=1)  # (F, L, 3)
    heads = pinned - hang
    reach = np.array([foot.reach for foot in feet])
    margin = rules.soft_reach * reach
    drop = np.zeros(len(ball))
    if lower_hips:
        step = rules.hips_speed * float(reach.mean()) / fps
        span = max(rules.hips_seconds * fps, _stride(contacts)) if rules.hips_seconds > 0 else 0.0
        drop = hips_drop(hips, heads, reach, weights=weights, margin=margin, max_step=step, span_frames=span).drop
        bob = float(np.ptp(hips[:, :, 2].mean(axis=1)))
        while span and np.ptp(hips[:, :, 2].mean(axis=1) - drop) > MOST_BOB * bob and span < 2 * len(drop):
            span *= 2.0  # slower still: a steadier drop keeps the hips' own bob
            drop = hips_drop(hips, heads, reach, weights=weights, margin=margin, max_step=step, span_frames=span).drop
    height = hips[:, :, 2].mean(axis=1)
    hips = lowered(hips, drop)
    out_of_reach = (weights > 0.0) & (np.linalg.norm(heads - hips, axis=-1) > reach)
    # The soft reach fades with the square of the pin's weight: a leg eased short of full reach is bent by about
    # the square root of the soft distance, so it then straightens in step with the blend, not in its last frame.
    eased = eased_heads(hips, heads, reach, margin * weights**2)
    goals = np.where((eased != heads).any(axis=-1, keepdims=True), eased + hang, pinned)  # the pins exactly
    return Planting(contacts, goals, pinned, weights, drop, out_of_reach, floor, height)
