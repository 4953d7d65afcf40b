"""Stopping the command on a signal, in this process (no Blender needed; tests/blender/test_cli_cancel.py stops
real bakes)."""

from __future__ import annotations

import os
import signal

import pytest

from fabrik_addon.cli.cancel import Cancelled, check, stop_on_signals


def test_the_first_signal_raises_later_ones_are_ignored_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    before_interrupt = signal.getsignal(signal.SIGINT)  # Python's own; ignored in a pytest-xdist worker
    stopped: Cancelled | None = None
    with stop_on_signals():
        check()  # nothing came yet
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Cancelled as raised:
            stopped = raised
        os.kill(os.getpid(), signal.SIGINT)  # while cleaning up: ignored
        with pytest.raises(Cancelled, match=r"^SIGTERM$"):
            check()  # the first signal, again, wherever its exception was lost
    assert stopped is not None
    assert (str(stopped), stopped.status) == ("SIGTERM", 143)
    assert signal.getsignal(signal.SIGTERM) == before
    assert signal.getsignal(signal.SIGINT) == before_interrupt
    check()  # forgotten once the command is done


def test_a_signal_ignored_when_the_command_starts_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as for a command started with "&" by a script
    try:
        with stop_on_signals():
            os.kill(os.getpid(), signal.SIGINT)
            check()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_process_leaving_after_the_bake_keeps_ignoring_the_signals() -> None:
    """A ``-j`` child stopped by Ctrl+C gets its parent's SIGTERM a moment later: from the end of the bake on,
    nothing may cut short its removal of its files."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        with stop_on_signals(leaving=True):
            pass
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGTERM)  # ignored: the test goes on
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
