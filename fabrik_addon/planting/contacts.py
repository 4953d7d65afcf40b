"""Compute when a foot is planted given where the ball of the foot goes on each frame: near the floor and
slow, for long enough, one-frame gaps closed.

Thresholds are in leg lengths and seconds (``ContactRules``), so a clip in centimetres and one in metres, at
30 or 120 frames per second, give the same contacts. Positions are world positions, up is +Z (Blender's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..setting_names import plant_named
from ..solver import FloatArray

#: A contact: its first and last frame, both included, as indices into the frames given.
Contact = tuple[int, int]


@dataclass(frozen=True)
class ContactRules:
    """When the ball of a foot counts as planted.

    Attributes
    ----------
    height : float
        Leg lengths (> 0): the ball at most this far above the floor...
    speed : float
        Leg lengths per second (> 0): ... moving horizontally slower than this...
    seconds : float
        ... for at least this long (>= 0; as many frames as it rounds to, at least one).
    gap_frames : int
        Runs of planted frames this many frames apart or less (>= 0) are one contact: a frame of noise does
        not lift the foot.
    """

    height: float = 0.04
    speed: float = 0.4
    seconds: float = 0.1
    gap_frames: int = 1

    def __post_init__(self) -> None:
        for name in ("height", "speed"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and np.isfinite(value) and value > 0):
                raise ValueError(
                    f"{plant_named(f'contact_{name}')} must be a number > 0 (in leg lengths), got {value!r}"
                )
        if not (isinstance(self.seconds, int | float) and np.isfinite(self.seconds) and self.seconds >= 0):
            raise ValueError(f"{plant_named('contact_seconds')} must be a number >= 0, got {self.seconds!r}")
        if isinstance(self.gap_frames, bool) or not isinstance(self.gap_frames, int) or self.gap_frames < 0:
            raise ValueError(f"{plant_named('contact_gap')} must be a whole number >= 0, got {self.gap_frames!r}")


def floor_height(balls: Sequence[npt.ArrayLike], *, fps: float, slowest: Sequence[float]) -> float:
    """Compute the floor's height given where feet's balls go (each (F, 3)) at ``fps``, and for each the speed
    (scene units per second) below which it counts as resting: the 10th percentile of the heights the balls
    rest at, all feet together (or the lowest they go, if they never rest).

    The lowest they rest at, but for a toe dipping through the floor or a frame of noise: on a stylised walk
    (``cmu_131_02_walk_30fps_m.bvh``) the ball dips 5 cm below where it rests while the toes roll.
    """
    heights, resting = [], []
    for ball, limit in zip(balls, slowest, strict=True):
        points = np.asarray(ball, dtype=np.float64)
        heights.append(points[:, 2])
        resting.append(points[horizontal_speeds(points, fps) <= limit, 2])
    rest = np.concatenate(resting)
    return float(np.percentile(rest, 10.0)) if len(rest) else float(np.concatenate(heights).min())


def horizontal_speeds(ball: npt.ArrayLike, fps: float) -> FloatArray:
    """Compute each frame's horizontal speed (F,) given the ball's positions (F, 3) at ``fps``: the mean of its
    moves from the frame before and to the frame after (one of them at the ends), per second."""
    points = np.asarray(ball, dtype=np.float64)
    if len(points) < 2:
        return np.zeros(len(points))
    step = np.linalg.norm(np.diff(points[:, :2], axis=0), axis=1) * fps
    return np.asarray((np.concatenate([step[:1], step]) + np.concatenate([step, step[-1:]])) / 2.0)


def find_contacts(
    ball: npt.ArrayLike, *, fps: float, leg_length: float, floor: float, rules: ContactRules = ContactRules()
) -> list[Contact]:
    """Compute the contacts of one foot given its ball's positions (F, 3), one row a frame at ``fps``, the
    leg's length and the floor's height (scene units, see ``floor_height``).

    Returns
    -------
    list of (first, last)
        Indices into the rows, both included, in order: runs of frames where the ball is within
        ``rules.height`` leg lengths of the floor and slower than ``rules.speed`` leg lengths per second,
        runs at most ``rules.gap_frames`` apart joined, each lasting ``rules.seconds`` or more.
    """
    points = np.asarray(ball, dtype=np.float64)
    low = points[:, 2] - floor <= rules.height * leg_length
    slow = horizontal_speeds(points, fps) <= rules.speed * leg_length
    return runs(low & slow, rules.gap_frames, max(1, round(rules.seconds * fps)))


def runs(flags: NDArray[np.bool_], gap: int, shortest: int) -> list[Contact]:
    """The runs of true ``flags`` as (first, last) indices, runs at most ``gap`` false frames apart joined, then
    only those ``shortest`` frames long or more kept."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], np.asarray(flags, dtype=np.int8), [0]])))
    joined: list[list[int]] = []
    for start, stop in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        if joined and start - joined[-1][1] - 1 <= gap:
            joined[-1][1] = stop - 1
        else:
            joined.append([start, stop - 1])
    return [(first, last) for first, last in joined if last - first + 1 >= shortest]


#: A point of the body moving farther than this in one frame (leg lengths, and leg lengths a second times the
#: frame time, the larger) is a cut in the animation: two takes spliced, a loop starting over. A sprint covers
#: about 11 leg lengths a second.
CUT_JUMP = (0.5, 15.0)


def cut_frames(paths: Sequence[npt.ArrayLike], *, leg_length: float, fps: float) -> list[int]:
    """Compute the frames where the animation cuts given paths of points of the body (each (F, 3): the hip
    joints, the balls), the leg's length and the frame rate: the indices ``i`` where some point jumps farther
    than ``CUT_JUMP`` allows from frame ``i - 1`` to frame ``i``. No contact, blend or pin spans a cut."""
    most = max(CUT_JUMP[0], CUT_JUMP[1] / fps) * leg_length
    jumps = np.zeros(0, dtype=bool)
    for path in paths:
        points = np.asarray(path, dtype=np.float64)
        moved = np.linalg.norm(np.diff(points, axis=0), axis=-1) > most
        jumps = moved if not jumps.size else jumps | moved
    return [int(i) + 1 for i in np.flatnonzero(jumps)]


def split_at(contacts: Sequence[Contact], cuts: Sequence[int]) -> list[Contact]:
    """``contacts`` (first, last) split where a cut (a frame index starting a new take) falls inside one."""
    split: list[Contact] = []
    for first, last in contacts:
        start = first
        for cut in cuts:
            if start < cut <= last:
                split.append((start, cut - 1))
                start = cut
        split.append((start, last))
    return split


def contact_flags(contacts: Sequence[Contact], frames: int) -> NDArray[np.bool_]:
    """Per frame (``frames`` of them), whether it is in one of ``contacts``."""
    flags = np.zeros(frames, dtype=bool)
    for first, last in contacts:
        flags[first : last + 1] = True
    return flags


def skate(ball: npt.ArrayLike, contact: Contact) -> float:
    """How far the ball slides during ``contact``: the largest horizontal distance between its places on any
    two frames of it (scene units)."""
    first, last = contact
    points = np.asarray(ball, dtype=np.float64)[first : last + 1, :2]
    return float(np.linalg.norm(points[:, None] - points[None], axis=-1).max())
