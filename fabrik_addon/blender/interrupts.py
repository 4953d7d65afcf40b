"""Putting things back whatever happens: what a bake changes for a while (F-curves it mutes, its sandbox scene,
constraints it switches off) and what it undoes when it fails (keys, Actions, NLA tracks) is put back to its
end even when Ctrl+C (a ``KeyboardInterrupt``) lands in the middle of putting it back; the interruption is
raised once everything is back (``put_back``)."""

from __future__ import annotations

from collections.abc import Callable, MutableSequence
from typing import TypeVar

Made = TypeVar("Made")


def put_back(steps: MutableSequence[Callable[[], None]]) -> None:
    """Call every step, the last first, each popped once it has run, whatever arrives meanwhile.

    A step that raises (an interruption may land before it did anything, or after it did all) is called once more;
    one that raises again is left, and the rest still run. So a step should do the same whether it runs once or
    twice (unmute an F-curve), or raise the second time (remove a datablock already removed). The first exception
    is raised once no step is left.

    Parameters
    ----------
    steps : list of callable
        Emptied.
    """
    first: BaseException | None = None
    failed: Callable[[], None] | None = None
    while steps:
        try:
            while steps:
                steps[-1]()
                steps.pop()
        except BaseException as error:  # Ctrl+C, or a step failing: the others are still put back
            if first is None:
                first = error
            if steps and failed is steps[-1]:
                steps.pop()
                failed = None
            elif steps:
                failed = steps[-1]
    if first is not None:
        raise first


def made(
    undo: Callable[[Callable[[], None]], None], make: Callable[[], Made], take_back: Callable[[Made], None]
) -> Made:
    """What ``make()`` makes, its ``take_back`` given to ``undo`` before it is made: an interruption between making
    a thing and registering its undo step would leave it behind (a Ctrl+C lands between any two lines)."""
    box: list[Made] = []

    def take_back_made() -> None:
        for thing in box:
            take_back(thing)

    undo(take_back_made)
    box.append(make())
    return box[0]
