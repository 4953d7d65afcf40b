"""The nearest rotations Blender's IK limits allow (see ``limits``), made for rows (see ``quat_rows``): the clamp
``JointLimits.clamp`` and the loops of the solvers on bones use.

The choices a bone's limits fix (a locked or limited axis, a symmetric range, an ellipse) are made once, in
Python, when the clamp is built, so clamping one bone's rotations on every frame costs only the numpy calls
its own limits need. The maths is the limits module's: the twist about Y first, the swing after it; the
swing's X and Z bounded (a locked axis bounded to 0), then drawn into the ellipse of the two bounds; the twist
angle bounded. The swing's X and Z are kept together as one array (2, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from .validate import FloatArray


class Limits(Protocol):
    """What a clamp is made from: ``limits.JointLimits`` (whose ``clamp`` clamps by these)."""

    @property
    def lock(self) -> NDArray[np.bool_]: ...
    @property
    def use_limit(self) -> NDArray[np.bool_]: ...
    @property
    def minimum(self) -> FloatArray: ...
    @property
    def maximum(self) -> FloatArray: ...
    @property
    def bones(self) -> int: ...


#: Added to w before the twist is taken: where w and y are both 0 the rotation is a half-turn swing with no
#: twist to speak of, and this makes its twist the identity; any w above 1e-134 is left as it is. (Its square
#: must not underflow; ``np.hypot`` would not need that, but is several times slower on long rows.)
_TINY = 1e-150


@dataclass(frozen=True)
class RowClamp:
    """The limits of one bone, or of every bone of a chain, ready to clamp rows of rotations.

    A flag is ``True`` or ``False`` where every bone clamped agrees, else a bool column (m, 1). Bounds are
    columns for the swing's X and Z, shape (2, 1) for one bone or (2, m, 1) for many.
    """

    free: bool  # no limit and no lock at all
    bounded: bool  # whether any swing component is limited or locked
    low: FloatArray  # sin(min / 2); 0 where locked, -1 where free
    high: FloatArray  # sin(max / 2); 0 where locked, 1 where free
    ellipse: bool | NDArray[np.bool_]  # X and Z both limited and neither locked
    #: 1 / the ellipse's semi-axes, on the positive and the negative side (0 for a semi-axis 0), or one array
    #: for both sides
    inverse_semi: FloatArray | tuple[FloatArray, FloatArray]
    twist_locked: bool  # every bone's twist locked: the twist need not be rebuilt
    twist: tuple[FloatArray, FloatArray] | None  # the twist's half-angle bounds; None where every twist is free
    tiny: FloatArray  # (_TINY, 0) as a column, shaped as the bounds
    signs: FloatArray  # (1, -1) as a column: (z, x) times it is (z, -x), the cross terms of swing * twist

    @classmethod
    def of(cls, limits: Limits, bone: int | None = None) -> RowClamp:
        """The clamp of ``bone``'s limits, or of every bone's (rows (4, m, F)) without one."""
        return cls.every(limits) if bone is None else cls.each(limits)[bone]

    @classmethod
    def every(cls, limits: Limits) -> RowClamp:
        """The clamp of every bone's limits at once, for rows (4, m, F)."""
        bounds = _Bounds.of(limits)

        def flag(values: NDArray[np.bool_]) -> bool | NDArray[np.bool_]:
            return bool(values.all()) if values.all() or not values.any() else values[:, None]

        def column(values: FloatArray) -> FloatArray:
            """Values (m, 2) as columns (2, m, 1)."""
            return np.ascontiguousarray(values.T[..., None])

        inverse_high, inverse_low = column(bounds.inverse_high), column(bounds.inverse_low)
        halves = column(bounds.half_angles)
        return cls(
            free=bool(bounds.free.all()),
            bounded=bool(bounds.bounded.any()),
            low=column(bounds.low),
            high=column(bounds.high),
            ellipse=flag(bounds.ellipse),
            inverse_semi=inverse_high if np.array_equal(inverse_high, inverse_low) else (inverse_high, inverse_low),
            twist_locked=bool(bounds.twist_locked.all()),
            twist=(halves[0], halves[1]) if bounds.twisted.any() else None,
            tiny=np.reshape([_TINY, 0.0], (2, 1, 1)),
            signs=np.reshape([1.0, -1.0], (2, 1, 1)),
        )

    @classmethod
    def each(cls, limits: Limits) -> list[RowClamp]:
        """The clamp of each bone's limits, in order, for rows (4, F); sliced from arrays of every bone's
        bounds (the solver builds one per bone of every chain it solves)."""
        bounds = _Bounds.of(limits)
        low, high = bounds.low[..., None], bounds.high[..., None]  # (m, 2, 1)
        inverse_high, inverse_low = bounds.inverse_high[..., None], bounds.inverse_low[..., None]
        symmetric = (bounds.inverse_high == bounds.inverse_low).all(axis=1).tolist()
        halves = bounds.half_angles[..., None]  # (m, 2, 1)
        tiny, signs = np.array([[_TINY], [0.0]]), np.array([[1.0], [-1.0]])
        free, bounded, ellipse = bounds.free.tolist(), bounds.bounded.tolist(), bounds.ellipse.tolist()
        twist_locked, twisted = bounds.twist_locked.tolist(), bounds.twisted.tolist()
        return [
            cls(
                free=free[k],
                bounded=bounded[k],
                low=low[k],
                high=high[k],
                ellipse=ellipse[k],
                inverse_semi=inverse_high[k] if symmetric[k] else (inverse_high[k], inverse_low[k]),
                twist_locked=twist_locked[k],
                twist=(halves[k, 0], halves[k, 1]) if twisted[k] else None,
                tiny=tiny,
                signs=signs,
            )
            for k in range(limits.bones)
        ]

    def __call__(self, rows: FloatArray) -> FloatArray:
        """The nearest allowed rotations: rows (4, F), or (4, m, F) for a clamp of every bone, to unit
        quaternions of the same shape (unit to rounding: the swing and the twist are each rebuilt as unit
        quaternions), with w >= 0."""
        if self.free:
            return np.asarray(rows * np.copysign(1.0, rows[0]))
        # The twist about Y, (tw, 0, ty, 0), and the swing q * conj(twist) = (sw, sx, 0, sz), which is the
        # same for q and -q: the twist's sign matters only where it is rebuilt.
        twist = rows[0::2] + self.tiny
        twist /= np.sqrt(np.einsum("i...,i...->...", twist, twist))
        swing = rows[1::2] * twist[0] + rows[3::-2] * (self.signs * twist[1])
        if self.bounded:
            swing = np.minimum(np.maximum(swing, self.low), self.high)
        if self.ellipse is not False:
            ratio = swing * self._inverse_semi(swing)
            ratio *= ratio
            shrink = 1.0 / np.sqrt(np.maximum(ratio[0] + ratio[1], 1.0))
            swing *= shrink if self.ellipse is True else np.where(self.ellipse, shrink, 1.0)
        squares = swing * swing
        sw = np.sqrt(np.maximum(1.0 - squares[0] - squares[1], 0.0))
        clamped = np.empty(rows.shape)
        if self.twist_locked:
            clamped[0], clamped[1::2], clamped[2] = sw, swing, 0.0
            return clamped
        twist *= np.copysign(1.0, twist[0])  # -twist turns as twist does; this one has w >= 0
        if self.twist is not None:
            half = np.minimum(np.maximum(np.arctan2(twist[1], twist[0]), self.twist[0]), self.twist[1])
            twist = np.stack([np.cos(half), np.sin(half)])
        clamped[0::2] = sw * twist
        clamped[1::2] = swing * twist[0] - swing[::-1] * (self.signs * twist[1])
        return clamped

    def _inverse_semi(self, swing: FloatArray) -> FloatArray:
        """1 / the semi-axis on each swing component's side (2, ...)."""
        if isinstance(self.inverse_semi, tuple):
            return np.where(swing >= 0, *self.inverse_semi)
        return self.inverse_semi


@dataclass(frozen=True)
class _Bounds:
    """What ``RowClamp`` needs of a chain's limits, per bone: the swing's X and Z bounds (m, 2), their
    inverses, the twist's half-angle bounds (m, 2) and the flags (m,)."""

    free: NDArray[np.bool_]
    bounded: NDArray[np.bool_]
    low: FloatArray
    high: FloatArray
    inverse_high: FloatArray
    inverse_low: FloatArray
    ellipse: NDArray[np.bool_]
    twisted: NDArray[np.bool_]
    twist_locked: NDArray[np.bool_]
    half_angles: FloatArray

    @classmethod
    def of(cls, limits: Limits) -> _Bounds:
        lock, use = limits.lock, limits.use_limit
        low = np.where(lock, 0.0, np.where(use, np.sin(0.5 * limits.minimum), -1.0))[:, [0, 2]]
        high = np.where(lock, 0.0, np.where(use, np.sin(0.5 * limits.maximum), 1.0))[:, [0, 2]]
        half_low = np.where(lock[:, 1], 0.0, np.where(use[:, 1], 0.5 * limits.minimum[:, 1], -np.pi))
        half_high = np.where(lock[:, 1], 0.0, np.where(use[:, 1], 0.5 * limits.maximum[:, 1], np.pi))
        with np.errstate(divide="ignore"):
            return cls(
                free=~(lock | use).any(axis=1),
                bounded=(lock | use)[:, [0, 2]].any(axis=1),
                low=low,
                high=high,
                inverse_high=np.where(high > 0, 1.0 / high, 0.0),
                inverse_low=np.where(low < 0, -1.0 / low, 0.0),
                ellipse=use[:, 0] & use[:, 2] & ~lock[:, 0] & ~lock[:, 2],
                twisted=lock[:, 1] | use[:, 1],
                twist_locked=lock[:, 1],
                half_angles=np.stack([half_low, half_high], axis=1),
            )
