"""Stopping the command: Ctrl+C (SIGINT), SIGTERM or the terminal closing (SIGHUP) stop a bake, serial or
``-j N``, leaving no file half-written. Pure Python, no ``bpy``.

Python runs a signal's handler in the main thread between two steps of Python code, never inside Blender's
C code: a signal that comes while Blender saves a file takes effect once the save returns, and the
temporary file it wrote is then removed instead of renamed into place. Blender runs Python of its own in
the middle of some operators (the ``save_post`` handlers of add-ons) and prints and forgets an exception
raised there; ``check`` raises it again where a file would be written.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals that stop the command, those this system has.
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

_received: list[int] = []


class Cancelled(BaseException):
    """The command was asked to stop by the signal ``signum``.

    Not an ``Exception``: no code that deals with a file's failure (and goes on with the next file) catches it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def status(self) -> int:
        """The exit status of a command a signal stopped, as shells give it: 128 + the signal's number."""
        return 128 + self.signum


@contextmanager
def stop_on_signals(*, leaving: bool = False) -> Iterator[None]:
    """Meanwhile, the first of ``SIGNALS`` raises ``Cancelled`` in the main thread, and later ones are ignored
    so that nothing cuts the clean-up short. A signal ignored when the command started (``nohup``) stays
    ignored; outside the main thread (where Python cannot handle signals) nothing changes. Afterwards the
    handlers are put back, or with ``leaving`` (the process leaves next) the signals stay ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        if not _received:
            _received.append(signum)
            raise Cancelled(signum)

    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, handle)
    try:
        yield
    finally:
        if leaving:
            ignore_from_now()
        else:
            for signum, handler in previous.items():
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        _received.clear()


def ignore_from_now() -> None:
    """Ignore ``SIGNALS`` from now on: the command is leaving, and a signal would only cut its clean-up short
    (a ``-j`` child stopped by Ctrl+C gets its parent's SIGTERM a moment later, while it removes its files)."""
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


def check() -> None:
    """Raise ``Cancelled`` if a signal came meanwhile (``stop_on_signals``), though its exception was lost.

    Raises
    ------
    Cancelled
        For the first signal that came.
    """
    if _received:
        raise Cancelled(_received[0])
