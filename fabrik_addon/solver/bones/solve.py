"""One entry point for a chain of bones: the points solver where nothing but the target matters, the solver on
bones' rotations where limits, a pole or stretch do, and the tip's goal orientation on top of either.

``solve_frames`` moves points and leaves each bone's twist alone (``chain.local_rotations``); ``solve_pose``
turns bones within their limits. ``solve_bones`` picks the one the chain needs, so the Blender layer (the
bake and the live preview) asks one question: these bones, these inputs, where do they go.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_TOLERANCE,
    FloatArray,
    JointLimits,
    non_negative_float,
    soften_reach,
)
from ..points import solve_frames
from .chain import ChainRest, forward_kinematics, local_rotations
from .chain_solve import solve_pose
from .tip_rotation import above, blend, head_goals, tip_rotations


@dataclass(frozen=True)
class BonesSolution:
    """The result of ``solve_bones``, per frame.

    Attributes
    ----------
    rotations : ndarray, shape (F, m, 4)
        Each bone's local rotation (w, x, y, z).
    scales : ndarray, shape (F, m), or None
        Each bone's Y scale, when stretching.
    iterations : ndarray of int, shape (F,)
    error : ndarray, shape (F,)
        Distance from the tip bone's tail to the target, as the solver measured it (on its points, where
        points are solved: bones' rest frames read from float32 data put the rotated chain within a few
        1e-8 of them).
    """

    rotations: FloatArray
    scales: FloatArray | None
    iterations: NDArray[np.int64]
    error: FloatArray


def needs_pose_solve(limits: JointLimits, poles: object, stretch: bool) -> bool:
    """Whether a chain must be solved on its bones' rotations: it has limits, a pole, or stretch that some bone
    takes a share of."""
    return limits.any or poles is not None or (stretch and bool(limits.stretch.any()))


def solve_bones(
    rest: ChainRest,
    rotations: npt.ArrayLike,
    targets: FloatArray,
    *,
    limits: JointLimits,
    poles: FloatArray | None = None,
    pole_angle: float = 0.0,
    stretch: bool = False,
    orientations: FloatArray | None = None,
    orientation_weight: float = 1.0,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    method: str = "fabrik",
    warm_start: bool = True,
    soft_reach: float = 0.0,
) -> BonesSolution:
    """Turn a chain's bones so the tip bone's tail reaches ``targets`` (and the tip bone turns to
    ``orientations``).

    Parameters
    ----------
    rest : ChainRest
    rotations : array-like, shape (m, 4), (1, m, 4) or (F, m, 4)
        The bones' local rotations to start from: one pose for every frame, or each frame's own pose (an
        animated chain's), every frame then solved from its own as Blender's IK does. Each bone keeps its
        twist where only points are solved.
    targets : ndarray, shape (F, 3)
    limits : JointLimits
    poles, pole_angle, stretch
        As for ``solve_pose``.
    orientations : ndarray, shape (F, 3, 3), optional
        A goal orientation for the tip bone on each frame (see ``tip_rotation``).
    orientation_weight : float
        How far the tip turns toward ``orientations`` from where it would be without them (0 to 1).
    tolerance, max_iterations, method, warm_start
        As for ``solve_frames`` (``method`` "ccd" only where points are solved; ``warm_start`` for one start
        pose only).
    soft_reach : float
        Scene units (>= 0): a target within this distance of the chain's full reach, or beyond it, is eased
        in (``core.soften_reach``) so the chain straightens gradually rather than snapping straight; 0 (the
        default) is off, and so is stretching. ``error`` is still measured to ``targets``.

    Returns
    -------
    BonesSolution
    """
    start = np.asarray(rotations, dtype=np.float64).reshape(-1, len(rest.offsets), 4)  # (F or 1, m, 4)
    soft = 0.0 if stretch else non_negative_float(soft_reach, "soft_reach")
    solve = _Solve(poles, pole_angle, stretch, tolerance, max_iterations, method, warm_start, soft)
    if orientations is None:
        return solve(rest, limits, start, targets)
    return solve.oriented(rest, limits, start, targets, orientations, orientation_weight)


@dataclass(frozen=True)
class _Solve:
    """The settings every solve of one chain shares; called with a chain (the whole, or the bones above its
    tip) and its start rotations and targets."""

    poles: FloatArray | None
    pole_angle: float
    stretch: bool
    tolerance: float
    max_iterations: int
    method: str
    warm_start: bool
    soft_reach: float

    def __call__(self, rest: ChainRest, limits: JointLimits, start: FloatArray, targets: FloatArray) -> BonesSolution:
        if self.soft_reach == 0.0:
            return self.toward(rest, limits, start, targets)
        eased = soften_reach(targets, float(rest.lengths.sum()), self.soft_reach)
        solved = self.toward(rest, limits, start, eased)
        tips = forward_kinematics(rest, solved.rotations, solved.scales)[0][:, -1]
        error = np.asarray(np.linalg.norm(tips - targets, axis=-1), dtype=np.float64)
        return BonesSolution(solved.rotations, solved.scales, solved.iterations, error)

    def toward(self, rest: ChainRest, limits: JointLimits, start: FloatArray, targets: FloatArray) -> BonesSolution:
        """The chain solved toward ``targets`` as they are."""
        if needs_pose_solve(limits, self.poles, self.stretch):
            if self.method != "fabrik":
                raise ValueError(f"method {self.method!r} does not support joint limits, a pole or stretch")
            solution = solve_pose(
                rest,
                start,
                targets,
                limits=limits,
                poles=self.poles,
                pole_angle=self.pole_angle,
                stretch=self.stretch,
                tolerance=self.tolerance,
                max_iterations=self.max_iterations,
            )
            scales = solution.scales if self.stretch else None
            return BonesSolution(solution.rotations, scales, solution.iterations, solution.error)
        # Each frame from its own pose where there is one per frame (or one frame), else the one pose (warm
        # starting, if asked). A bone whose offset is zero adds a joint on top of the one before: left out of the
        # points.
        joints = forward_kinematics(rest, start)[0]
        kept = np.concatenate([[True], rest.lengths > 0])
        points = solve_frames(
            joints[0, kept] if len(start) == 1 < len(targets) else joints[:, kept],
            targets,
            tolerance=self.tolerance,
            max_iterations=self.max_iterations,
            method=self.method,
            warm_start=self.warm_start,
        )
        solved = points.joints[:, np.cumsum(kept) - 1]  # every joint, those left out on the one before
        return BonesSolution(local_rotations(rest, solved, start), None, points.iterations, points.error)

    def oriented(
        self,
        rest: ChainRest,
        limits: JointLimits,
        start: FloatArray,
        targets: FloatArray,
        orientations: FloatArray,
        weight: float,
    ) -> BonesSolution:
        """The chain above the tip solved toward where the tip bone's head must be, then the tip turned."""
        frames = len(targets)
        spent = np.zeros(frames, dtype=np.int64)
        if weight < 1.0:  # the goal is part of the way from where the tip turns on its own
            free = self(rest, limits, start, targets)
            turned = forward_kinematics(rest, free.rotations, free.scales)[1][:, -1]
            orientations, spent = blend(turned, orientations, weight), free.iterations
        heads = head_goals(rest, orientations, targets)
        if len(rest.offsets) == 1:
            quats, scales, iterations = np.empty((frames, 0, 4)), None, np.zeros(frames, dtype=np.int64)
            parents = np.broadcast_to(np.eye(3), (frames, 3, 3))
        else:
            rest_above, limits_above = above(rest, limits)
            solved = self(rest_above, limits_above, start[:, :-1], heads)
            quats, scales, iterations = solved.rotations, solved.scales, solved.iterations
            parents = forward_kinematics(rest_above, quats, scales)[1][:, -1]
        tip = tip_rotations(rest, limits, parents, orientations)
        quats = np.concatenate([quats, tip[:, None]], axis=1)
        if scales is not None:
            scales = np.concatenate([scales, np.ones((frames, 1))], axis=1)
        joints, _ = forward_kinematics(rest, quats, scales)
        error = np.asarray(np.linalg.norm(joints[:, -1] - targets, axis=-1), dtype=np.float64)
        return BonesSolution(quats, scales, spent + iterations, error)
