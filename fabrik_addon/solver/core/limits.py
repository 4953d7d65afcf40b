"""Joint limits as Blender's IK defines them per bone (Bone Properties, Inverse Kinematics).

A bone's local rotation ``q`` (relative to its rest frame under its posed parent, as Blender's pose bones
rotate) is split into a twist about the bone's own Y axis, done first, and a swing after it:
``q = swing * twist``. The swing has no Y component; it is what turns the bone's Y axis.

- X and Z limits bound the swing. Its quaternion is ``(cos(a/2), sin(a/2) * (ux, 0, uz))`` for a turn by ``a``
  about the axis ``(ux, 0, uz)``; ``x = sin(a/2) ux`` is bounded by ``sin(ik_min_x/2)`` and ``sin(ik_max_x/2)``,
  and ``z`` the same way by the Z limits, as Blender's IK solver bounds them. With both X and Z limited the
  allowed swings form an ellipse in ``(x, z)`` (one quarter ellipse per quadrant, its semi-axes the bounds on
  that side). A pure turn about X (a hinge) is then bounded by exactly ``ik_min_x`` and ``ik_max_x``.
- The Y limit bounds the twist angle, ``2 atan2(y, w)`` of the twist quaternion.
- A locked axis (``lock_ik_*``) allows no swing component (X, Z) or no twist (Y) at all: two locked axes
  make a hinge about the third; all three locked make the bone rigid.

Radians throughout: ``minimum`` in [-pi, 0] and ``maximum`` in [0, pi], as Blender's properties allow.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from .row_clamp import RowClamp
from .validate import FloatArray

_AXES = "XYZ"
#: How far outside its range a limit may lie and still be taken (as the end of the range).
_SLACK = 1e-6


@dataclass(frozen=True)
class JointLimits:
    """The IK limits of a chain of ``m`` bones, root first.

    Attributes
    ----------
    lock : ndarray of bool, shape (m, 3)
        ``lock_ik_x``, ``lock_ik_y``, ``lock_ik_z`` of each bone.
    use_limit : ndarray of bool, shape (m, 3)
        ``use_ik_limit_x``, ``use_ik_limit_y``, ``use_ik_limit_z``.
    minimum, maximum : ndarray, shape (m, 3)
        ``ik_min_*`` in [-pi, 0] and ``ik_max_*`` in [0, pi], radians; used where ``use_limit`` is set.
    stretch : ndarray, shape (m,)
        ``ik_stretch`` in [0, 1]: each bone's share of the stretch when stretching is on.
    """

    lock: NDArray[np.bool_]
    use_limit: NDArray[np.bool_]
    minimum: FloatArray
    maximum: FloatArray
    stretch: FloatArray

    def __post_init__(self) -> None:
        m = len(self.stretch)
        for name in ("lock", "use_limit", "minimum", "maximum"):
            if np.shape(getattr(self, name)) != (m, 3):
                raise ValueError(
                    f"limits: {name} must have shape ({m}, 3) for {m} bones, got {np.shape(getattr(self, name))}"
                )
        for name, low, high in (("minimum", -np.pi, 0.0), ("maximum", 0.0, np.pi), ("stretch", 0.0, 1.0)):
            values = np.asarray(getattr(self, name), dtype=np.float64)
            # Blender stores its limits in float32: its -pi lies a little below the float64 one.
            bad = np.argwhere(~((values >= low - _SLACK) & (values <= high + _SLACK)))
            if bad.size:
                where = f"bone {bad[0][0]}" + (f", axis {_AXES[bad[0][1]]}" if values.ndim == 2 else "")
                raise ValueError(
                    f"limits: {name} must lie in [{low:g}, {high:g}], got {values[tuple(bad[0])]!r} ({where})"
                )
            object.__setattr__(self, name, np.clip(values, low, high))

    @classmethod
    def free(cls, bones: int) -> JointLimits:
        """No limits on ``bones`` bones."""
        return cls.of(bones)

    @classmethod
    def of(
        cls,
        bones: int,
        *,
        lock: npt.ArrayLike = False,
        use_limit: npt.ArrayLike = False,
        minimum: npt.ArrayLike = -np.pi,
        maximum: npt.ArrayLike = np.pi,
        stretch: npt.ArrayLike = 0.0,
    ) -> JointLimits:
        """Limits for ``bones`` bones from values that broadcast to (bones, 3) (``stretch`` to (bones,)).

        >>> knee = JointLimits.of(2, lock=[[0, 0, 0], [0, 1, 1]], use_limit=[[0, 0, 0], [1, 0, 0]],
        ...                       minimum=0.0, maximum=[[0, 0, 0], [2.6, 0, 0]])
        """
        shape = (bones, 3)
        return cls(
            lock=np.broadcast_to(np.asarray(lock, dtype=bool), shape).copy(),
            use_limit=np.broadcast_to(np.asarray(use_limit, dtype=bool), shape).copy(),
            minimum=np.broadcast_to(np.asarray(minimum, dtype=np.float64), shape).copy(),
            maximum=np.broadcast_to(np.asarray(maximum, dtype=np.float64), shape).copy(),
            stretch=np.broadcast_to(np.asarray(stretch, dtype=np.float64), (bones,)).copy(),
        )

    @property
    def bones(self) -> int:
        return len(self.stretch)

    def take(self, bones: npt.ArrayLike | slice) -> JointLimits:
        """The limits of some bones (indices or a slice), in that order."""
        index = bones if isinstance(bones, slice) else np.asarray(bones, dtype=np.intp)
        return JointLimits(
            self.lock[index], self.use_limit[index], self.minimum[index], self.maximum[index], self.stretch[index]
        )

    @property
    def any(self) -> bool:
        """Whether any bone is locked or limited on any axis."""
        return bool(self.lock.any() or self.use_limit.any())

    def bent(self, free_bend_rad: float = 0.3) -> FloatArray:
        """A bent pose within the limits, rotations (m, 4): each bone swung about X and Z to the middle of a
        limited range, or about a free X by ``free_bend_rad`` (a straight chain cannot start FABRIK toward a
        target on its own line); no twist."""
        free = self.use_limit & ~self.lock
        angles = np.where(free, 0.5 * (self.minimum + self.maximum), 0.0)
        angles[:, 0] = np.where(self.use_limit[:, 0], angles[:, 0], free_bend_rad)
        swing = np.zeros((self.bones, 4))
        swing[:, 1], swing[:, 3] = np.sin(0.5 * angles[:, 0]), np.sin(0.5 * angles[:, 2])
        swing[:, 0] = np.sqrt(np.maximum(0.0, 1.0 - swing[:, 1] ** 2 - swing[:, 3] ** 2))
        return self.clamp(swing)

    def clamp(self, rotations: FloatArray, bone: int | None = None) -> FloatArray:
        """The nearest allowed local rotations (per swing and twist; see the module's notes).

        Parameters
        ----------
        rotations : ndarray, shape (..., m, 4), or (..., 4) with ``bone`` given
            Unit quaternions (w, x, y, z) of each bone's local rotation.
        bone : int, optional
            Clamp by this one bone's limits only.

        Returns
        -------
        ndarray of the shape of ``rotations``
            Unit quaternions with w >= 0 that satisfy the limits (``row_clamp.RowClamp``, which the solvers'
            loops call on rows); a free bone's rotations are returned as they are, up to their sign (so they are
            unit only if given so), and other rotations already inside unchanged to rounding.
        """
        quats = np.asarray(rotations, dtype=np.float64)
        if bone is not None:
            clamped = self._clamps[2][bone](np.ascontiguousarray(quats.reshape(-1, 4).T)).T
            return np.ascontiguousarray(clamped).reshape(quats.shape)
        frames = quats.reshape(-1, *quats.shape[-2:])  # (N, m, 4)
        limited, clamp = self._clamps[:2]
        if len(limited) < self.bones:  # the free bones as they are, up to sign; only the others clamped
            clamped = frames * np.copysign(1.0, frames[..., :1])
            if len(limited):
                rows = np.ascontiguousarray(frames[:, limited].transpose(2, 1, 0))
                clamped[:, limited] = clamp(rows).transpose(2, 1, 0)
        else:
            clamped = np.ascontiguousarray(clamp(np.ascontiguousarray(frames.transpose(2, 1, 0))).transpose(2, 1, 0))
        return clamped.reshape(quats.shape)

    def __getstate__(self) -> dict[str, object]:
        """What a pickle keeps: the limits, not the clamps made of them (made again where needed)."""
        return {name: value for name, value in self.__dict__.items() if name != "_clamps"}

    def __setstate__(self, state: dict[str, object]) -> None:
        """The limits of a pickle, without clamps one written by an older version may hold."""
        self.__dict__.update({name: value for name, value in state.items() if name != "_clamps"})

    @cached_property
    def _clamps(self) -> tuple[NDArray[np.intp], RowClamp, list[RowClamp]]:
        """The bones locked or limited on some axis, the clamp of those at once, and each bone's clamp, made
        once."""
        limited = np.flatnonzero((self.lock | self.use_limit).any(axis=1))
        return limited, RowClamp.every(self.take(limited)), RowClamp.each(self)

    def swing_bounds(self, bones: int | slice) -> tuple[FloatArray, FloatArray]:
        """The bounds on each axis's part of a swing or twist, ``sin`` of half its turn (shape of ``bones``' limits,
        (..., 3)): ``sin(min / 2)`` and ``sin(max / 2)`` where the axis is limited, -1 and 1 where it is not."""
        use = self.use_limit[bones]
        return np.where(use, np.sin(0.5 * self.minimum[bones]), -1.0), np.where(
            use, np.sin(0.5 * self.maximum[bones]), 1.0
        )

    def swing_edges(self, rotations: FloatArray) -> tuple[NDArray[np.bool_], FloatArray]:
        """Where a bone's swing lies on the edge of its ellipse (X and Z both limited, neither locked), and
        which small turns leave the ellipse there.

        Parameters
        ----------
        rotations : ndarray, shape (..., m, 4)
            Unit quaternions of each bone's local rotation, within the limits.

        Returns
        -------
        edge : ndarray of bool, shape (..., m)
            The swing is on the ellipse (within a millionth of its size).
        normal : ndarray, shape (..., m, 2)
            The outward normal in turns: a small turn (dx, dz) about the rest frame's X and Z axes, taken
            before the rotation, moves the swing out of the ellipse where it points along ``normal`` and
            along the edge where it is square to it.
        """
        q = np.where(rotations[..., :1] < 0, -rotations, rotations)
        sw, sx, sz = _swing_twist(q)[2:]
        semi_x = np.where(sx >= 0, np.sin(0.5 * self.maximum[:, 0]), -np.sin(0.5 * self.minimum[:, 0]))
        semi_z = np.where(sz >= 0, np.sin(0.5 * self.maximum[:, 2]), -np.sin(0.5 * self.minimum[:, 2]))
        use, lock = self.use_limit, self.lock
        both = use[:, 0] & use[:, 2] & ~lock[:, 0] & ~lock[:, 2] & (semi_x > 0) & (semi_z > 0)
        ratio_x, ratio_z = _ratio(sx, semi_x), _ratio(sz, semi_z)
        edge = both & (np.hypot(ratio_x, ratio_z) > 1.0 - _SLACK)
        outward = np.stack([_ratio(ratio_x, semi_x), _ratio(ratio_z, semi_z)], axis=-1)  # the ellipse's normal
        # A turn by a about (ux, 0, uz), taken before q, moves the swing's (x, z) by a/2 (sw u - (u.p) p / sw),
        # p = (z, -x): besides the turn itself, the twist it brings turns the swing about Y. The turns that
        # leave are those whose move has a part along ``outward``: along that expression applied to it.
        across = np.stack([sz, -sx], axis=-1)
        sw = np.maximum(sw, 1e-6)[..., None]
        normal = sw * outward - np.einsum("...i,...i->...", outward, across)[..., None] * across / sw
        normal /= np.maximum(np.linalg.norm(normal, axis=-1, keepdims=True), 1e-300)
        return edge, normal

    def excess(self, rotations: FloatArray) -> FloatArray:
        """How far, in radians, each bone's rotation lies outside its limits (0 inside).

        Parameters
        ----------
        rotations : ndarray, shape (..., m, 4)

        Returns
        -------
        ndarray, shape (..., m)
            The angle of the turn from each rotation to its nearest allowed one: ``4 atan2(|q - c|, |q + c|)``
            for unit quaternions ``q`` and ``c`` on the same side, which stays exact for the tiny angles that
            rotations read back from float32 (Blender's) differ by, where ``2 acos(q.c)`` loses half the digits.
        """
        unit = rotations / np.linalg.norm(rotations, axis=-1, keepdims=True)
        clamped = self.clamp(unit)
        clamped = np.where(np.einsum("...i,...i->...", clamped, unit)[..., None] < 0, -clamped, clamped)
        apart = np.linalg.norm(unit - clamped, axis=-1)
        return np.asarray(4.0 * np.arctan2(apart, np.linalg.norm(unit + clamped, axis=-1)), dtype=np.float64)


def _ratio(value: FloatArray, semi_axis: FloatArray) -> FloatArray:
    """``value / semi_axis``, 0 where the semi-axis is 0 (the value was already clamped to 0 there)."""
    return np.where(semi_axis > 0, value / np.where(semi_axis > 0, semi_axis, 1.0), 0.0)


def _swing_twist(q: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Rotations ``q`` (..., 4) with w >= 0 as ``swing * twist``: the twist's (w, y) and the swing's (w, x, z)
    (its y is 0), each (...)."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    twist_norm = np.hypot(w, y)  # twist = (w, 0, y, 0) / |(w, y)|, about Y first
    safe = twist_norm > 1e-12
    tw = np.where(safe, w / np.where(safe, twist_norm, 1.0), 1.0)
    ty = np.where(safe, y / np.where(safe, twist_norm, 1.0), 0.0)
    # swing = q * conj(twist): its y is 0 by construction; its w >= 0 as w >= 0 and tw >= 0.
    return tw, ty, w * tw + y * ty, x * tw + z * ty, z * tw - x * ty
