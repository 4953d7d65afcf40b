"""The steps the solver on a tree of bones repeats on every frame: one FABRIK iteration on a tree of bones (the
paper's two stages, carrying each bone's orientation and keeping its limits) and one damped-least-squares step
on every bone at once. ``chain_steps`` does the same for a chain, and the two share their per-bone routines
(``core.bone_frames``); ``tree_solve`` decides which step runs when.

The forward pass (stage 1, the tips onto their targets) runs from the bones farthest out to the root. Each bone's
carried points (see ``tree_layout``) are pulled to where what hangs from them wants them: a point's wish is the
weighted centroid of the wishes of the children hanging there for their heads and, at a tip, of the target. A bone
with one point (a link of a chain, or a fork: the paper's sub-base) is aimed from that wish back at its old head,
as FABRIK does; if the point is one child's alone and that child would then turn outside its limits, the bone is
turned to where the child's nearest allowed rotation puts it, as on a chain. A bone carrying several points (a
palm with disconnected finger roots) is fitted to their wishes as a rigid body, least squares, its head lightly
held where it was (the rule for rigid bodies of ``points.tree_passes``).

The backward pass (stage 2, the root put back) runs from the root's fixed head out: each bone hangs where its
posed parent puts it, turns to aim its points at where stage 1 left them (the smallest turn for one point, the
best rigid turn about its head for several) and is clamped to its limits before its children are placed, so
limits at a sub-base apply to every branch leaving it, each by its own first bone's limits. The pose an iteration ends
with is built from clamped local rotations only: it never breaks a limit.

Poses are rows (``core.quat_rows``): quaternions (b, 4, F), points (b, 3, F), goals (E, 3, F), frames last.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..core import Aims, BoneFrames, FloatArray, JointLimits, best_turn, cap_turns, quat_rotate
from ..core import quat_rows as rows
from ..points import HEAD_WEIGHT, weighted_rms
from .iterate import Posed
from .tree_layout import TreeBones

#: Damping of the least-squares steps: its square is this squared times the reach (the longest path from the
#: root to an effector) times the frame's root-mean-square miss, capped at the reach. Near the goal the steps
#: are then nearly Gauss-Newton's and converge fast where a fixed damping of a tenth of the reach (the chain's)
#: crawls: on a hand it damps the fingers, a tenth of the arm's length, to a third of their step or less; far
#: from the goal, or where it cannot be reached, the steps are as damped as the chain's.
_DAMPING = 0.1


@dataclass(frozen=True)
class Misses:
    """How far a tree's effectors are from their goals, and the one number per frame the solver keeps the
    best pose by: the weighted root-mean-square of the misses, plus ``tolerance`` while any effector is out
    of it. So the number is within the tolerance exactly when every effector is; a pose with every effector
    within it beats any without; and among poses without, the smaller weighted miss wins (the compromise
    ``weights`` ask for when the targets conflict)."""

    weights: FloatArray
    tolerance: float

    def errors(self, ends: FloatArray, goals: FloatArray) -> FloatArray:
        """Distances (E, F) from the effectors ``ends`` (E, 3, F) to ``goals`` (E, 3, F)."""
        miss = ends - goals
        return np.asarray(np.sqrt(np.einsum("eif,eif->ef", miss, miss)), dtype=np.float64)

    def score(self, errors: FloatArray) -> FloatArray:
        """The number per frame (F,) for errors (E, F)."""
        rms = weighted_rms(errors, self.weights)
        return np.asarray(rms + self.tolerance * (errors > self.tolerance).any(axis=0), dtype=np.float64)


@dataclass(frozen=True)
class TreePosed(Posed):
    """Poses of a tree on F frames, as rows: ``Posed`` (local rotations (b, 4, F), Y scales (b, F),
    orientations in the tree's base frame (b, 4, F)), and

    Attributes
    ----------
    heads : ndarray, shape (b, 3, F)
    ends : ndarray, shape (E, 3, F)
        The effectors.
    misses : Misses
    """

    heads: FloatArray
    ends: FloatArray
    misses: Misses

    def error(self, goals: FloatArray) -> FloatArray:
        """``Misses.score`` per frame (F,) against ``goals`` (E, 3, F)."""
        return self.misses.score(self.misses.errors(self.ends, goals))


@dataclass(frozen=True)
class TreeSteps:
    """The step routines for one tree: its bones and effectors, its limits, and the tolerance."""

    bones: TreeBones
    limits: JointLimits
    tolerance: float

    def pose(self, local: FloatArray, scales: FloatArray) -> TreePosed:
        """Forward kinematics of local rotations (b, 4, F) and Y scales (b, F)."""
        parents = self.bones.rest.parents
        world = np.empty(local.shape)
        heads = np.zeros((len(local), 3, local.shape[-1]))
        stretched = bool((scales != 1.0).any())
        for k in range(len(local)):
            parent = int(parents[k])
            if parent >= 0:
                heads[k] = heads[parent] + self._carried(
                    world[parent], self.bones.head_points[k], scales[parent], stretched
                )
            world[k] = rows.multiply(self.frames.frame(None if parent < 0 else world[parent], k), local[k])
        return TreePosed(local, scales, world, heads, self._ends(world, heads, scales, stretched), self.misses)

    def fabrik(self, posed: TreePosed, goals: FloatArray) -> TreePosed:
        """One forward and one backward pass on every frame given (goals (E, 3, F))."""
        return self._backward(posed, *self._forward(posed, goals))

    def _forward(self, posed: TreePosed, goals: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Stage 1, from the bones farthest out to the root, each bone's points pulled to what hangs from them:
        each bone's orientation (b, 4, F) and where its points were left (P, 3, F)."""
        bones, points = self.bones, self.bones.points
        stretched = bool((posed.scales != 1.0).any())
        world, heads, scales = posed.world, posed.heads, posed.scales
        placed_heads = np.empty(heads.shape)
        placed = np.empty((len(points), *heads.shape[1:]))
        turned = np.empty(world.shape)
        for k in range(len(world) - 1, -1, -1):
            carried = bones.carried[k]
            wishes = [
                self._wish(points[p].shares, points[p].effector, points[p].target_share, placed_heads, goals)
                for p in carried
            ]
            if len(carried) == 1:
                p, wish = carried[0], wishes[0]
                toward = rows.rotate_back(world[k], wish - heads[k])  # in the bone's own frame
                turned[k] = rows.multiply(world[k], self.aims.turn(p, toward))
                child = points[p].children[0] if len(points[p].shares) == 1 and points[p].effector < 0 else -1
                if child >= 0 and self.frames.limited[child]:
                    turned[k] = self.frames.parent_within_child_limits(turned[k], turned[child], child)
                placed[p] = wish
                placed_heads[k] = wish - self._carried(turned[k], p, scales[k], stretched)
                continue
            now = np.stack([heads[k], *(heads[k] + self._carried(world[k], p, scales[k], stretched) for p in carried)])
            aims = np.stack([heads[k], *wishes])
            weights = np.array([HEAD_WEIGHT * self._weights[k].sum(), *self._weights[k]])
            share = weights[:, None, None] / weights.sum()
            centre, goal_centre = (share * now).sum(axis=0), (share * aims).sum(axis=0)
            turn = best_turn(now - centre, aims - goal_centre, weights)
            turned[k] = rows.multiply(turn, world[k])
            placed_heads[k] = goal_centre + rows.rotate(turn, heads[k] - centre)
            for p in carried:
                placed[p] = placed_heads[k] + self._carried(turned[k], p, scales[k], stretched)
        return turned, placed

    def _backward(self, posed: TreePosed, turned: FloatArray, placed: FloatArray) -> TreePosed:
        """Stage 2, from the root's fixed head out, each bone turned from ``turned`` to aim at its points
        ``placed``, then clamped."""
        bones, scales = self.bones, posed.scales
        stretched = bool((scales != 1.0).any())
        world, heads = posed.world, posed.heads
        local = np.empty(posed.local.shape)
        new_world = np.empty(world.shape)
        new_heads = np.zeros(heads.shape)
        for k in range(len(world)):
            parent = int(bones.rest.parents[k])
            if parent >= 0:
                new_heads[k] = new_heads[parent] + self._carried(
                    new_world[parent], bones.head_points[k], scales[parent], stretched
                )
            frame = self.frames.frame(None if parent < 0 else new_world[parent], k)
            carried = bones.carried[k]
            if len(carried) == 1:
                wanted = rows.rotate_back(turned[k], placed[carried[0]] - new_heads[k])  # in the turned frame
                aimed = rows.multiply(rows.conj_multiply(frame, turned[k]), self.aims.turn(carried[0], wanted))
            else:
                offsets = np.stack([self._carried(turned[k], p, scales[k], stretched) for p in carried])
                turn = best_turn(offsets, placed[list(carried)] - new_heads[k], self._weights[k])
                aimed = rows.conj_multiply(frame, rows.multiply(turn, turned[k]))
            local[k] = self.frames.clamps[k](aimed)
            new_world[k] = rows.multiply(frame, local[k])
        ends = self._ends(new_world, new_heads, scales, stretched)
        return TreePosed(local, scales, new_world, new_heads, ends, self.misses)

    def least_squares(self, posed: TreePosed, goals: FloatArray) -> TreePosed:
        """One damped-least-squares step on every bone's rotation, each clamped to its limits after: the
        weighted misses of every effector at once (see ``chain_steps.ChainSteps.least_squares``).

        Each bone turns about three axes (``_axes``), less the ones its limits lock. Turning bone k about the
        world axis u moves each effector e it carries by u x arm_ke (arm_ke from its head to the effector):
        that is the Jacobian's column, J (3E, 3b). The step is J^T (J J^T + damping^2 W^-1)^-1 miss, W the
        effectors' weights over their mean: the damped minimum of sum_e w_e |miss_e - J_e step|^2, so a
        heavier effector's miss counts for more. A locked axis left in (as the chain's step leaves it) would
        take its share of the step, which the clamp then throws away: near a goal that hinges must reach,
        the step falls short time after time. A swing on the edge of its ellipse (X and Z limited) that the
        misses pull outward (J^T miss, the way down) slides along the edge instead (``_Slide``)."""
        frames, effectors, count = posed.local.shape[-1], len(self.bones.tips), len(posed.local)
        parents = np.empty(posed.world.shape)
        parents[0] = np.array([1.0, 0.0, 0.0, 0.0])[:, None]
        parents[1:] = posed.world[self.bones.rest.parents[1:]]
        under = np.einsum("kij,kjf->kif", self.frames.right_rest, parents)  # rest frames under posed parents
        axes = self._axes(under, posed.world)  # (b, 3, 3, F): axis c of bone k, in world components
        arms = (posed.ends[None] - posed.heads[:, None]) * self._moves  # (b, E, 3, F), 0 where k moves no e
        columns = np.cross(axes[:, None], arms[:, :, None], axis=3)  # (b, E, c, i, F)
        jacobian = np.ascontiguousarray(columns.transpose(4, 1, 3, 0, 2)).reshape(frames, 3 * effectors, 3 * count)
        miss = (goals - posed.ends).transpose(2, 0, 1).reshape(frames, 3 * effectors)
        reach = self._reach * posed.scales.max(axis=0)
        damping = _DAMPING**2 * reach * np.minimum(reach, np.sqrt(np.einsum("fi,fi->f", miss, miss) / effectors))
        damping = damping[:, None] * np.repeat(self._inverse_weights, 3)  # (F, 3E)
        slide = _Slide.none(frames, count)
        if self.frames.limited.any():
            edge, normal = self.limits.swing_edges(np.ascontiguousarray(posed.local.transpose(2, 0, 1)))
            downhill = self._by_bone(np.einsum("fri,fr->fi", jacobian, miss))[:, ::2]
            slide = _Slide(edge & (np.einsum("fkc,kcf->fk", normal, downhill) > 0), normal)
            slide.turn_columns(jacobian)
        angles = slide.angles(_solve(jacobian, miss, damping))
        local, cut = self._turned(posed.local, axes, angles, under)
        if self.frames.limited.any():
            blocked = self._blocked(axes, angles, cut, under)
            if blocked.any():
                angles = slide.angles(_solve(np.where(blocked[:, None], 0.0, jacobian), miss, damping))
                local = self._turned(posed.local, axes, angles, under)[0]
        return self.pose(local, posed.scales)

    def _turned(
        self, local: FloatArray, axes: FloatArray, angles: FloatArray, under: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """``BoneFrames.turned_and_cut`` of bones turned by ``angles`` (F, 3b) about their ``axes``, each
        bone's turn capped (``core.cap_turns``)."""
        turns = np.einsum("kcif,kcf->kif", axes, self._by_bone(angles))  # (b, 3, F), world axes times angles
        cap_turns(turns)
        return self.frames.turned_and_cut(local, turns, under)

    def _blocked(self, axes: FloatArray, angles: FloatArray, cut: FloatArray, under: FloatArray) -> NDArray[np.bool_]:
        """Per frame, the bones' axes (F, 3b) along which the clamp took away more than half of the step: a
        limit stops them. Solved again without them, the step goes where the limits let it."""
        sign = np.where(cut[..., :1] < 0, -2.0, 2.0)  # the cut's turn vector, small angles: 2 v
        undone = quat_rotate(np.ascontiguousarray(under.transpose(0, 2, 1)), sign * cut[..., 1:])  # (b, F, 3)
        along = np.einsum("kcif,kfi->kcf", axes, undone)  # (b, c, F)
        step = self._by_bone(angles)
        flat = along * step < -0.5 * step * step
        return np.asarray(flat.transpose(2, 0, 1).reshape(len(angles), -1))

    def _by_bone(self, angles: FloatArray) -> FloatArray:
        """Angles (F, 3b) as (b, 3, F)."""
        return np.ascontiguousarray(angles.reshape(len(angles), -1, 3).transpose(1, 2, 0))

    def _axes(self, under: FloatArray, world: FloatArray) -> FloatArray:
        """The axes each bone turns about in a least-squares step, in world components (b, 3, 3, F), axis
        second: the world's own for a bone with no limit; else those its limits are about, its rest frame's X
        and Z under its posed parent (the swing's axes) and its own posed Y (the twist's), each locked one
        zero."""
        frames = under.shape[-1]
        axes = np.broadcast_to(np.eye(3)[None, :, :, None], (len(under), 3, 3, frames)).copy()
        locked = self.frames.limited
        if locked.any():
            swing = rows.matrices(np.ascontiguousarray(under[locked].transpose(1, 0, 2)))  # (3, 3, n * F)
            twist = rows.matrices(np.ascontiguousarray(world[locked].transpose(1, 0, 2)))
            chosen = np.stack([swing[:, 0], twist[:, 1], swing[:, 2]])  # (c, i, n * F)
            chosen = chosen.reshape(3, 3, -1, frames).transpose(2, 0, 1, 3)
            axes[locked] = chosen * self._free_axes[locked][:, :, None, None]
        return axes

    def _wish(
        self,
        shares: tuple[tuple[int, float], ...],
        effector: int,
        target_share: float,
        placed_heads: FloatArray,
        goals: FloatArray,
    ) -> FloatArray:
        """Where a point is pulled to (3, F): the centroid of its children's wishes and its target."""
        point = goals[effector] * target_share if effector >= 0 else 0.0
        for child, share in shares:
            point = point + share * placed_heads[child]
        return np.asarray(point)

    def _carried(self, orientation: FloatArray, p: int, scales: FloatArray, stretched: bool) -> FloatArray:
        """Point ``p``'s offset from its bone's head (3, F), the bone at ``orientation`` (4, F)."""
        return self.aims.rotated(p, orientation, scales if stretched else None)

    def _ends(self, world: FloatArray, heads: FloatArray, scales: FloatArray, stretched: bool) -> FloatArray:
        return np.stack(
            [
                heads[tip] + self._carried(world[tip], p, scales[tip], stretched)
                for tip, p in zip(self.bones.tips.tolist(), self.bones.tail_points.tolist(), strict=True)
            ]
        )

    @cached_property
    def misses(self) -> Misses:
        return Misses(self.bones.weights, self.tolerance)

    @cached_property
    def frames(self) -> BoneFrames:
        return BoneFrames(self.bones.rest.rest_rotations, self.limits)

    @cached_property
    def aims(self) -> Aims:
        """Every carried point's offset from its bone's head."""
        return Aims(self.bones.offsets)

    @cached_property
    def _weights(self) -> list[FloatArray]:
        """Per bone, its points' weights."""
        return [np.array([self.bones.points[p].weight for p in carried]) for carried in self.bones.carried]

    @cached_property
    def _moves(self) -> FloatArray:
        return np.asarray(self.bones.moves[:, :, None, None], dtype=np.float64)

    @cached_property
    def _free_axes(self) -> FloatArray:
        """1 for each bone's axis that turns, 0 where locked, (b, 3)."""
        return np.asarray(~self.limits.lock, dtype=np.float64)

    @cached_property
    def _reach(self) -> float:
        """The longest path from the root's head to an effector, unstretched: the steps' distance scale."""
        return float(self.bones.reach.max())

    @cached_property
    def _inverse_weights(self) -> FloatArray:
        return np.asarray(self.bones.weights.mean() / self.bones.weights, dtype=np.float64)


@dataclass(frozen=True)
class _Slide:
    """Bones whose swing is on the edge of its ellipse and pushed outward, which a least-squares step turns
    along the edge only: their X column becomes the edge's tangent (a turn about X and Z together), their Z
    column none. Left free, the step pushes them out and the clamp pulls them back toward the ellipse's centre
    (the clamp shrinks a swing along its radius), moving the tips where the step did not mean them to go: near
    a goal that several such bones must reach together (targets at their limits) the steps then overshoot,
    rise and fall for tens of iterations before reaching, and the solver gives up on them first.

    Attributes
    ----------
    out : ndarray of bool, shape (F, b)
    normal : ndarray, shape (F, b, 2)
        Which turns about X and Z leave the ellipse (``JointLimits.swing_edges``); the tangent is square to it.
    """

    out: NDArray[np.bool_]
    normal: FloatArray

    @classmethod
    def none(cls, frames: int, bones: int) -> _Slide:
        return cls(np.zeros((frames, bones), dtype=bool), np.zeros((frames, bones, 2)))

    def turn_columns(self, jacobian: FloatArray) -> None:
        """Turn the sliding bones' columns of the Jacobian (F, 3E, 3b), in place, to the edge's tangent."""
        frames, rows, columns = jacobian.shape
        by_axis = jacobian.reshape(frames, rows, columns // 3, 3)  # a view of it
        tangent_x, tangent_z = -self.normal[..., 1], self.normal[..., 0]
        along = tangent_x[:, None] * by_axis[..., 0] + tangent_z[:, None] * by_axis[..., 2]
        by_axis[..., 0] = np.where(self.out[:, None], along, by_axis[..., 0])
        by_axis[..., 2] = np.where(self.out[:, None], 0.0, by_axis[..., 2])

    def angles(self, solved: FloatArray) -> FloatArray:
        """Angles (F, 3b) about the bones' axes from a step solved with ``turn_columns``' Jacobian."""
        if not self.out.any():
            return solved
        by_axis = solved.reshape(len(solved), -1, 3).copy()
        along = by_axis[..., 0].copy()
        by_axis[..., 0] = np.where(self.out, -self.normal[..., 1] * along, by_axis[..., 0])
        by_axis[..., 2] = np.where(self.out, self.normal[..., 0] * along, by_axis[..., 2])
        return by_axis.reshape(solved.shape)


def _solve(jacobian: FloatArray, miss: FloatArray, damping: FloatArray) -> FloatArray:
    """The damped least-squares step (F, n) for Jacobians (F, 3E, n), misses (F, 3E) and damping (F, 3E):
    ``J^T (J J^T + diag(damping))^-1 miss``."""
    normal = jacobian @ jacobian.transpose(0, 2, 1)
    diagonal = np.arange(normal.shape[1])
    normal[:, diagonal, diagonal] += damping
    return np.asarray((jacobian.transpose(0, 2, 1) @ np.linalg.solve(normal, miss[..., None]))[..., 0])
