"""Turns of a whole chain, or of one branch of a tree, about its first bone's head: the turn Blender's IK gives
a chain toward its pole before solving, and the turn about the line from the first head to the tip that brings
a solved chain nearest where it started. Only the first bone's rotation changes; it is clamped to its limits.

A chain's turns (``turn_toward``, ``swivel_nearest``) are in its base frame (see ``chain``), vectors (F, 3)
and rotation matrices (F, 3, 3), frames first. A tree's branch (``BranchTurns``; see ``tree_layout``) is seen
as a chain, its bones from its first to its tip, in the frame of its first bone's posed parent placed at its
head: there the chain's turns do the work.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core import (
    FloatArray,
    JointLimits,
    axis_angle_to_quat,
    cross,
    matrix_to_quat,
    quat_between,
    quat_multiply,
    quat_rotate,
    quat_to_matrix,
)
from .chain import ChainRest, forward_kinematics, local_rotations
from .iterate import frames_first, rows_of
from .tree_layout import TreeBones
from .tree_steps import TreePosed, TreeSteps

#: How far a chain folded back toward a goal inside the ball its longest bone leaves stays from a full half
#: turn at each fold (radians): enough to bend it in the start's plane rather than about a fixed axis.
_FOLD_BEND_RAD = 1e-3
#: A direction in line with no axis: where the start does not bend, the fold bends about one square to the goal
#: and to this.
_ANY = np.array([0.4, 0.5, 0.6])
_Y = np.array([0.0, 1.0, 0.0])
#: ``swivel_toward``: the turns about the root-to-goal line swept, the rounds refining the best, and the turns
#: each round spans (two steps of the round before).
_SWIVELS = 72
_SWIVEL_ROUNDS = 3
_SWIVEL_REFINED = 9
#: Turns whose misses lie this close (relative to the chain's length) miss alike: ``swivel_toward`` takes the
#: smallest of them.
_SWIVEL_TIE = 1e-9


def turn_toward(
    rest: ChainRest,
    limits: JointLimits,
    quats: FloatArray,
    tips: FloatArray,
    goals: FloatArray,
    poles: FloatArray | None,
    pole_angle: float,
    aim: bool = False,
) -> FloatArray:
    """The poses turned about the root's head as Blender's IK turns a chain before solving, the root then
    clamped to its limits (Blender's turns the root past them).

    With a pole, the turn takes the root-to-tip line onto the root-to-goal line, and the plane through the
    root-to-tip line and the root's "up" axis (its X axis turned toward Z by ``pole_angle``) onto the plane
    through the root-to-goal and root-to-pole lines; a frame whose pole lies on the root-to-goal line has no
    such plane and is not turned, as Blender's IK turns it before solving, or with ``aim`` (a pose to be
    turned to its goal, not a start) turned as without a pole. Without a pole, it is the smallest turn that
    points the root-to-tip line at the goal, keeping the plane the chain bends in; a root whose twist alone is
    locked (Lock IK Y, ``only_twist_locked``) is then turned about the root-to-goal line to where it needs no
    twist (``untwisted``): it points the tip at the goal still, where the clamp would have taken the twist off
    and the tip with it. (With a pole, the clamp takes the twist the pole turn gave such a root, keeping its
    swing, as before: Blender's IK turns the root to its pole past the lock.)

    Parameters
    ----------
    rest : ChainRest
    limits : JointLimits
    quats : ndarray, shape (F, m, 4)
        Local rotations.
    tips : ndarray, shape (F, 3)
        Where they put the last joint (with the bones' scales).
    goals, poles : ndarray, shape (F, 3)
    pole_angle : float
        Radians.

    Returns
    -------
    ndarray, shape (F, m, 4)
    """
    if poles is None:  # on quaternions: the root's Y axis (in the base frame), then the turn in its parent frame
        tip_direction = unit(tips, fallback=quat_rotate(quats[:, 0], _Y) @ rest.rest_rotations[0].T)
        goal_direction = unit(goals, fallback=tip_direction)
        turn = quat_between(tip_direction, goal_direction)
        turn[:, 1:] = turn[:, 1:] @ rest.rest_rotations[0]
        root = quat_multiply(turn, quats[:, 0])
        if only_twist_locked(limits):  # the turn about the goal's line that needs no twist
            root = untwisted(root, goal_direction @ rest.rest_rotations[0])
    else:
        matrices = _root(rest, quats)
        tip_direction = unit(tips, fallback=matrices[:, :, 1])
        goal_direction = unit(goals, fallback=tip_direction)
        up = matrices[:, :, 0] * np.cos(pole_angle) + matrices[:, :, 2] * np.sin(pole_angle)
        turn_matrices = _look_at(goal_direction, poles) @ np.swapaxes(_look_at(tip_direction, up), 1, 2)
        lined = ~np.isfinite(turn_matrices).all(axis=(1, 2))  # a pole on the line: no plane to turn to
        if lined.any():
            between = quat_to_matrix(quat_between(tip_direction[lined], goal_direction[lined]))
            turn_matrices[lined] = between if aim else np.eye(3)
        root = matrix_to_quat(rest.rest_rotations[0].T @ turn_matrices @ matrices)
    return _with_root_rotation(limits, quats, root)


def only_twist_locked(limits: JointLimits) -> bool:
    """Whether the root bone's twist is locked (Lock IK Y) and its swing neither locked nor limited: it swings
    any way, and turns the chain's tip toward any goal without twisting (``untwisted``)."""
    lock, limited = limits.lock[0], limits.use_limit[0]
    return bool(lock[1] and not (lock[0] or lock[2] or limited[0] or limited[2]))


def untwisted(q: FloatArray, line: FloatArray) -> FloatArray:
    """The rotations (F, 4) ``t q`` with ``t`` a turn about the unit ``line`` (F, 3) (in the frame ``q`` turns
    in) that have no twist about their own Y axis (``t q``'s Y part zero): where ``q`` points a direction along
    the line, they point it there too, as a bone whose twist is locked can. Of the turns ``(cos(a/2), sin(a/2)
    line)``, ``t q = cos(a/2) q + sin(a/2) (0, line) q`` has the Y part ``cos(a/2) q_y + sin(a/2) p_y`` (``p =
    (0, line) q``), zero at ``(cos, sin)`` along ``(p_y, -q_y)``: one rotation (up to sign). Where both are zero
    every turn has none, and ``q`` stays."""
    p = _line_times(line, q)
    turned = _turned_about(q, p, p[:, 2], -q[:, 2])
    turned[:, 2] = 0.0  # not a rounding's worth either: a half-turn swing's twist (w = 0) would read it
    return turned


def _line_times(line: FloatArray, q: FloatArray) -> FloatArray:
    """The products ``(0, line) q`` (F, 4) of unit vectors (F, 3) as pure quaternions and rotations (F, 4): with
    ``q``, the two terms of every turn of ``q`` about the line, ``t q = cos(a/2) q + sin(a/2) (0, line) q``."""
    p = np.empty_like(q)
    p[:, 0] = -np.einsum("fi,fi->f", line, q[:, 1:])
    p[:, 1:] = q[:, :1] * line + cross(line, q[:, 1:])
    return p


def _turned_about(q: FloatArray, p: FloatArray, cosine: FloatArray, sine: FloatArray) -> FloatArray:
    """``q`` turned about a line (F, 4), given ``p = (0, line) q`` (``_line_times``) and the half angle's cosine
    and sine up to a common positive factor (F,) each; unturned where both are zero."""
    size = np.sqrt(cosine * cosine + sine * sine)
    some = size > 0.0
    c = np.where(some, cosine / np.where(some, size, 1.0), 1.0)
    s = np.where(some, sine / np.where(some, size, 1.0), 0.0)
    return np.asarray(c[:, None] * q + s[:, None] * p, dtype=np.float64)


def straightened_by_lengths(rest: ChainRest, first: FloatArray, goals: FloatArray) -> FloatArray:
    """Local rotations (F, m, 4) from ``first`` (each bone keeping its twist) that straighten the chain toward each
    goal (F, 3) (``fold_lines``) or, for a goal inside the ball its longest bone leaves, point that bone toward it
    and fold the others back along it: the nearest the lengths alone allow, limits aside."""
    lengths = rest.lengths
    toward, back = fold_lines(forward_kinematics(rest, first)[0], goals)
    folded = np.flatnonzero(np.linalg.norm(goals, axis=1) < lengths.sum())
    directions = np.repeat(toward[:, None], len(lengths), axis=1)  # (F, m, 3)
    others = np.flatnonzero(np.arange(len(lengths)) != np.argmax(lengths))  # folded back
    directions[np.ix_(folded, others)] = back[folded, None]
    joints = np.concatenate([np.zeros((len(goals), 1, 3)), np.cumsum(lengths[:, None] * directions, axis=1)], 1)
    return local_rotations(rest, joints, first)


def swivel_toward(rest: ChainRest, limits: JointLimits, quats: FloatArray, goals: FloatArray) -> FloatArray:
    """The poses (F, m, 4) turned about the root's head to point the tip at each goal (F, 3), the root then clamped
    to its limits: the smallest turn that points it, then the turn about the root-to-goal line after which the
    clamped root misses the goal least (a sweep of ``_SWIVELS`` angles from none, refined ``_SWIVEL_ROUNDS``
    times about the best; the smallest of those that miss alike). A locked or limited root can often point the
    tip where the smallest turn would take it out of its limits, turned about that line (a thigh whose twist is
    limited rolls the knee's plane so; one whose twist alone is locked is pointed exactly, ``untwisted``)."""
    frames, bones = quats.shape[:2]
    tips = forward_kinematics(rest, quats)[0][:, -1]
    line = unit(goals, fallback=unit(tips, fallback=_Y))
    pointed = quat_to_matrix(quat_between(unit(tips, fallback=line), line)) @ _root(rest, quats)
    step = 2.0 * np.pi / _SWIVELS
    angles = np.broadcast_to(np.arange(_SWIVELS) * step, (frames, _SWIVELS))
    best, least, slack = quats, np.full(frames, np.inf), _SWIVEL_TIE * float(rest.lengths.sum())
    for _ in range(_SWIVEL_ROUNDS + 1):
        axes = np.broadcast_to(line[:, None], (*angles.shape, 3))
        turns = quat_to_matrix(axis_angle_to_quat(np.concatenate([angles[..., None], axes], axis=-1)))
        roots = turns @ pointed[:, None]
        posed = np.repeat(quats[:, None], angles.shape[1], axis=1)  # (F, K, m, 4)
        posed[..., 0, :] = limits.clamp(matrix_to_quat(rest.rest_rotations[0].T @ roots), bone=0)
        ends = forward_kinematics(rest, posed.reshape(-1, bones, 4))[0][:, -1].reshape(*angles.shape, 3)
        misses = np.linalg.norm(ends - goals[:, None], axis=-1)
        # Of the turns that miss least (many do where the root's limits hold it), the smallest: rounding alone
        # would pick among them otherwise, and one frame solved alone or among others could end apart.
        ties = misses <= misses.min(axis=1, keepdims=True) + slack
        wrapped = np.abs(np.remainder(angles + np.pi, 2.0 * np.pi) - np.pi)
        k = np.argmin(np.where(ties, wrapped, np.inf), axis=1)
        better = misses[np.arange(frames), k] < least - slack
        best = np.where(better[:, None, None], posed[np.arange(frames), k], best)
        least = np.where(better, misses[np.arange(frames), k], least)
        angles = angles[np.arange(frames), k][:, None] + np.linspace(-step, step, _SWIVEL_REFINED)
        step *= 2.0 / (_SWIVEL_REFINED - 1)
    return np.asarray(best, dtype=np.float64)


def swivel_nearest(
    rest: ChainRest, limits: JointLimits, quats: FloatArray, tips: FloatArray, reference: FloatArray
) -> FloatArray:
    """The poses turned about their root-to-tip lines to where the root is nearest ``reference``'s, the root
    then clamped to its limits.

    Turning the whole chain about the line from the root's head to the tip keeps the tip where it is and
    every bone's local rotation but the root's. In the root's parent frame (the line there ``u``), the turn
    ``t = (cos(a/2), sin(a/2) u)`` takes the root's rotation ``q`` to ``t q``, whose nearness to the
    reference's ``r``, ``(r . t q)^2`` (``trace(S.T @ R) = 4 (r . q)^2 - 1`` for their matrices), is
    ``(C cos(a/2) + D sin(a/2))^2`` with ``C = r . q`` and ``D = r . (0, u) q``: largest at ``t = (C, D u)``
    normalised (none where both are zero: every turn is as near).

    Parameters
    ----------
    rest : ChainRest
    limits : JointLimits
    quats : ndarray, shape (F, m, 4)
        Local rotations to turn.
    tips : ndarray, shape (F, 3)
        Where they put the last joint (with the bones' scales).
    reference : ndarray, shape (F, m, 4)
        Local rotations whose root to come nearest.

    Returns
    -------
    ndarray, shape (F, m, 4)
    """
    q, r = quats[:, 0], reference[:, 0]
    line = unit(tips @ rest.rest_rotations[0], fallback=quat_rotate(q, _Y))
    p = _line_times(line, q)
    nearest = _turned_about(q, p, np.einsum("fi,fi->f", r, q), np.einsum("fi,fi->f", r, p))
    return _with_root_rotation(limits, quats, nearest)


def unit(vectors: FloatArray, fallback: FloatArray) -> FloatArray:
    """Unit vectors (..., 3); ``fallback`` where a vector is (close to) zero."""
    size = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.where(size > 1e-12, vectors / np.where(size > 1e-12, size, 1.0), fallback)


def fold_lines(start: FloatArray, goals: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Where a chain straightened or folded toward ``goals`` (F, 3) from the start whose joints are ``start``
    (F, m+1, 3) lies (the lines its extreme poses point along, ``core.reach``): toward the goal, and back along
    that line, bent a little in the plane the start bends in (F, 3) each."""
    toward = unit(goals, fallback=unit(start[:, -1], fallback=_Y))
    bend = cross(start[:, 1] - start[:, 0], start[:, -1] - start[:, 0])
    normal = unit(bend, fallback=unit(cross(toward, _ANY), fallback=np.array([1.0, 0.0, 0.0])))
    back = -toward
    return toward, np.asarray(back * np.cos(_FOLD_BEND_RAD) + cross(normal, back) * np.sin(_FOLD_BEND_RAD))


def _look_at(direction: FloatArray, up: FloatArray) -> FloatArray:
    """Frames (F, 3, 3) with columns (side, up made perpendicular to ``direction``, ``direction``); NaN where
    ``up`` is along ``direction``."""
    side = cross(direction, up)
    size = np.linalg.norm(side, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        side = np.where(size > 1e-9, side / size, np.nan)
    return np.stack([side, cross(direction, side), direction], axis=-1)


def _root(rest: ChainRest, quats: FloatArray) -> FloatArray:
    """The root bone's orientations (F, 3, 3) in the base frame under local rotations (F, m, 4)."""
    return np.asarray(rest.rest_rotations[0] @ quat_to_matrix(quats[:, 0]))


def _with_root_rotation(limits: JointLimits, quats: FloatArray, root: FloatArray) -> FloatArray:
    """``quats`` (F, m, 4) with the root bone's rotation replaced by ``root`` (F, 4; its sign made that of
    ``matrix_to_quat``, w >= 0), clamped to the root's limits."""
    result = quats.copy()
    result[:, 0] = limits.clamp(np.where(root[:, :1] < 0.0, -root, root), bone=0)
    return result


@dataclass(frozen=True)
class BranchTurns:
    """The branch turns of one tree: its layout, limits and steps (for forward kinematics)."""

    steps: TreeSteps

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
        """The poses with each of ``effectors``' branches turned as ``turn_toward`` turns a chain:
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
        ``swivel_nearest``): every effector stays where it was."""
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
