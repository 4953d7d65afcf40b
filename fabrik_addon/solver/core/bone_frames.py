"""What the solvers on bones (a chain's steps, ``bones.chain_steps``; a tree's, ``bones.tree_steps``) do to one
bone's rows: its rest frame under its posed parent, its local rotation clamped, the parent turned so a child stays
within its limits, the bone aimed at a point, and the small turns of a least-squares step applied.

Poses are rows (``quat_rows``): quaternions (4, F), vectors (3, F), frames last. The tables every step needs are
built once per set of bones, so that each routine costs a fixed few numpy calls whatever the number of frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from . import quat_rows as rows
from .limits import JointLimits
from .rotations import matrix_to_quat, quat_conjugate, quat_multiply, quat_rotate
from .row_clamp import RowClamp
from .validate import FloatArray

#: Added to a bone's direction, scaled by its length, before it is aimed at a point: where the point is on
#: the bone's head the direction is undefined and this keeps the bone's own; elsewhere it turns the aim by
#: about 1e-12 of a radian or less (as FABRIK on points nudges its directions).
_NUDGE = 1e-12
#: The identity turn, as a row (4, 1).
_NO_TURN = np.array([[1.0], [0.0], [0.0], [0.0]])
#: The largest turn of one bone in one least-squares step, radians.
MAX_STEP_RAD = 0.3


def cap_turns(turns: FloatArray) -> None:
    """Shorten, in place, the turns (m, 3, F) (world axes times angles) of a least-squares step that are larger
    than ``MAX_STEP_RAD``, keeping their axes: one bone does not swing far on a linear model of the tip."""
    sizes = np.sqrt(np.einsum("kif,kif->kf", turns, turns))
    turns *= np.minimum(1.0, MAX_STEP_RAD / np.maximum(sizes, 1e-300))[:, None]


@dataclass(frozen=True)
class BoneFrames:
    """Bones' rest frames (each relative to its parent's) and limits, ready for rows.

    Attributes
    ----------
    rest_rotations : ndarray, shape (m, 3, 3)
    limits : JointLimits
        For the same ``m`` bones.
    """

    rest_rotations: FloatArray
    limits: JointLimits

    def frame(self, parent: FloatArray | None, k: int) -> FloatArray:
        """Bone ``k``'s rest frame (4, F) under its posed parent's orientation ``parent`` (4, F), or (4, 1)
        without a parent."""
        if parent is None:
            return np.asarray(self.rest_quats[k][:, None])
        return rows.apply(self.right_rest[k], parent)

    def parent_within_child_limits(self, parent: FloatArray, child: FloatArray, k: int) -> FloatArray:
        """The parent orientation (4, F) under which ``child`` (bone ``k``'s orientation) is a rotation within
        bone ``k``'s limits: ``parent`` itself where it already is (to rounding), else turned to match the
        nearest allowed one."""
        local = rows.apply(self.left_rest_conj[k], rows.conj_multiply(parent, child))  # conj(parent rest) child
        allowed = self.clamps[k](local)
        return rows.apply(self.right_rest_conj[k], rows.multiply_conj(child, allowed))

    def turned(self, local: FloatArray, turns: FloatArray, frames: FloatArray) -> FloatArray:
        """Local rotations (m, 4, F) after small turns (m, 3, F) (world axes times angles), each seen in its
        bone's rest frame under its posed parent ``frames`` (m, 4, F), and clamped to the limits: (m, 4, F)."""
        clamped = self.clamp_all(np.ascontiguousarray(self._moved(local, turns, frames).transpose(2, 0, 1)))
        return np.ascontiguousarray(clamped.transpose(1, 0, 2))

    def turned_and_cut(self, local: FloatArray, turns: FloatArray, frames: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``turned``'s rotations (m, 4, F), and what the clamp took away from each turn, frames first
        (m, F, 4): the turn from the unclamped rotation to the clamped one, in the rest frame under the parent
        (the identity, to its sign, where the turn kept within the limits)."""
        moved = self._moved(local, turns, frames)
        clamped = self.clamp_all(np.ascontiguousarray(moved.transpose(2, 0, 1))).transpose(1, 2, 0)  # (m, F, 4)
        return np.ascontiguousarray(clamped.transpose(0, 2, 1)), quat_multiply(clamped, quat_conjugate(moved))

    def _moved(self, local: FloatArray, turns: FloatArray, frames: FloatArray) -> FloatArray:
        """``turned``'s rotations before the clamp, frames first (m, F, 4).

        On every bone at once the arrays are long, and the written-out products of ``rotations`` beat the
        tables of ``quat_rows`` (made for one bone's short rows) ten times over: they work frames first."""
        local_turns = quat_rotate(quat_conjugate(frames.transpose(0, 2, 1)), turns.transpose(0, 2, 1))
        half = 0.5 * np.sqrt(np.einsum("kfi,kfi->kf", local_turns, local_turns))[..., None]
        exp = np.concatenate([np.cos(half), (0.5 * np.sinc(half / np.pi)) * local_turns], axis=-1)
        return quat_multiply(exp, local.transpose(0, 2, 1))

    @cached_property
    def rest_quats(self) -> FloatArray:
        return matrix_to_quat(self.rest_rotations)

    @cached_property
    def right_rest(self) -> FloatArray:
        """(m, 4, 4): ``q * rest_k`` as a matrix product."""
        return rows.right_tables(self.rest_quats)

    @cached_property
    def right_rest_conj(self) -> FloatArray:
        return rows.right_tables(self.rest_quats * [1.0, -1.0, -1.0, -1.0])

    @cached_property
    def left_rest_conj(self) -> FloatArray:
        return rows.left_tables(self.rest_quats * [1.0, -1.0, -1.0, -1.0])

    @cached_property
    def clamps(self) -> list[RowClamp]:
        return RowClamp.each(self.limits)

    @cached_property
    def clamp_all(self) -> RowClamp:
        return RowClamp.every(self.limits)

    @cached_property
    def limited(self) -> NDArray[np.bool_]:
        """Whether each bone has any lock or limit, (m,)."""
        return np.asarray(self.limits.lock.any(axis=1) | self.limits.use_limit.any(axis=1))


@dataclass(frozen=True)
class Aims:
    """Constant offsets in bones' own frames (a bone's next joint, or a point it carries), ready to be turned
    with their bones and aimed at points.

    Attributes
    ----------
    offsets : ndarray, shape (n, 3)
        An offset of exactly zero (a point on its bone's head) has no direction to aim: aiming it turns nothing.
    """

    offsets: FloatArray

    def turn(self, i: int, toward: FloatArray) -> FloatArray:
        """The smallest turn (4, F) taking offset ``i``'s direction onto ``toward`` (3, F), both in its bone's
        frame; no turn for an offset of zero."""
        if self._zero[i]:
            return np.broadcast_to(_NO_TURN, (4, toward.shape[-1]))
        return rows.turn_from(self._between[i], self._half_turns[i], toward + self._fallbacks[i])

    def rotated(self, i: int, orientation: FloatArray, scales: FloatArray | None = None) -> FloatArray:
        """Offset ``i`` turned by its bone's orientation (4, F), after scaling its Y by the bone's Y ``scales``
        (F,) if given (a stretched bone moves what it carries): (3, F)."""
        if scales is None:
            return rows.rotate_fixed(orientation, self._tables[i])
        offset = np.repeat(self.offsets[i][:, None], len(scales), axis=1)
        offset[1] *= scales
        return rows.rotate(orientation, offset)

    @cached_property
    def _zero(self) -> list[bool]:
        return [bool(size == 0.0) for size in np.linalg.norm(self.offsets, axis=1)]

    @cached_property
    def _directions(self) -> FloatArray:
        """Unit offsets; an offset of zero stands in as Y (never aimed: see ``turn``)."""
        sizes = np.linalg.norm(self.offsets, axis=1, keepdims=True)
        directions = np.where(sizes > 0, self.offsets / np.where(sizes > 0, sizes, 1.0), [0.0, 1.0, 0.0])
        return np.asarray(directions, dtype=np.float64)

    @cached_property
    def _tables(self) -> FloatArray:
        return rows.fixed_vector_tables(self.offsets)

    @cached_property
    def _between(self) -> FloatArray:
        return rows.between_tables(self._directions)

    @cached_property
    def _half_turns(self) -> FloatArray:
        return rows.half_turns_from(self._directions)

    @cached_property
    def _fallbacks(self) -> FloatArray:
        return np.asarray(_NUDGE * self.offsets[:, :, None], dtype=np.float64)
