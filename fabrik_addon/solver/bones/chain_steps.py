"""The steps the solver on a chain of bones repeats on every frame: one FABRIK iteration on bones (a forward
and a backward pass that carry each bone's orientation and keep its limits) and one damped-least-squares step.

Each step takes a ``ChainPosed`` (local rotations, Y scales, and what forward kinematics makes of them) and the
goals, and returns the next ``ChainPosed``, its rotations within the limits; ``chain_solve`` decides which step
runs when, from which start, and which result to keep. See ``chain_solve`` for the method and its source.

Poses are stored as rows (``core.quat_rows``): quaternions (m, 4, F), points (m+1, 3, F), frames last. The
passes loop over bones and cost a fixed number of numpy calls per bone, whatever the number of frames; what can
be done for every bone at once (the least-squares step's turns, its clamp) is.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..core import (
    Aims,
    BoneFrames,
    ChainReach,
    Extremes,
    FloatArray,
    JointLimits,
    ReachBounds,
    cap_turns,
    chain_reach,
    cross,
    free_root,
    reach_bounds,
    seek_extremes,
)
from ..core import quat_rows as rows
from ..points import BACK, LEAST_SQUARES, TOWARD, Recorder
from .chain import ChainRest
from .iterate import Posed

#: Damping of the least-squares steps: squared, times the chain's length and the smaller of that length and the
#: miss (``tree_steps`` damps alike).
_DAMPING = 0.1


@dataclass(frozen=True)
class ChainPosed(Posed):
    """Poses of a chain on F frames, as rows: ``Posed`` (local rotations, Y scales, orientations in the
    chain's base frame), and

    Attributes
    ----------
    joints : ndarray, shape (m+1, 3, F)
        The bones' heads, then the last bone's tail.
    """

    joints: FloatArray

    def error(self, goals: FloatArray) -> FloatArray:
        """Distances (F,) from the last joint to ``goals`` (3, F)."""
        miss = self.joints[-1] - goals
        return np.asarray(np.sqrt(np.einsum("if,if->f", miss, miss)), dtype=np.float64)


@dataclass(frozen=True)
class ChainSteps:
    """The step routines for one chain: its rest geometry and limits."""

    rest: ChainRest
    limits: JointLimits

    def pose(self, local: FloatArray, scales: FloatArray) -> ChainPosed:
        """Forward kinematics of local rotations (m, 4, F) and Y scales (m, F)."""
        world = np.empty(local.shape)
        joints = np.zeros((len(local) + 1, 3, local.shape[-1]))
        stretched = bool((scales != 1.0).any())
        for k in range(len(local)):
            world[k] = rows.multiply(self._frame(world, k), local[k])
            joints[k + 1] = joints[k] + self._offset(world[k], k, scales[k], stretched)
        return ChainPosed(local, scales, world, joints)

    def fabrik(self, posed: ChainPosed, goals: FloatArray) -> ChainPosed:
        """One forward and one backward pass on every frame given (goals (3, F))."""
        return self.backward(posed, *self.forward(posed, goals))

    def forward(self, posed: ChainPosed, goals: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The forward pass, from the goals (3, F) toward the root: the joints it places (m+1, 3, F), the tip
        on the goal and the root off its place, and the bones' orientations there (m, 4, F)."""
        bones = len(posed.local)
        stretched = bool((posed.scales != 1.0).any())
        joints, world, scales = posed.joints, posed.world, posed.scales

        # From the target toward the root, each bone aimed from its next joint at its old head.
        placed = np.empty(joints.shape)
        placed[-1] = goals
        turned = np.empty(world.shape)
        for k in range(bones - 1, -1, -1):
            toward = rows.rotate_back(world[k], placed[k + 1] - joints[k])  # in the bone's own frame
            turned[k] = rows.multiply(world[k], self.aims.turn(k, toward))
            if k + 1 < bones and self.bones.limited[k + 1]:
                turned[k] = self.bones.parent_within_child_limits(turned[k], turned[k + 1], k + 1)
            placed[k] = placed[k + 1] - self._offset(turned[k], k, scales[k], stretched)
        return placed, turned

    def backward(self, posed: ChainPosed, placed: FloatArray, turned: FloatArray) -> ChainPosed:
        """The backward pass after ``forward`` (its joints and orientations): from the fixed root head, each
        bone aimed at the joint placed above, then clamped to its limits."""
        bones = len(posed.local)
        stretched = bool((posed.scales != 1.0).any())
        joints, world, scales = posed.joints, posed.world, posed.scales
        local = np.empty(posed.local.shape)
        new_world = np.empty(world.shape)
        new_joints = np.zeros(joints.shape)
        for k in range(bones):
            frame = self._frame(new_world, k)
            wanted = rows.rotate_back(turned[k], placed[k + 1] - new_joints[k])  # in the turned bone's frame
            aimed = rows.multiply(rows.conj_multiply(frame, turned[k]), self.aims.turn(k, wanted))
            local[k] = self.bones.clamps[k](aimed)
            new_world[k] = rows.multiply(frame, local[k])
            new_joints[k + 1] = new_joints[k] + self._offset(new_world[k], k, scales[k], stretched)
        return ChainPosed(local, scales, new_world, new_joints)

    def least_squares(self, posed: ChainPosed, goals: FloatArray) -> ChainPosed:
        """One damped-least-squares step on every bone's rotation, each clamped to its limits after.

        FABRIK aims each bone with the smallest turn, which never rolls a bone about its own axis; a frame that
        needs a roll (a hinge whose plane must turn to the target) stalls there. The tip's Jacobian does see
        those rolls, so a few of these steps finish what FABRIK left."""
        bones, frames = posed.local.shape[0], posed.local.shape[-1]
        joints = posed.joints
        error = goals - joints[-1]
        # d tip / d (turn of bone k about world axis a) = a x arm_k, arm_k = tip - head_k: the Jacobian's block
        # for bone k is -[arm_k]x, so J J^T = sum_k (|arm_k|^2 I - arm_k arm_k^T) and J^T y = arm_k x y.
        arms = joints[-1] - joints[:-1]  # (m, 3, F)
        outer = np.einsum("kif,kjf->fij", arms, arms)
        # Damped by the miss, as the tree's step is: far from the goal a step stays short of the linear model's
        # (which turns a bone too far), near it the damping fades and each step cuts the miss by more than half.
        reach = np.einsum("k,kf->f", self.rest.lengths, posed.scales)
        damping = _DAMPING**2 * reach * np.minimum(reach, np.sqrt(np.einsum("if,if->f", error, error)))
        normal = (np.trace(outer, axis1=1, axis2=2) + damping)[:, None, None] * np.eye(3) - outer
        y = np.linalg.solve(normal, error.T[..., None])[..., 0].T  # (3, F)
        turns = cross(arms, y[None], axis=1)  # (m, 3, F), world axes times angles
        cap_turns(turns)
        # Each turn seen in its bone's rest frame under its posed parent, where the local rotation lives.
        parents = np.concatenate([np.broadcast_to(self.bones.rest_quats[0][:, None], (1, 4, frames)), posed.world[:-1]])
        if bones > 1:
            parents[1:] = np.einsum("kij,kjf->kif", self.bones.right_rest[1:], parents[1:])
        return self.pose(self.bones.turned(posed.local, turns, parents), posed.scales)

    def _frame(self, world: FloatArray, k: int) -> FloatArray:
        """Bone ``k``'s rest frame under its posed parent (4, F) (the root's: its rest rotation)."""
        return self.bones.frame(None if k == 0 else world[k - 1], k)

    def _offset(self, orientation: FloatArray, k: int, scales: FloatArray, stretched: bool) -> FloatArray:
        """From bone ``k``'s head to the next joint (3, F), the bone at ``orientation`` (4, F), scaled along Y."""
        return self.aims.rotated(k, orientation, scales if stretched else None)

    @cached_property
    def bones(self) -> BoneFrames:
        return BoneFrames(self.rest.rest_rotations, self.limits)

    @cached_property
    def reach(self) -> ChainReach:
        """How near to and far from the root the tip can come, and the poses there (``core.reach``)."""
        return chain_reach(self.rest.rest_rotations, self.rest.offsets, self.limits)

    @cached_property
    def bounds(self) -> ReachBounds:
        """Bounds on the tip's distance from the root and its direction that no pose within the limits crosses
        (``core.reach_bounds``)."""
        return reach_bounds(self.rest.rest_rotations, self.rest.offsets, self.limits, self.reach)

    @cached_property
    def extremes(self) -> Extremes:
        """Poses found nearest to the root and farthest from it (``core.seek_extremes``, with the root's limits
        lifted): searched once per chain, where its reach is not known exactly."""
        return seek_extremes(ChainSteps(self.rest, free_root(self.limits)), self.limits)

    def at_extremes(
        self, inside: NDArray[np.bool_], start: FloatArray, toward: FloatArray, back: FloatArray
    ) -> FloatArray:
        """Poses (F, m, 4) at the extreme of the reach nearest the root where ``inside`` (F,), else farthest: the
        reach's shapes (``ChainReach.pose``, along ``toward`` and ``back``, keeping the twists of ``start``) where
        it is known exactly, else the poses ``extremes`` found. Within the limits but the root's."""
        if not self.reach.exact:
            return np.where(inside[:, None, None], self.extremes.near, self.extremes.far)
        quats = np.empty(start.shape)
        for frames, shape in ((inside, self.reach.folded), (~inside, self.reach.straight)):
            if frames.any():
                quats[frames] = self.reach.pose(shape, start[frames], toward[frames], back[frames])
        return quats

    @cached_property
    def aims(self) -> Aims:
        """Each bone's offset to its next joint."""
        return Aims(self.rest.offsets)


#: The steps of the chains solved last, by what their rest geometry and limits hold: the tables a chain's steps
#: multiply by, and its reach, are made once per chain, not once per solve. The live preview solves the same
#: chains, one frame at a time, on every update, and a chain that turns its tip to a goal solves the bones above
#: its tip, whose rest and limits are made anew each time (``tip_rotation.above``).
_KEPT: OrderedDict[tuple[tuple[str, tuple[int, ...], bytes], ...], ChainSteps] = OrderedDict()
#: How many chains' steps are kept.
_CHAINS_KEPT = 64


def chain_steps(rest: ChainRest, limits: JointLimits) -> ChainSteps:
    """The steps of the chain of ``rest`` and ``limits``: the ones made before for a chain that held the same,
    if it is among the last ``_CHAINS_KEPT``, else new ones."""
    arrays = (rest.rest_rotations, rest.offsets, limits.lock, limits.use_limit, limits.minimum, limits.maximum)
    key = tuple((array.dtype.str, array.shape, array.tobytes()) for array in (*arrays, limits.stretch))
    steps = _KEPT.get(key)
    if steps is not None:
        _KEPT.move_to_end(key)
        return steps
    steps = _KEPT[key] = ChainSteps(rest, limits)
    if len(_KEPT) > _CHAINS_KEPT:
        _KEPT.popitem(last=False)
    return steps


@dataclass(frozen=True)
class RecordingSteps:
    """A chain's ``ChainSteps`` that record one frame's joints after every pass of FABRIK (``TOWARD``: the
    forward pass's joints, tip on the target; ``BACK``: the backward pass's, root in place) and every
    least-squares step (``LEAST_SQUARES``), into ``recorder`` (``points.Recorder``)."""

    steps: ChainSteps
    recorder: Recorder

    def pose(self, local: FloatArray, scales: FloatArray) -> ChainPosed:
        return self.steps.pose(local, scales)

    def fabrik(self, posed: ChainPosed, goals: FloatArray) -> ChainPosed:
        placed, turned = self.steps.forward(posed, goals)
        self.recorder.add(TOWARD, placed[:, :, 0])
        result = self.steps.backward(posed, placed, turned)
        self.recorder.add(BACK, result.joints[:, :, 0])
        return result

    def least_squares(self, posed: ChainPosed, goals: FloatArray) -> ChainPosed:
        result = self.steps.least_squares(posed, goals)
        self.recorder.add(LEAST_SQUARES, result.joints[:, :, 0])
        return result
