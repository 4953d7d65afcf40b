"""A solve's history: the joints after every step of the solver, so a person can watch it work
(``solve(..., history=True)``, ``solve_pose(..., history=True)``).

Recording runs the same routines as solving, one stage at a time, and copies the joints after each; a solve
without history never comes here, so it pays nothing for it.

The steps, by name:

- FABRIK on points: ``START``, then per iteration ``TOWARD`` (the forward reaching pass: the tip on the
  target, the others pulled after it, the root off its place) and ``BACK`` (the backward reaching pass: the
  root back in place, the others pushed after it).
- CCD: ``START``, then per iteration one ``"turn about joint k"`` per joint, from the one before the end
  effector (``k = n - 1``) down to the root (``k = 0``).
- ``solve_pose`` (limits, a pole, stretch): see ``bones.chain_solve``; its FABRIK iterations are ``TOWARD`` and
  ``BACK`` too, its least-squares steps ``LEAST_SQUARES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ..core import FloatArray
from .ccd import ccd_turn
from .fabrik import backward_reach, forward_reach
from .iterate import Iteration

START = "start"
TOWARD = "toward the target"
BACK = "back to the root"
LEAST_SQUARES = "least squares"

#: One stage of an iteration on points, as ``Iteration`` takes its arguments.
Stage = Callable[[FloatArray, FloatArray, FloatArray, FloatArray], None]


@dataclass
class Recorder:
    """Joints (n+1, 3) after each step of one frame's solve, and the steps' names."""

    joints: list[FloatArray] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def add(self, name: str, joints: FloatArray) -> None:
        """Record a copy of ``joints``, shape (n+1, 3), after the step ``name``."""
        self.joints.append(np.array(joints, dtype=np.float64))
        self.names.append(name)

    def recording(self, stages: list[tuple[str, Stage]]) -> Iteration:
        """An iteration on points that runs ``stages`` one after another on a single frame and records the
        joints after each."""

        def iteration(P: FloatArray, lengths: FloatArray, targets: FloatArray, bases: FloatArray) -> None:
            for name, stage in stages:
                stage(P, lengths, targets, bases)
                self.add(name, P[:, :, 0])

        return iteration

    def history(self) -> tuple[FloatArray, tuple[str, ...]]:
        """The joints recorded, shape (steps, n+1, 3), and their names."""
        return np.stack(self.joints), tuple(self.names)


def point_stages(method: str, bones: int) -> list[tuple[str, Stage]]:
    """The stages of one iteration of ``method`` ("fabrik" or "ccd") on a chain of ``bones`` segments: the
    same routines ``fabrik_iteration`` and ``ccd_iteration`` run, in the same order."""
    if method == "fabrik":
        return [(TOWARD, _forward), (BACK, _backward)]
    return [(f"turn about joint {pivot}", partial(_turn, pivot)) for pivot in range(bones - 1, -1, -1)]


def _forward(P: FloatArray, lengths: FloatArray, targets: FloatArray, bases: FloatArray) -> None:
    forward_reach(P, lengths, targets)


def _backward(P: FloatArray, lengths: FloatArray, targets: FloatArray, bases: FloatArray) -> None:
    backward_reach(P, lengths, bases)


def _turn(pivot: int, P: FloatArray, lengths: FloatArray, targets: FloatArray, bases: FloatArray) -> None:
    ccd_turn(P, pivot, targets)
