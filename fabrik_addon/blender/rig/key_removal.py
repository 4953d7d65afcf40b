"""Remove keys in a frame range, all or nothing (``KeyRemoval``): what Clear takes away comes back whole if Ctrl+C
(or anything else) stops it midway, and an F-curve left without keys goes only once every other change is made."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

import bpy

from .. import compat
from ..interrupts import put_back
from .keys import Keys


@dataclass
class KeyRemoval:
    """Remove keys of F-curves (``remove``) inside a ``with`` block that ends by calling ``finish``: if the block
    fails before that, every F-curve gets its keys back and every other change registered (``on_undo``) is undone;
    from then on, the F-curves left without keys, and whatever else was deferred (``on_finish``), go, all of them
    even if Ctrl+C lands meanwhile.

    An F-curve is emptied rather than removed until ``finish`` (an empty F-curve plays nothing, as a removed one
    does), so that undoing it is giving its keys back: a removed one cannot be put back without making it again.
    """

    _undo: list[Callable[[], None]] = field(default_factory=list)
    _finish: list[Callable[[], None]] = field(default_factory=list)  # the last to run first
    _finishing: bool = False

    def __enter__(self) -> KeyRemoval:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        put_back(self._finish if self._finishing or kind is None else self._undo)

    def finish(self) -> None:
        """Make the changes deferred (F-curves left without keys removed): from here on the removal is done."""
        self._finishing = True
        put_back(self._finish)  # the ``with`` block's exit finishes what an interruption leaves

    def remove(
        self,
        obj: bpy.types.Object,
        fcurve: bpy.types.FCurve,
        first: float,
        last: float,
        into: tuple[bpy.types.Action, bpy.types.ActionSlot | None] | None = None,
    ) -> int:
        """Remove the keys of ``obj``'s F-curve from frame ``first`` to ``last`` (both included), and the F-curve
        itself if no key is left (once the block finishes), as Blender's Clear Keyframes does. The F-curve is one
        of ``obj``'s active Action, or of ``into`` (an Action and the slot it animates ``obj`` through). Returns
        how many keys went."""
        keys = Keys.read(fcurve)
        kept = keys.outside(first, last)
        removed = len(keys.frames) - len(kept.frames)
        if not removed:
            return 0
        self._undo.append(lambda: keys.write(fcurve))
        kept.write(fcurve)
        if not len(kept.frames):
            gone = (
                (lambda: compat.remove_fcurve(obj, fcurve))
                if into is None
                else (lambda: compat.remove_slot_fcurve(*into, fcurve))
            )
            self._finish.insert(0, gone)
        return removed

    def on_undo(self, undo: Callable[[], None]) -> None:
        """Have ``undo`` run if the block fails, before the changes registered earlier are undone."""
        self._undo.append(undo)

    def on_finish(self, finish: Callable[[], None]) -> None:
        """Have ``finish`` run on ``finish()``, after the changes deferred earlier (and only then: a change that
        cannot be undone)."""
        self._finish.insert(0, finish)
