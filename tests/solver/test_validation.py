"""Bad input raises ValueError naming the problem, before anything is solved."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fabrik_addon.solver import solve, solve_frames

CHAIN = [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0]]


@pytest.mark.parametrize(
    ("joints", "message"),
    [
        ([[0, 0, 0]], "at least two joints"),
        ([0, 0, 1], r"shape \(n\+1, 3\)"),
        ([[0, 0], [0, 1]], r"shape \(n\+1, 3\)"),
        ([[0, 0, 0], [0, 0, 1], [0, 0, 1], [0, 0, 2]], r"segment 1 \(joints 1 to 2\) has zero length"),
        ([[0, 0, 0], [0, np.nan, 1]], "NaN or infinity at joint 1"),
        ([[0, 0, 0], [0, 0, 1], [np.inf, 0, 1]], "NaN or infinity at joint 2"),
        ([["a", 0, 0], [0, 0, 1]], "must be numeric"),
    ],
)
def test_bad_joints_are_named(joints: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solve(joints, [1, 0, 0])


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ([1, 0], r"target must have shape \(3,\)"),
        ([1, np.nan, 0], "target contains NaN"),
        ([[1, 0, 0]], r"target must have shape \(3,\)"),
    ],
)
def test_bad_target_is_named(target: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solve(CHAIN, target)


def test_nan_target_names_its_frame() -> None:
    targets = np.zeros((5, 3))
    targets[3, 2] = np.nan
    with pytest.raises(ValueError, match="targets contains NaN or infinity at frame index 3"):
        solve_frames(CHAIN, targets)


@pytest.mark.parametrize("targets", [np.zeros((0, 3)), np.zeros((4, 2)), np.zeros(3)])
def test_bad_targets_shape(targets: Any) -> None:
    with pytest.raises(ValueError, match=r"targets must have shape \(F, 3\)"):
        solve_frames(CHAIN, targets)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tolerance": 0.0}, "tolerance must be a positive finite number"),
        ({"tolerance": -1e-3}, "tolerance must be a positive finite number"),
        ({"tolerance": float("nan")}, "tolerance must be a positive finite number"),
        ({"max_iterations": 0}, "max_iterations must be an integer >= 1"),
        ({"max_iterations": 2.5}, "max_iterations must be an integer >= 1"),
        ({"max_iterations": True}, "max_iterations must be an integer >= 1"),
        ({"min_improvement": -0.1}, "min_improvement must be a finite number >= 0"),
        ({"method": "jacobian"}, "method must be one of"),
    ],
)
def test_bad_options_are_named(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solve(CHAIN, [1, 0, 1], **options)
