"""What a solve on bones does besides its steps, the same for a chain (``chain_solve``) and a tree
(``tree_solve``): which attempt runs, from which start, and what is kept.

An attempt (``iterate.attempt``) runs one iteration of FABRIK, then the solver's schedule of least-squares (and
FABRIK) runs on the frames still short. In the first attempt from the start pose, a chain bends the frames its
first least squares leaves short to their goals' distance before the rest of the schedule (``bend_to_reach``).
After it, frames still short get another attempt from a bent pose, then from random poses within the limits
(seeded: a bake gives the same keys every time), each turned toward the goals first; with stretch, rounds of
lengthened bones; last, a swivel about the line from the first head to the tip, to the pose nearest a
reference. ``BoneSolver`` holds that sequence; a chain and a tree fill in how they turn a pose toward its
goals, how far their goals can be, how their bones lengthen and how they swivel. ``PoseSolution`` is what a
chain's solve returns (``chain_solve.solve_pose``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import FloatArray, JointLimits, quat_normalize
from .iterate import CHAIN_SCHEDULE, Best, Schedule, Steps, attempt, go_on, rows_of

#: Rounds of lengthening the bones, each followed by a solve, when stretching toward a target out of reach.
STRETCH_ROUNDS = 4
#: The seed of the random starts (``random_rotations``): a bake gives the same keys every time.
RESTART_SEED = 0
#: Relative rounding of a tip's distance after a turn of the whole chain (a fraction of its reach): a turn that
#: moves the tip by no more is taken as keeping it where it was.
ROUNDING = 1e-12

#: A solver's poles as its hooks take them: a chain's (F, 3) or None, a tree's list of those per effector.
PolesT = TypeVar("PolesT")


@dataclass(frozen=True)
class PoseSolution:
    """The result of ``solve_pose``, per frame.

    Attributes
    ----------
    rotations : ndarray, shape (F, m, 4)
        Each bone's local rotation quaternion (w, x, y, z), within its limits; signs continuous from frame to
        frame, the first frame's on the side of the input rotation.
    scales : ndarray, shape (F, m)
        Each bone's scale along its own Y axis (1 unless stretching).
    joints : ndarray, shape (F, m+1, 3)
        The bones' heads, then the last bone's tail, in the chain's base frame.
    iterations : ndarray of int, shape (F,)
    error : ndarray, shape (F,)
        Distance from the last joint to the target.
    reached : ndarray of bool, shape (F,)
        ``error <= tolerance``.
    history : ndarray, shape (steps, m+1, 3), or None
        With ``history=True``, the one frame's joints after every step (see ``chain_solve``), else None.
    history_steps : tuple of str
        The name of each step of ``history``; empty without history.
    """

    rotations: FloatArray
    scales: FloatArray
    joints: FloatArray
    iterations: NDArray[np.int64]
    error: FloatArray
    reached: NDArray[np.bool_]
    history: FloatArray | None = None
    history_steps: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoneSolver(Generic[PolesT]):
    """The attempts of one solve on bones, for a chain or a tree (the subclasses), on frames first goals: a
    chain's (F, 3), a tree's (F, E, 3).

    Attributes
    ----------
    limits : JointLimits
    tolerance : float
    max_iterations : int
        Per run of one step.
    """

    limits: JointLimits
    tolerance: float
    max_iterations: int

    #: Attempts from random poses within the limits, after the start pose and the bent one.
    restarts = 0
    #: What an attempt runs after its first FABRIK iteration (see ``iterate.attempt``).
    schedule: ClassVar[Schedule] = CHAIN_SCHEDULE

    @property
    def steps(self) -> Steps[Any]:
        raise NotImplementedError

    @property
    def reach(self) -> float:
        """The farthest a goal can be from the root (unstretched): the scale of rounding."""
        raise NotImplementedError

    def within_reach(self, goals: FloatArray) -> NDArray[np.bool_]:
        """Per frame, whether every goal lies within what the bones can reach (F,)."""
        raise NotImplementedError

    def turned(self, poses: FloatArray, scales: FloatArray, goals: FloatArray, poles: PolesT) -> FloatArray:
        """Start poses (F, m, 4) turned toward their ``goals`` (to their poles, with them) before an attempt, the
        bones at Y ``scales`` (m, F)."""
        raise NotImplementedError

    def lengthened(self, best: Best, goals: FloatArray, short: NDArray[np.intp]) -> FloatArray:
        """The Y scales (m, S) of the frames ``short``, grown toward their goals for a stretch round."""
        raise NotImplementedError

    def swiveled(self, best: Best, reference: FloatArray) -> FloatArray:
        """The best poses turned about the line from the first head to the tip, to where the first bone is
        nearest ``reference``'s (F, m, 4): rows (m, 4, F)."""
        raise NotImplementedError

    def poles_of(self, poles: PolesT, rows: NDArray[np.intp]) -> PolesT:
        """The poles of the frames ``rows``."""
        raise NotImplementedError

    def bend_to_reach(self, best: Best, first: FloatArray, goals: FloatArray, poles: PolesT) -> None:
        """Bend the frames of ``best`` still short from ``first``'s poses (F, m, 4) to where their tips lie as far
        from the root as the goals, and keep those that come closer (a chain's; a tree has no such step)."""

    def search(self, first: FloatArray, goals: FloatArray, poles: PolesT, stretch: bool, bend: bool = True) -> Best:
        """Every attempt but the swivel, from the start poses ``first`` (F, m, 4) (turned to the poles already):
        each frame's best pose. The first attempt's first stage of its schedule (least squares while it gains
        quickly), then ``bend_to_reach`` on the frames still short (unless they were bent already: not
        ``bend``), then the rest of its schedule on those still short."""
        start = Best.start(first)
        best = attempt(self.steps, start, goals, self.stopping, self.schedule[:1])
        if bend:
            self.bend_to_reach(best, first, goals, poles)
        go_on(self.steps, start, best, goals, self.stopping, self.schedule[1:])
        self.retry_bent(best, goals, poles)
        for draw in range(self.restarts):
            self.retry_random(best, goals, poles, draw)
        if stretch and self.limits.stretch.any():
            self.stretch(best, goals)
        return best

    @property
    def stopping(self) -> tuple[float, int]:
        """The tolerance and the most iterations of a run of one step."""
        return self.tolerance, self.max_iterations

    def solve(self, start: Best, goals: FloatArray) -> Best:
        """``attempt`` with these steps and schedule, from ``start``'s poses toward ``goals``."""
        return attempt(self.steps, start, goals, self.stopping, self.schedule)

    def retry_bent(self, best: Best, goals: FloatArray, poles: PolesT) -> None:
        """Solve the frames that fell short again, from a bent pose turned toward the goal.

        FABRIK keeps the way a joint bends: from a straight knee whose range is 0 to 150 degrees, a target
        that needs the knee bent would have it bend backwards, which its limit forbids, so it stays straight
        and the chain gets stuck; and it never rolls a bone, so a hinge whose plane misses the goal stays
        so. Bent halfway into its range, a joint bends the allowed way; turned toward the goal (to the pole,
        with one), the chain bends in a plane through it.
        """
        short = np.flatnonzero(best.error > self.tolerance)
        if short.size == 0:
            return
        bones = best.quats.shape[0]
        self.retry(best, goals, poles, short, np.broadcast_to(self.limits.bent(), (short.size, bones, 4)))

    def retry_random(self, best: Best, goals: FloatArray, poles: PolesT, draw: int) -> None:
        """Solve the frames still short of goals within reach again, from random poses within the limits turned
        toward the goals: the ``draw``-th of each frame's own (``random_rotations``).

        Where the limits leave few ways to a target (three hinges for the tip's three coordinates, cones that
        only just allow it), FABRIK from the start pose and from the bent one can end where no small turn
        comes closer; from elsewhere it often finds the way. A target beyond reach gets no restart: no pose
        reaches it.
        """
        short = np.flatnonzero((best.error > self.tolerance) & self.within_reach(goals))
        if short.size:
            poses = self.limits.clamp(random_rotations(goals[short], draw, best.quats.shape[0]))
            self.retry(best, goals, poles, short, poses)

    def retry(self, best: Best, goals: FloatArray, poles: PolesT, rows: NDArray[np.intp], poses: npt.ArrayLike) -> None:
        """Solve the frames ``rows`` again from ``poses`` (len(rows), m, 4) turned toward their goals (to the
        poles, with them), keeping what comes closer."""
        if rows.size == 0:
            return
        scales = best.scales[:, rows]
        turned = self.turned(np.asarray(poses), scales, goals[rows], self.poles_of(poles, rows))
        start = Best(rows_of(turned), scales, np.zeros(rows.size, dtype=np.int64), best.error[rows])
        best.keep_better(rows, self.solve(start, goals[rows]))

    def stretch(self, best: Best, goals: FloatArray) -> None:
        """Lengthen the bones of frames that fell short (``lengthened``) and solve those again, for up to
        ``STRETCH_ROUNDS`` rounds."""
        for _ in range(STRETCH_ROUNDS):
            short = np.flatnonzero(best.error > self.tolerance)
            if short.size == 0:
                break
            grown = self.lengthened(best, goals, short)
            start = Best(best.quats[..., short], grown, np.zeros(short.size, dtype=np.int64), best.error[short])
            best.keep_better(short, self.solve(start, goals[short]))

    def swivel_to(self, best: Best, reference: FloatArray, goals: FloatArray) -> Any:
        """Turn each frame's best pose about the line from its first head to its tip, to where its first bone is
        nearest ``reference``'s (F, m, 4) (``swiveled``). A frame keeps the turned pose unless that moves it
        farther from its goals (beyond the tolerance, and beyond rounding: out of reach, every turn misses by
        the same distance), as the first bone's limits can make it. Returns the poses kept, as the steps pose
        them (``Steps.pose``)."""
        turned = self.swiveled(best, reference)
        posed = self.steps.pose(turned, best.scales)
        error = posed.error(np.ascontiguousarray(np.moveaxis(goals, 0, -1)))
        rounding = ROUNDING * self.reach * best.scales.max(axis=0)
        keep = np.flatnonzero(error <= np.maximum(best.error, self.tolerance) + rounding)
        best.quats[..., keep], best.error[keep] = turned[..., keep], error[keep]
        return posed if keep.size == len(error) else self.steps.pose(best.quats, best.scales)


def random_rotations(goals: FloatArray, draw: int, bones: int) -> FloatArray:
    """Random rotations (S, m, 4), uniform over all rotations, drawn for each frame from its goals (S, ...) and
    ``draw`` alone (seeded by ``RESTART_SEED``): a frame restarts from the same poses whichever frames are solved
    beside it (one in a live preview, those a bake leaves short), and a bake gives the same keys every time.

    Each frame's goals' bits and ``draw`` make its key; splitmix64 (Steele, Lea & Flood, 2014) of the key plus
    a counter gives uniform 53-bit fractions, and Box and Muller's transform normal ones, four a rotation."""
    keys = _mixed(np.full(len(goals), draw, dtype=np.uint64) + _GOLDEN) ^ np.uint64(RESTART_SEED)
    words = np.ascontiguousarray(goals + 0.0, dtype=np.float64).reshape(len(goals), int(np.prod(goals.shape[1:])))
    for word in words.view(np.uint64).T:
        keys = _mixed(keys ^ word)
    counts = np.arange(1, 4 * bones + 1, dtype=np.uint64) * _GOLDEN
    fractions = ((_mixed(keys[:, None] + counts) >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    low, high = fractions[:, ::2], fractions[:, 1::2]
    radius = np.sqrt(-2.0 * np.log(low))
    normal = np.concatenate([radius * np.cos(2.0 * np.pi * high), radius * np.sin(2.0 * np.pi * high)], axis=1)
    return quat_normalize(normal.reshape(len(goals), bones, 4))


#: splitmix64's increment (2^64 over the golden ratio) and its two multipliers.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _mixed(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """splitmix64's finaliser: 64-bit words whose bits each depend on every bit of ``z`` (wrapping products)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX[0]
    z = (z ^ (z >> np.uint64(27))) * _MIX[1]
    return np.asarray(z ^ (z >> np.uint64(31)), dtype=np.uint64)


def as_rotations(rotations: npt.ArrayLike, frames: int, bones: int) -> FloatArray:
    """Start rotations, one set per frame (F, m, 4), unit length, from (m, 4), (1, m, 4) or (F, m, 4).

    Raises
    ------
    ValueError
        For another shape, NaN or infinity, or a zero quaternion.
    """
    quats = np.asarray(rotations, dtype=np.float64)
    if quats.shape not in {(bones, 4), (1, bones, 4), (frames, bones, 4)}:
        raise ValueError(
            f"rotations must have shape ({bones}, 4), (1, {bones}, 4) or ({frames}, {bones}, 4), got {quats.shape}"
        )
    if not np.isfinite(quats).all():
        raise ValueError("rotations contain NaN or infinity")
    size = np.linalg.norm(quats, axis=-1, keepdims=True)
    if (size < 1e-6).any():
        raise ValueError("rotations contain a zero quaternion")
    return np.broadcast_to(quats / size, (frames, bones, 4)).copy()


def as_limits(limits: JointLimits | None, bones: int, whose: str) -> JointLimits:
    """The limits given for ``bones`` bones, or none (``JointLimits.free``); ``whose`` names the bones' owner
    ("chain", "tree") in the error.

    Raises
    ------
    ValueError
        For limits of another number of bones.
    """
    limits = JointLimits.free(bones) if limits is None else limits
    if limits.bones != bones:
        raise ValueError(f"limits are for {limits.bones} bones, the {whose} has {bones}")
    return limits
