"""Write keyframes in bulk, all or nothing.

``KeyWriter`` replaces the keys of F-curves inside a frame range (keeping the keys outside it), moving
whole arrays with ``foreach_get``/``foreach_set``. Used as a context manager it undoes everything it did
if anything fails inside the ``with`` block: keys, new F-curves, a new or reassigned Action. Where the keys go
is its one choice (``write_into``): the object's Action, or another (a layer's, ``fabrik_addon.blender.layer``).
A writer can also hold the keys it is given (``hold``), for a bake that thins them before they are written
(``replace_keys`` writes any keys, Bezier keys with their handles among them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from types import TracebackType
from typing import cast

import bpy
import numpy as np
from numpy.typing import NDArray

from .. import compat
from ..interrupts import made, put_back
from .fcurve_checks import check_unlocked, nla_plays

# Every writable keyframe property, by the number of values it has per key and its array type.
_PAIRS = ("co", "handle_left", "handle_right")
_ENUMS = ("interpolation", "handle_left_type", "handle_right_type", "easing", "type")
_FLOATS = ("back", "amplitude", "period")
_FLAGS = ("select_control_point", "select_left_handle", "select_right_handle")


#: What a baked key is written with when the F-curve keeps no other key (the rest take Blender's defaults).
_BAKED_ONLY = ("co", "interpolation")


@cache
def _new_key_values() -> dict[str, tuple[type[np.generic], float]]:
    """The array type and value of each property of a baked key but its position: linear, with auto-clamped
    handles, as Bake Action makes them, and Blender's defaults for the rest (looked up once: reading them
    from RNA costs more than writing the keys)."""
    rna = bpy.types.Keyframe.bl_rna.properties
    enums = {
        "interpolation": "LINEAR",
        "handle_left_type": "AUTO_CLAMPED",
        "handle_right_type": "AUTO_CLAMPED",
        "easing": "AUTO",
        "type": "KEYFRAME",
    }
    values: dict[str, tuple[type[np.generic], float]] = {
        name: (np.int32, cast(bpy.types.EnumProperty, rna[name]).enum_items[identifier].value)
        for name, identifier in enums.items()
    }
    values |= {name: (np.float32, cast(bpy.types.FloatProperty, rna[name]).default) for name in _FLOATS}
    return values | {name: (np.bool_, False) for name in _FLAGS}


@cache
def _interpolation_value(interpolation: str) -> int:
    """The RNA value of a keyframe's ``interpolation`` ("BEZIER", "CONSTANT"...), looked up once."""
    enum = cast(bpy.types.EnumProperty, bpy.types.Keyframe.bl_rna.properties["interpolation"])
    return int(enum.enum_items[interpolation].value)


@dataclass
class Keys:
    """All keyframes of one F-curve as arrays, one row per key."""

    arrays: dict[str, NDArray[np.generic]]

    @property
    def frames(self) -> NDArray[np.float32]:
        return self.arrays["co"][:, 0]  # type: ignore[return-value]

    @classmethod
    def read(cls, fcurve: bpy.types.FCurve) -> Keys:
        points = fcurve.keyframe_points
        n = len(points)
        arrays: dict[str, NDArray[np.generic]] = {}
        for names, dtype, width in ((_PAIRS, np.float32, 2), (_ENUMS, np.int32, 1), (_FLOATS, np.float32, 1)):
            for name in names:
                buffer = np.empty(n * width, dtype=dtype)
                points.foreach_get(name, buffer)
                arrays[name] = buffer.reshape(n, width) if width == 2 else buffer
        for name in _FLAGS:
            flags = np.empty(n, dtype=bool)
            points.foreach_get(name, flags)
            arrays[name] = flags
        return cls(arrays)

    @classmethod
    def baked(
        cls,
        frames: NDArray[np.int64],
        values: NDArray[np.float64],
        only: tuple[str, ...] | None = None,
        interpolation: str = "LINEAR",
    ) -> Keys:
        """New keys as Blender's Bake Action makes them: linear (or ``interpolation``), on ``frames``, valued
        ``values``; with ``only``, just those properties."""
        n = len(frames)
        co = np.empty((n, 2), dtype=np.float32)
        co[:, 0], co[:, 1] = frames, values
        rest = _new_key_values()
        keys = cls(
            {
                name: co if name in _PAIRS else np.full(n, rest[name][1], dtype=rest[name][0])
                for name in (only if only is not None else (*_PAIRS, *rest))
            }
        )
        if interpolation != "LINEAR":
            keys.arrays["interpolation"][:] = _interpolation_value(interpolation)
        return keys

    def outside(self, first: float, last: float) -> Keys:
        """The keys before ``first`` or after ``last``."""
        keep = (self.frames < first) | (self.frames > last)
        return Keys({name: array[keep] for name, array in self.arrays.items()})

    def merged(self, other: Keys) -> Keys:
        """Both sets of keys, sorted by frame."""
        joined = {name: np.concatenate([array, other.arrays[name]]) for name, array in self.arrays.items()}
        order = np.argsort(joined["co"][:, 0], kind="stable")
        return Keys({name: array[order] for name, array in joined.items()})

    def write(self, fcurve: bpy.types.FCurve, only: tuple[str, ...] | None = None) -> None:
        """Make these the F-curve's keys (in bulk), then let Blender recompute handles. With ``only``, the
        other properties keep the defaults of new keys."""
        points = fcurve.keyframe_points
        points.clear()
        points.add(len(self.frames))
        for name in only or self.arrays:
            points.foreach_set(name, self.arrays[name].ravel())
        fcurve.update()


#: Values of channels on frames, (F, n).
Values = NDArray[np.float64]


@dataclass(frozen=True)
class Held:
    """Keys a writer was given while holding them (``KeyWriter.hold``): ``values`` (F, len(indices)) for
    ``data_path[indices]`` on ``frames``, replacing the keys within ``span``, in F-curves grouped under ``group``;
    the values are what the F-curves would hold (a layer's own)."""

    data_path: str
    indices: tuple[int, ...]
    group: str
    frames: NDArray[np.int64]
    values: NDArray[np.float64]
    span: tuple[float, float] | None


@dataclass
class KeyWriter:
    """Replace keys of ``obj``'s F-curves in a frame range; undo it all if the ``with`` block fails.

        The keys go into ``obj``'s active Action (one is created if it has none, playing only on its keys' frames
    where NLA strips play beneath it), or with ``action_name`` into
        that Action (created if missing), which becomes the active one; an Action this replaces as the active
        one gets a fake user, so it is not lost when the file is saved. With ``into`` (an Action and the slot it
        animates ``obj`` through, 4.4+) the keys go there, and the active Action stays as it is.
    """

    obj: bpy.types.Object
    action_name: str | None = None
    into: tuple[bpy.types.Action, bpy.types.ActionSlot | None] | None = None
    _undo: list[Callable[[], None]] = field(default_factory=list)
    _action: bpy.types.Action | None = None
    _slot: bpy.types.ActionSlot | None = None
    _held: list[Held] | None = None

    def __enter__(self) -> KeyWriter:
        try:  # what entering did is undone if it does not finish (the ``with`` block's exit is not called then)
            self._enter()
        except BaseException:
            self.rollback()
            raise
        return self

    def _enter(self) -> None:
        """Choose where the keys go, making the Action (and slot) they need; every change registered to undo
        before it is made."""
        if self.into is not None:
            self.write_into(*self.into)
            return
        anim = self.obj.animation_data
        over_strips = anim is not None and anim.action is None and nla_plays(anim)
        if anim is None:
            self._undo.append(self.obj.animation_data_clear)
        else:
            assignment = compat.action_assignment(self.obj)
            self._undo.append(lambda: compat.restore_action_assignment(self.obj, assignment))
        action = self._choose_action(anim.action if anim is not None else None)
        if anim is not None and anim.action is not None and anim.action != action:
            previous, had_fake_user = anim.action, anim.action.use_fake_user
            self._undo.append(lambda: setattr(previous, "use_fake_user", had_fake_user))
            previous.use_fake_user = True
        if compat.assign_action(self.obj, action):
            slot = made(
                self._undo.append, lambda: compat.new_slot(action, self.obj), partial(compat.remove_slot, action)
            )
            compat.set_object_slot(self.obj, slot)
        if over_strips:
            self._play_strips_outside()
        self.write_into(action, compat.object_slot(self.obj))

    def _play_strips_outside(self) -> None:
        """A new active Action over NLA strips plays on its keys' frames only (Extrapolation Nothing): the strips
        beneath play every other frame as before, where Hold would keep the first and last keys over them."""
        anim = self.obj.animation_data
        assert anim is not None, "over strips, it has animation data"
        extrapolation = anim.action_extrapolation
        self._undo.append(lambda: setattr(anim, "action_extrapolation", extrapolation))
        anim.action_extrapolation = "NOTHING"

    def write_into(self, action: bpy.types.Action, slot: bpy.types.ActionSlot | None) -> None:
        """Key the F-curves of ``action`` that animate through ``slot`` (4.4+; None in 4.2) from now on."""
        self._action, self._slot = action, slot

    def on_undo(self, undo: Callable[[], None]) -> None:
        """Have ``undo`` run, with the writer's own, if the ``with`` block fails (for a change made beside the
        keys, such as the custom property that keys animate)."""
        self._undo.append(undo)

    @property
    def action(self) -> bpy.types.Action:
        """The Action the keys go into."""
        assert self._action is not None, "enter the writer first"
        return self._action

    @property
    def slot(self) -> bpy.types.ActionSlot | None:
        """The slot of ``action`` the keys animate ``obj`` through (4.4+; None in 4.2)."""
        return self._slot

    def finish(self) -> None:
        """Called once every key is written, inside the ``with`` block: nothing more to do for an Action."""

    def hold(self) -> None:
        """From now on keep the keys ``replace_channels`` is given instead of writing them, until ``release``."""
        self._held = []

    def release(self) -> list[Held]:
        """Stop holding keys (``hold``): the keys held, to write (thinned or not) with ``replace_keys``."""
        held, self._held = self._held or [], None
        return held

    @property
    def plays_keys(self) -> bool:
        """Whether its F-curves play what they hold (an Action's do): ``played`` returns the keys as they are."""
        return True

    def played(self, held: Held, keyed: NDArray[np.float64], rows: NDArray[np.int64], exact: bool = False) -> Values:
        """What the channels of ``held`` play on its rows ``rows`` when their F-curves hold ``keyed`` (R,
        len(held.indices)) there, as Blender plays them (``exact``: without its rounding): in an Action, the
        keys' values."""
        return keyed

    def _choose_action(self, current: bpy.types.Action | None) -> bpy.types.Action:
        if self.action_name is None and current is not None:
            return current
        if self.action_name is not None:
            existing: bpy.types.Action | None = bpy.data.actions.get(self.action_name)
            if existing is not None:
                return existing
        name = self.action_name or f"{self.obj.name}Action"
        return made(self._undo.append, lambda: bpy.data.actions.new(name), bpy.data.actions.remove)

    def replace(
        self,
        data_path: str,
        index: int,
        group: str,
        frames: NDArray[np.int64],
        values: NDArray[np.float64],
        span: tuple[float, float] | None = None,
        interpolation: str = "LINEAR",
    ) -> None:
        """Key ``data_path[index]`` with ``values`` on ``frames``, replacing its keys within ``span`` (first and
        last frame, both included; by default the first and last of ``frames``) and keeping the others. The new
        keys are linear, as Bake Action's, or ``interpolation`` ("CONSTANT" for switches).

        Raises
        ------
        ValueError
            If the F-curve, or its group, is locked (the caller's ``with`` block then undoes every key).
        """
        self.replace_keys(
            data_path, index, group, frames, span, lambda only: Keys.baked(frames, values, only, interpolation)
        )

    def replace_keys(
        self,
        data_path: str,
        index: int,
        group: str,
        frames: NDArray[np.int64],
        span: tuple[float, float] | None,
        keys: Callable[[tuple[str, ...] | None], Keys],
    ) -> None:
        """Make ``keys`` the keys of ``data_path[index]`` within ``span`` (by default the first and last of
        ``frames``), keeping the others: ``keys(only)`` makes them, with just the properties ``only`` where the
        F-curve keeps no other key (Blender's defaults for the rest), every property where it does.

        Raises
        ------
        ValueError
            If the F-curve, or its group, is locked (the caller's ``with`` block then undoes every key).
        """
        action, slot = self.action, self._slot
        fcurve = compat.find_slot_fcurve(action, slot, data_path, index)
        created = fcurve is None
        if fcurve is None:
            make = partial(compat.new_slot_fcurve, action, slot, data_path, index, group)
            fcurve = made(self._undo.append, make, partial(compat.remove_slot_fcurve, action, slot))
        first, last = span if span is not None else (float(frames[0]), float(frames[-1]))
        kept = None
        check_unlocked(self.obj, fcurve)
        if not created:
            old = self.keep_for_undo(fcurve)
            kept = old.outside(first, last)
        if kept is not None and len(kept.frames):
            kept.merged(keys(None)).write(fcurve)
        else:  # nothing to keep: the new keys alone, with Blender's defaults for the properties they leave out
            new = keys(_BAKED_ONLY)
            new.write(fcurve, only=tuple(new.arrays))

    def replace_channels(
        self,
        data_path: str,
        indices: Sequence[int],
        group: str,
        frames: NDArray[np.int64],
        values: NDArray[np.float64],
        span: tuple[float, float] | None = None,
    ) -> None:
        """``replace`` for several channels of one property at once: ``data_path[indices[j]]`` keyed with
        ``values[:, j]`` (F, len(indices)), linear; held instead while the writer holds keys (``hold``)."""
        if self._held is not None:
            self._held.append(
                Held(data_path, tuple(indices), group, frames, np.asarray(values, dtype=np.float64), span)
            )
            return
        for j, index in enumerate(indices):
            self.replace(data_path, index, group, frames, values[:, j], span)

    def keep_for_undo(self, fcurve: bpy.types.FCurve) -> Keys:
        """The F-curve's keys as they are, put back if the ``with`` block fails."""
        old = Keys.read(fcurve)
        self._undo.append(lambda: old.write(fcurve))
        return old

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is not None:
            self.rollback()

    def rollback(self) -> None:
        """Undo every change this writer made, newest first (all of them, even if Ctrl+C lands meanwhile)."""
        put_back(self._undo)


def keys_within(fcurve: bpy.types.FCurve, first: float, last: float) -> int:
    """How many keys of ``fcurve`` lie from frame ``first`` to ``last`` (both included)."""
    co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return int(np.count_nonzero((co[0::2] >= first) & (co[0::2] <= last)))
