"""FABRIK follows Algorithm 1 of Aristidou & Lasenby (2011) step by step on a small hand-computed example.

Chain p1 = (0, 0, 0), p2 = (1, 0, 0), p3 = (2, 0, 0) (d1 = d2 = 1), target t = (1, 1.5, 0): |t - p1| =
sqrt(3.25) < 2, so the target is reachable and the passes run.

Forward reaching (lines 1.17-1.22):
    p3' = t = (1, 1.5)
    p2' = p3' + d2 (p2 - p3') / |p2 - p3'| = (1, 1.5) + (0, -1.5) / 1.5       = (1, 0.5)
    p1' = p2' + d1 (p1 - p2') / |p1 - p2'| = (1, 0.5) + (-1, -0.5) / sqrt(1.25) = (1 - 2/sqrt5, 0.5 - 1/sqrt5)
Backward reaching (lines 1.24-1.29):
    p1'' = b = (0, 0)
    p2'' = p1'' + d1 (p2' - p1'') / |p2' - p1''| = (1, 0.5) / sqrt(1.25)     = (2/sqrt5, 1/sqrt5)
    p3'' = p2'' + d2 (p3' - p2'') / |p3' - p2''|, with p3' - p2'' = (1 - 2/sqrt5, 1.5 - 1/sqrt5)
"""

from __future__ import annotations

import math

import numpy as np

from fabrik_addon.solver import FloatArray, solve
from fabrik_addon.solver.core import Stopping
from fabrik_addon.solver.points.accelerate import AFTER
from fabrik_addon.solver.points.fabrik import (
    FLOAT_FRAMES,
    backward_reach,
    fabrik_iteration,
    forward_reach,
    plain_iteration,
)
from fabrik_addon.solver.points.iterate import iterate

S5 = math.sqrt(5.0)
START = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0]])
TARGET = np.array([1.0, 1.5, 0.0])
FORWARD = np.array([[1 - 2 / S5, 0.5 - 1 / S5, 0], [1.0, 0.5, 0], [1.0, 1.5, 0]])
_P3_FROM_P2 = np.array([1 - 2 / S5, 1.5 - 1 / S5])
_P3 = np.array([2 / S5, 1 / S5]) + _P3_FROM_P2 / np.linalg.norm(_P3_FROM_P2)
BACKWARD = np.array([[0.0, 0, 0], [2 / S5, 1 / S5, 0], [_P3[0], _P3[1], 0]])
# Hand-evaluated decimals of the same points, to check the formulas above are what is meant.
BACKWARD_DECIMALS = np.array([[0, 0, 0], [0.894427, 0.447214, 0], [0.994206, 1.442223, 0]])

LENGTHS = np.array([1.0, 1.0])


def _layout(joints: FloatArray) -> FloatArray:
    return joints[:, :, None].copy()  # (n+1, 3, 1): the passes work on frames along the last axis


def test_forward_reaching_pass() -> None:
    P = _layout(START)
    forward_reach(P, LENGTHS, TARGET[:, None])
    np.testing.assert_allclose(P[:, :, 0], FORWARD, atol=1e-9)


def test_backward_reaching_pass() -> None:
    P = _layout(FORWARD)
    backward_reach(P, LENGTHS, START[0][:, None])
    np.testing.assert_allclose(P[:, :, 0], BACKWARD, atol=1e-9)
    np.testing.assert_allclose(P[:, :, 0], BACKWARD_DECIMALS, atol=1e-6)


def test_one_iteration_of_solve_is_both_passes() -> None:
    result = solve(START, TARGET, max_iterations=1, tolerance=1e-6)
    np.testing.assert_allclose(result.joints, BACKWARD, atol=1e-9)
    assert result.iterations == 1
    assert result.error == np.linalg.norm(result.joints[-1] - TARGET)
    assert math.isclose(result.error, 0.058072, abs_tol=1e-5)
    assert not result.reached


def test_iterations_continue_until_tolerance() -> None:
    result = solve(START, TARGET, tolerance=1e-6)
    assert result.reached
    assert 1 < result.iterations < 50
    assert result.error <= 1e-6


def test_unreachable_target_straightens_the_chain_in_one_step() -> None:
    # Lines 1.4-1.9: every joint on the line from the root to the target.
    result = solve(START, [0.0, 3.0, 4.0])
    expected = np.array([[0, 0, 0], [0, 0.6, 0.8], [0, 1.2, 1.6]])
    np.testing.assert_allclose(result.joints, expected, atol=1e-12)
    assert result.iterations == 1
    assert math.isclose(result.error, 3.0)
    assert not result.reached


def test_a_few_frames_iterate_in_plain_floats_to_the_bit() -> None:
    """Up to ``FLOAT_FRAMES`` frames iterate frame by frame in plain floats; each frame comes out exactly as
    it does among many frames in numpy, coincident joints (the nudge's case) included."""
    rng = np.random.default_rng(7)
    frames = 50
    P = rng.normal(size=(13, 3, frames)) * rng.uniform(0.1, 100.0, size=(1, 1, frames))
    P[5, :, :7] = P[6, :, :7]  # coincident joints
    lengths = rng.uniform(0.01, 3.0, size=12)
    targets, bases = rng.normal(size=(3, frames)), rng.normal(size=(3, frames))
    together = P.copy()
    fabrik_iteration(together, lengths, targets, bases)
    assert frames > FLOAT_FRAMES
    for f in range(0, frames, FLOAT_FRAMES):
        alone = P[:, :, f : f + FLOAT_FRAMES].copy()
        fabrik_iteration(alone, lengths, targets[:, f : f + FLOAT_FRAMES], bases[:, f : f + FLOAT_FRAMES])
        np.testing.assert_array_equal(alone, together[:, :, f : f + FLOAT_FRAMES])


def test_one_frames_loop_on_plain_floats_is_the_arrays_to_the_bit() -> None:
    """A chain's single frame runs the iteration loop on plain floats (``plain``) while it stops plainly, and on
    arrays once it would be accelerated: the same pose, iterations and error to the bit either way, on frames
    that stop at once, in a few iterations, by a stall, out of iterations, and accelerated."""
    rng = np.random.default_rng(11)
    seen = set()
    for _ in range(300):
        segments = int(rng.integers(1, 20))
        lengths = rng.uniform(0.05, 2.0, size=segments)
        directions = rng.normal(size=(segments, 3))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        joints = np.concatenate([np.zeros((1, 3)), np.cumsum(directions * lengths[:, None], axis=0)])
        reach = float(lengths.sum()) * rng.uniform(0.0, 1.0)
        target = joints[-1] + rng.normal(size=3) * rng.choice([1e-5, 0.05, 0.5]) * reach
        stopping = Stopping.checked(float(rng.choice([1e-15, 1e-6, 1e-3, 0.1])), int(rng.choice([1, 5, 100, 1000])))
        for accelerate in (True, False):
            arrays = iterate(
                _layout(joints), lengths, target[:, None], fabrik_iteration, stopping, accelerate=accelerate
            )
            floats = iterate(
                _layout(joints), lengths, target[:, None], fabrik_iteration, stopping, accelerate=accelerate,
                plain=plain_iteration,
            )  # fmt: skip
            for a, b in zip(arrays, floats, strict=True):
                np.testing.assert_array_equal(a, b)
            seen.add(min(int(arrays[1][0]), AFTER))
    assert {0, 1, AFTER}.issubset(seen)  # at once, in one, accelerated
