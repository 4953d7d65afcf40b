"""Whether a chain is being stepped through (Step Through Iterations, ``playback_ui``), for the operators
that must not run meanwhile: the stepped pose is not the animation, so Bake, Clear, Bake IK Constraints and
Key Current Frame would read or key it. ``playback_ui`` owns the session and says when it starts and ends."""

from __future__ import annotations

_active = False

#: Why an operator is greyed out while stepping.
LEAVE_FIRST = "Leave Step Through Iterations first: the chain is posed at a step of its solve, not its animation"


def set_active(active: bool) -> None:
    global _active
    _active = active


def active() -> bool:
    return _active
