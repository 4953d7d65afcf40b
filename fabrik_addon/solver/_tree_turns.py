"""Turns of an effector's branch (see ``_tree_bones``) about its first bone's head, as ``_root_turns`` turns a
whole chain about its root: toward the effector's goal and its pole before solving, and about the line from
the branch's first head to its tip after solving, to where the branch's first bone is nearest where it
started. Only the branch's first bone's rotation changes; it is clamped to its limits.

Each branch is seen as a chain (its bones, from its first to its tip) in the frame of its first bone's posed
parent, placed at its head: there ``_root_turns`` does the work. Rotations here are frames first (F, b, 4),
Y scales rows (b, F), points (F, 3) in the tree's base frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._pose_iterate import frames_first, rows_of
from ._root_turns import swivel_nearest, turn_toward
from ._tree_bones import TreeBones
from ._tree_pose_steps import TreePosed, TreePoseSteps
from .limits import JointLimits
from .pose import ChainRest
from .rotations import quat_to_matrix
from .validate import FloatArray


@dataclass(frozen=True)
class BranchTurns:
    """The branch turns of one tree: its layout, limits and steps (for forward kinematics)."""

    steps: TreePoseSteps

    @property
    def bones(self) -> TreeBones:
        return self.steps.bones

    @property
    def limits(self) -> JointLimits:
        return self.steps.limits

    def toward(
        self,
        quats: FloatArray,
        scales: FloatArray,
        goals: FloatArray,
        poles: list[FloatArray | None],
        pole_angles: FloatArray,
        effectors: list[int],
    ) -> FloatArray:
        """The poses with each of ``effectors``' branches turned as ``_root_turns.turn_toward`` turns a chain:
        with a pole, so the plane through its first head, tip and "up" axis (the first bone's X axis turned
        toward Z by the pole angle) becomes the plane through that head, the goal and the pole; without, by
        the smallest turn that points it at the goal. Branches nearer the root turn first (a turn moves every
        branch beyond it).

        Parameters
        ----------
        quats : ndarray, shape (F, b, 4)
        scales : ndarray, shape (b, F)
        goals : ndarray, shape (F, E, 3)
        poles : list of (ndarray, shape (F, 3)) or None
            Per effector.
        pole_angles : ndarray, shape (E,)
            Radians.
        effectors : list of int
            The branches to turn.

        Returns
        -------
        ndarray, shape (F, b, 4)
        """
        result = quats.copy()
        for e in sorted(effectors, key=lambda e: self._depths[e]):
            chain = list(self.bones.branches[e].bones)
            posed = self.steps.pose(rows_of(result), scales)
            base, head = self._frame(posed, chain[0])
            pole = poles[e]
            turned = turn_toward(
                self._rests[e],
                self._limits[e],
                result[:, chain],
                _seen(base, head, frames_first(posed.ends)[:, e]),
                _seen(base, head, goals[:, e]),
                None if pole is None else _seen(base, head, pole),
                float(pole_angles[e]),
            )
            result[:, chain[0]] = turned[:, 0]
        return result

    def swivel(self, quats: FloatArray, scales: FloatArray, reference: FloatArray) -> FloatArray:
        """The poses with each branch that carries no other effector turned about the line from its first head
        to its tip, to where its first bone's rotation is nearest ``reference``'s (F, b, 4) (see
        ``_root_turns.swivel_nearest``): every effector stays where it was."""
        result = quats.copy()
        posed = self.steps.pose(rows_of(quats), scales)
        ends = frames_first(posed.ends)
        for e, branch in enumerate(self.bones.branches):
            if not branch.alone:
                continue
            chain = list(branch.bones)
            base, head = self._frame(posed, chain[0])
            tips = _seen(base, head, ends[:, e])
            turned = swivel_nearest(self._rests[e], self._limits[e], quats[:, chain], tips, reference[:, chain])
            result[:, chain[0]] = turned[:, 0]
        return result

    def _frame(self, posed: TreePosed, bone: int) -> tuple[FloatArray, FloatArray]:
        """The orientation (F, 3, 3) of ``bone``'s posed parent (the base frame's for the root) and ``bone``'s
        head (F, 3): where its branch is seen as a chain."""
        parent = int(self.bones.rest.parents[bone])
        frames = posed.heads.shape[-1]
        if parent < 0:
            return np.broadcast_to(np.eye(3), (frames, 3, 3)), frames_first(posed.heads[bone : bone + 1])[:, 0]
        base = quat_to_matrix(np.ascontiguousarray(posed.world[parent].T))
        return base, frames_first(posed.heads[bone : bone + 1])[:, 0]

    @cached_property
    def _rests(self) -> list[ChainRest]:
        """Each branch as a chain: its bones' rest frames, and the offsets from each head to the next."""
        rest, offsets = self.bones.rest, self.bones.offsets
        chains = []
        for e, branch in enumerate(self.bones.branches):
            chain = list(branch.bones)
            steps = [offsets[self.bones.head_points[k]] for k in chain[1:]] + [offsets[self.bones.tail_points[e]]]
            chains.append(ChainRest(rest.rest_rotations[chain], np.array(steps)))
        return chains

    @cached_property
    def _limits(self) -> list[JointLimits]:
        return [self.limits.take(list(branch.bones)) for branch in self.bones.branches]

    @cached_property
    def _depths(self) -> list[int]:
        """How many bones lie above each branch's first."""
        return [int(self.bones.moves[:, e].sum()) - len(branch.bones) for e, branch in enumerate(self.bones.branches)]


def _seen(base: FloatArray, head: FloatArray, points: FloatArray) -> FloatArray:
    """Points (F, 3) in the frame of orientations ``base`` (F, 3, 3) placed at ``head`` (F, 3)."""
    return np.asarray(np.einsum("fji,fj->fi", base, points - head), dtype=np.float64)
