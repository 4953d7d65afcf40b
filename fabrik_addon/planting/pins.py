"""Compute where the ball of a foot should be on each frame given its animation and its contacts: on one point
through each contact, eased in and out of it over a short blend, its animation everywhere else."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..solver import FloatArray
from .contacts import Contact

#: Where in a contact the ball is pinned: on the frame in its middle, or on its first frame.
PIN_AT = ("middle", "start")


@dataclass(frozen=True)
class PinnedPath:
    """The ball's goals for one foot.

    Attributes
    ----------
    goals : ndarray, shape (F, 3)
        Where the ball should be on each frame.
    weights : ndarray, shape (F,)
        How far each frame is pinned, 0 to 1: 1 through a contact, easing from 0 in its blends, 0 elsewhere
        (where ``goals`` is the animation itself).
    pins : ndarray, shape (C, 3)
        Each contact's pin.
    """

    goals: FloatArray
    weights: FloatArray
    pins: FloatArray


def pinned_path(
    ball: npt.ArrayLike,
    contacts: Sequence[Contact],
    *,
    blend_frames: int,
    pin_at: str = "middle",
    cuts: Sequence[int] = (),
) -> PinnedPath:
    """Compute the ball's goals given its animated positions (F, 3), its contacts (first, last; indices into
    the rows, in order and apart, none spanning a cut) and the longest blend in frames (>= 0); ``cuts`` are
    the frames that start a new take (``contacts.cut_frames``): no blend reaches across one.

    Each contact's pin is the animated ball on its middle frame (``pin_at="middle"``) or its first. Before and
    after a contact the goal eases between the animation and the pin over ``blend_frames`` frames at most (and
    at most half the frames between two contacts, so the blends of neighbours never overlap), with a smooth
    step whose slope is 0 at both ends: the foot arrives without a pop.
    """
    if pin_at not in PIN_AT:
        raise ValueError(f"pin_at must be one of {', '.join(PIN_AT)}, got {pin_at!r}")
    if isinstance(blend_frames, bool) or not isinstance(blend_frames, int) or blend_frames < 0:
        raise ValueError(f"blend_frames must be a whole number >= 0, got {blend_frames!r}")
    animated = np.asarray(ball, dtype=np.float64)
    frames = len(animated)
    weights = np.zeros(frames)
    targets = animated.copy()
    pins = np.empty((len(contacts), 3))
    for c, (first, last) in enumerate(contacts):
        pins[c] = animated[(first + last) // 2 if pin_at == "middle" else first]
        before = first if c == 0 else (first - contacts[c - 1][1] - 1) // 2
        after = frames - 1 - last if c == len(contacts) - 1 else (contacts[c + 1][0] - last - 1) // 2
        before = min([before, *(first - cut for cut in cuts if cut <= first)])
        after = min([after, *(cut - 1 - last for cut in cuts if cut > last)])
        span_in, span_out = min(blend_frames, before), min(blend_frames, after)
        rows = np.arange(first - span_in, last + span_out + 1)
        ramp = np.ones(len(rows))
        ramp[:span_in] = smooth_step(np.arange(1, span_in + 1) / (span_in + 1))
        if span_out:
            ramp[-span_out:] = smooth_step(np.arange(span_out, 0, -1) / (span_out + 1))
        weights[rows] = ramp
        targets[rows] = pins[c]
    goals = np.where(weights[:, None] == 1.0, targets, animated + weights[:, None] * (targets - animated))
    return PinnedPath(goals, weights, pins)


def smooth_step(t: npt.ArrayLike) -> FloatArray:
    """3 t^2 - 2 t^3 for ``t`` in [0, 1]: from 0 to 1 with a slope of 0 at both ends."""
    x = np.clip(np.asarray(t, dtype=np.float64), 0.0, 1.0)
    return np.asarray(x * x * (3.0 - 2.0 * x))
