"""Benchmark of the solver core; prints ratios measured side by side in one run.

1. In the shape of Table 1 of Aristidou & Lasenby (2011): a 10-joint chain and 1,000 seeded random reachable
   and unreachable targets, FABRIK and CCD at the same tolerance: mean iterations and time per solve.
2. ``solve_frames`` on a smooth 1,000-frame target path, 16 and 64 bones: microseconds per frame vectorised
   against straightforward per-frame Python loops of the paper's Algorithm 1, with and without warm start;
   and at 16 bones against a per-frame loop of the public ``solve``.
3. ``solve_pose`` on a chain of 48 unit bones whose joints are cones (X and Z limited, Y locked), as
   ``scripts/bench/bench_bake.py`` builds it, its target on a loop through what the cones let the tip reach, 120
   frames: milliseconds per frame, frames reached and iterations, against a per-frame loop of ``solve_pose``.
4. ``solve_tree`` on a Y, a hand and a 63-bone tree (time per frame, frames with every effector within
   tolerance), and on chains against ``solve_frames``; ``solve_tree_pose`` (bones, limits) against
   ``solve_tree`` (points) on ``scripts/bench/bench_bake.py``'s tree rigs from their rest pose, free and limited.

Run: ``.venv/bin/python scripts/bench/bench_solver.py`` (any Python with numpy; Blender is not needed).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenes"))

from fabrik_addon.solver import (
    DEFAULT_MAX_ITERATIONS,
    ChainRest,
    FloatArray,
    FramesSolution,
    JointLimits,
    PoseSolution,
    Solution,
    TreeRest,
    solve,
    solve_frames,
    solve_pose,
    tree_forward_kinematics,
)

SEED = 2011
TOLERANCE = 1e-3
MAX_ITERATIONS = DEFAULT_MAX_ITERATIONS
Vec = list[float]


def random_chain(rng: np.random.Generator, joints: int) -> FloatArray:
    """A chain of unit segments in a random pose, root at the origin."""
    directions = rng.normal(size=(joints - 1, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return np.vstack([np.zeros(3), np.cumsum(directions, axis=0)])


def random_targets(rng: np.random.Generator, count: int, low: float, high: float) -> FloatArray:
    """Points at distances uniform in [low, high) from the origin, in random directions."""
    directions = rng.normal(size=(count, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return directions * rng.uniform(low, high, size=(count, 1))


def smooth_path(frames: int, reach: float) -> FloatArray:
    """A looping Lissajous path inside a chain's reach, as an animator might key an Empty."""
    t = np.linspace(0.0, 2.0 * np.pi, frames)
    return reach * np.column_stack([0.55 * np.sin(2 * t), 0.45 * np.cos(3 * t), 0.3 + 0.25 * np.sin(t)])


# -- Straightforward per-frame loops of Algorithm 1: the baselines the vectorised solver is measured against.


def paper_numpy(joints: FloatArray, target: FloatArray, tol: float, max_iter: int) -> tuple[FloatArray, int]:
    """Algorithm 1 as written, one frame, numpy vectors per joint."""
    p = joints.copy()
    d = np.linalg.norm(np.diff(p, axis=0), axis=1)
    n = len(p)
    if np.linalg.norm(target - p[0]) > d.sum():
        for i in range(n - 1):
            r = np.linalg.norm(target - p[i])
            p[i + 1] = p[i] + (target - p[i]) * (d[i] / r)
        return p, 1
    b = p[0].copy()
    iterations = 0
    while np.linalg.norm(p[-1] - target) > tol and iterations < max_iter:
        p[-1] = target
        for i in range(n - 2, -1, -1):
            r = np.linalg.norm(p[i + 1] - p[i])
            p[i] = p[i + 1] + (p[i] - p[i + 1]) * (d[i] / r)
        p[0] = b
        for i in range(n - 1):
            r = np.linalg.norm(p[i + 1] - p[i])
            p[i + 1] = p[i] + (p[i + 1] - p[i]) * (d[i] / r)
        iterations += 1
    return p, iterations


def _toward(a: Vec, b: Vec, length: float) -> Vec:
    """The point at ``length`` from ``a`` towards ``b`` (NearestPointSphere), in plain floats."""
    dx, dy, dz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    s = length / math.sqrt(dx * dx + dy * dy + dz * dz)
    return [a[0] + dx * s, a[1] + dy * s, a[2] + dz * s]


def paper_floats(joints: list[Vec], target: Vec, tol: float, max_iter: int) -> tuple[list[Vec], int]:
    """Algorithm 1 as written, one frame, plain Python floats (no numpy call per joint)."""
    p = [list(j) for j in joints]
    d = [math.dist(p[i], p[i + 1]) for i in range(len(p) - 1)]
    if math.dist(p[0], target) > sum(d):
        for i in range(len(d)):
            p[i + 1] = _toward(p[i], target, d[i])
        return p, 1
    b = list(p[0])
    iterations = 0
    while math.dist(p[-1], target) > tol and iterations < max_iter:
        p[-1] = list(target)
        for i in range(len(d) - 1, -1, -1):
            p[i] = _toward(p[i + 1], p[i], d[i])
        p[0] = list(b)
        for i in range(len(d)):
            p[i + 1] = _toward(p[i], p[i + 1], d[i])
        iterations += 1
    return p, iterations


def timed(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` runs, in seconds."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _solve_each(joints: FloatArray, targets: FloatArray, method: str) -> list[Solution]:
    return [solve(joints, t, tolerance=TOLERANCE, max_iterations=MAX_ITERATIONS, method=method) for t in targets]


def _solve_batched(joints: FloatArray, targets: FloatArray, method: str, warm: bool) -> FramesSolution:
    return solve_frames(
        joints, targets, tolerance=TOLERANCE, max_iterations=MAX_ITERATIONS, method=method, warm_start=warm
    )


def table_1() -> None:
    rng = np.random.default_rng(SEED)
    joints = random_chain(rng, 10)
    reach = float(np.linalg.norm(np.diff(joints, axis=0), axis=1).sum())
    cases = {
        "reachable": random_targets(rng, 1000, 0.0, 0.999 * reach),
        "unreachable": random_targets(rng, 1000, 1.001 * reach, 2.0 * reach),
    }
    print(f"Table 1 shape: 10-joint chain, 1,000 targets each, tolerance {TOLERANCE}, max {MAX_ITERATIONS} it.")
    print(f"{'targets':<12}{'method':<8}{'mean it':>9}{'reached':>9}{'ms/solve':>10}{'ms/batched':>12}")
    for label, targets in cases.items():
        per_solve = {}
        for method in ("fabrik", "ccd"):
            results = _solve_each(joints, targets, method)
            per_solve[method] = timed(partial(_solve_each, joints, targets, method), repeat=1) / len(targets)
            batched = timed(partial(_solve_batched, joints, targets, method, False)) / len(targets)
            mean_it = statistics.fmean(r.iterations for r in results)
            reached = sum(r.reached for r in results) / len(results)
            print(
                f"{label:<12}{method:<8}{mean_it:>9.1f}{reached:>9.1%}"
                f"{per_solve[method] * 1e3:>10.3f}{batched * 1e3:>12.4f}"
            )
        print(f"{'':<12}CCD / FABRIK time per solve: {per_solve['ccd'] / per_solve['fabrik']:.1f}x")
    print("Paper (Table 1): FABRIK 15.5 iterations vs CCD 26.3; FABRIK about 10x faster than CCD.\n")


def _loop(algorithm: Callable[..., tuple[Any, int]], joints: Any, targets: Any, warm: bool) -> list[int]:
    """Run ``algorithm`` frame by frame; with ``warm`` each frame starts from the previous frame's result.
    Returns the iterations of each frame."""
    pose, counts = joints, []
    for target in targets:
        solved, iterations = algorithm(pose if warm else joints, target, TOLERANCE, MAX_ITERATIONS)
        counts.append(iterations)
        pose = solved
    return counts


def frames_benchmark() -> None:
    print(f"solve_frames on a smooth 1,000-frame path, tolerance {TOLERANCE} (us per frame; ratio = loop time /")
    print("vectorised time). Loops: Algorithm 1 frame by frame, numpy per joint, or plain Python floats.")
    print(
        f"{'bones':>5} {'warm':>5} {'vectorised':>11} {'loop numpy':>11} {'ratio':>6} "
        f"{'loop floats':>12} {'ratio':>6} {'it median':>9} {'it max':>7} {'loop it median':>14}"
    )
    for bones in (16, 64):
        joints = np.column_stack([np.zeros(bones + 1), np.zeros(bones + 1), np.arange(bones + 1.0)])
        targets = smooth_path(1000, float(bones))
        for warm in (False, True):
            result = _solve_batched(joints, targets, "fabrik", warm)
            vectorised = timed(partial(_solve_batched, joints, targets, "fabrik", warm))
            loop_counts = _loop(paper_numpy, joints, targets, warm)
            numpy_time = timed(partial(_loop, paper_numpy, joints, targets, warm), repeat=1)
            floats_time = timed(partial(_loop, paper_floats, joints.tolist(), targets.tolist(), warm), repeat=1)
            per = 1e6 / len(targets)
            print(
                f"{bones:>5} {warm!s:>5} {vectorised * per:>11.1f} {numpy_time * per:>11.1f} "
                f"{numpy_time / vectorised:>6.1f} {floats_time * per:>12.1f} "
                f"{floats_time / vectorised:>6.1f} "
                f"{np.median(result.iterations):>9.0f} {result.iterations.max():>7} "
                f"{np.median(loop_counts):>14.0f}"
            )


def _solve_loop(joints: FloatArray, targets: FloatArray, warm: bool) -> None:
    """The public ``solve`` frame by frame; with ``warm`` each frame starts from the frame before's result."""
    pose = joints
    for target in targets:
        pose = solve(pose if warm else joints, target, tolerance=TOLERANCE, max_iterations=MAX_ITERATIONS).joints


def solve_loop_benchmark() -> None:
    bones = 16
    joints = np.column_stack([np.zeros(bones + 1), np.zeros(bones + 1), np.arange(bones + 1.0)])
    targets = smooth_path(1000, float(bones))
    print(f"\nsolve_frames against a loop of solve() frame by frame, {bones} bones, 1,000 frames (ms per frame)")
    print(f"{'warm':>5} {'solve_frames':>13} {'loop of solve':>14} {'ratio':>6}")
    for warm in (False, True):
        vectorised = timed(partial(_solve_batched, joints, targets, "fabrik", warm))
        looped = timed(partial(_solve_loop, joints, targets, warm), repeat=1)
        per = 1e3 / len(targets)
        print(f"{warm!s:>5} {vectorised * per:>13.4f} {looped * per:>14.4f} {looped / vectorised:>6.1f}")


def cone_chain(bones: int, cone_deg: float, frames: int) -> tuple[ChainRest, JointLimits, FloatArray]:
    """``scripts/bench/bench_bake.py``'s cone chain without Blender: unit bones in a line, each rolled 0.7 radians
    from its parent, X and Z limited to +-``cone_deg``, Y locked; its target on a Lissajous loop about a point
    at 0.6 of its length. In the root bone's rest frame (Y along the chain), as ``solve_pose`` takes it."""
    roll = np.array([[math.cos(0.7), 0.0, math.sin(0.7)], [0.0, 1.0, 0.0], [-math.sin(0.7), 0.0, math.cos(0.7)]])
    rest_rotations = np.tile(roll, (bones, 1, 1))
    rest_rotations[0] = np.eye(3)
    rest = ChainRest(rest_rotations, np.tile([0.0, 1.0, 0.0], (bones, 1)))
    cone = math.radians(cone_deg)
    limits = JointLimits.of(bones, lock=[0, 1, 0], use_limit=[1, 0, 1], minimum=-cone, maximum=cone)
    t = 2 * np.pi * np.arange(frames) / frames
    # bench_bake's world loop (x, y, z) about (0, 0, 0.6 bones), seen from the root bone up world Z: (x, z, -y).
    x, y, z = 0.35 * bones * np.sin(2 * t), 0.3 * bones * np.cos(3 * t), bones * (0.6 + 0.15 * np.sin(t))
    return rest, limits, np.column_stack([x, z, -y])


def _pose_batched(rest: ChainRest, limits: JointLimits, targets: FloatArray) -> PoseSolution:
    start = np.tile([1.0, 0.0, 0.0, 0.0], (len(rest.offsets), 1))
    return solve_pose(rest, start, targets, limits=limits, tolerance=TOLERANCE, max_iterations=MAX_ITERATIONS)


def _pose_loop(rest: ChainRest, limits: JointLimits, targets: FloatArray) -> list[PoseSolution]:
    return [_pose_batched(rest, limits, target[None]) for target in targets]


def cone_benchmark() -> None:
    print("\nsolve_pose on 48 unit bones, cone joints (X and Z limited, Y locked), 120 frames, target on a loop")
    print(f"{'cone':>5} {'ms/frame':>9} {'reached':>8} {'it median':>9} {'it max':>7} ", end="")
    print(f"{'loop ms/frame':>14} {'ratio':>6}")
    for cone_deg in (25.0, 15.0):
        rest, limits, targets = cone_chain(48, cone_deg, 120)
        result = _pose_batched(rest, limits, targets)
        assert limits.excess(result.rotations).max() <= 1e-6, "a limit broken"
        vectorised = timed(partial(_pose_batched, rest, limits, targets))
        looped = timed(partial(_pose_loop, rest, limits, targets), repeat=1)
        per = 1e3 / len(targets)
        print(
            f"{cone_deg:>4.0f}° {vectorised * per:>9.3f} {np.mean(result.reached):>8.1%} "
            f"{np.median(result.iterations):>9.0f} {result.iterations.max():>7} {looped * per:>14.3f} "
            f"{looped / vectorised:>6.1f}"
        )


# -- Trees (solve_tree): the rigs of issue 16, and chains solved as one-effector trees against solve_frames.


def _blend_path(keys: FloatArray, frames: int) -> FloatArray:
    """Targets (frames, E, 3) moving smoothly through the key poses' targets ``keys`` (K, E, 3) in turn."""
    t = np.linspace(0.0, len(keys) - 1.0, frames)
    i = np.minimum(t.astype(int), len(keys) - 2)
    s = (t - i)[:, None, None]
    s = s * s * (3.0 - 2.0 * s)  # ease in and out of each key
    return np.asarray(keys[i] * (1.0 - s) + keys[i + 1] * s)


def tree_benchmark() -> None:
    """solve_tree on a Y, a hand and a 63-bone 3-level tree: 1,000 targets from uniformly random poses of the
    rig (cold start: each frame alone) and a 1,000-frame smooth path through 8 such poses (warm start)."""
    from fabrik_addon.solver import Tree, solve_tree
    from tests.solver.trees import hand, random_poses, three_level_tree, y_tree

    print(f"\nsolve_tree, tolerance {TOLERANCE}: targets from random poses of the rig itself (so all can be reached")
    print("at once). 'all in tol' = frames with every effector within tolerance.")
    columns = ("bones", 6), ("tips", 5), ("targets", 9), ("us/frame", 10), ("all in tol", 11), ("it median", 10)
    print(f"{'rig':<18}" + "".join(f"{label:>{width}}" for label, width in columns) + f"{'it max':>7}")
    for name, rig in (("Y (4 + 2x6)", y_tree), ("hand (2+1+5x3)", hand), ("3-level tree", three_level_tree)):
        tree, tips = rig()
        rng = np.random.default_rng(SEED)
        cases = {
            "random": (random_poses(tree, rng, 1000)[:, tips], False),
            "path": (_blend_path(random_poses(tree, rng, 8)[:, tips], 1000), True),
        }
        for label, (targets, warm) in cases.items():
            run = partial(solve_tree, tree, tips, targets, tolerance=TOLERANCE, warm_start=warm)
            result = run()
            seconds = timed(run)
            print(
                f"{name:<18}{tree.size - 1:>6}{len(tips):>5}{label:>9}{seconds * 1e6 / len(targets):>10.1f}"
                f"{result.all_reached.mean():>11.1%}{np.median(result.iterations):>10.0f}{result.iterations.max():>7}"
            )
    print("\nChains as one-effector trees: solve_tree against solve_frames on the smooth 1,000-frame path.")
    print(f"{'bones':>5} {'warm':>5} {'solve_frames us':>16} {'solve_tree us':>14} {'ratio':>6}")
    for bones in (4, 16, 64):
        joints = np.column_stack([np.zeros(bones + 1), np.zeros(bones + 1), np.arange(bones + 1.0)])
        targets = smooth_path(1000, float(bones))
        tree = Tree(np.arange(-1, bones), joints)
        for warm in (False, True):
            chain_time = timed(partial(_solve_batched, joints, targets, "fabrik", warm))
            tree_run = partial(solve_tree, tree, [bones], targets[:, None], tolerance=TOLERANCE, warm_start=warm)
            tree_time = timed(tree_run)
            per = 1e6 / len(targets)
            print(
                f"{bones:>5} {warm!s:>5} {chain_time * per:>16.1f} {tree_time * per:>14.1f} "
                f"{tree_time / chain_time:>6.2f}"
            )


def _posed_path(rest: TreeRest, tips: list[int], frames: int, limits: JointLimits) -> FloatArray:
    """Targets (frames, E, 3) where the tips are in smooth poses of the rig within its limits, as
    ``scripts/scenes/rigs.py``'s ``posed_targets`` keys them (each bone turned by up to 0.5 radians about its X and Z
    axes and 0.15 about Y), clamped to the limits."""
    phases = np.random.default_rng(7).uniform(0, 2 * np.pi, size=(len(rest.parents), 3))
    halves = 0.25 * np.sin(0.15 * np.arange(1, frames + 1)[:, None, None] + phases) * [1.0, 0.3, 1.0]
    turns = np.concatenate([np.ones((frames, len(rest.parents), 1)), halves], axis=2)
    turns /= np.linalg.norm(turns, axis=2, keepdims=True)
    _, tails, _ = tree_forward_kinematics(rest, limits.clamp(turns))
    return np.asarray(tails[:, tips])


def tree_pose_benchmark() -> None:
    """``solve_tree_pose`` against ``solve_tree`` on the rigs ``scripts/bench/bench_bake.py`` bakes as trees, 120
    frames from the rest pose with the bake's settings (500 iterations at most, warm start for the points),
    free; then ``solve_tree_pose`` alone with every joint a cone of 25 degrees."""
    from fabrik_addon.solver import solve_tree, solve_tree_pose, solver_tree
    from tests.solver.trees import branching_bones, hand_bones, y_bones

    print("\nTree rigs of bench_bake, 120 frames of targets from smooth poses within the limits, from rest;")
    print("solve_tree on the rig's joints against solve_tree_pose on its bones (ms per frame, every tip within")
    print(f"tolerance {TOLERANCE}, iterations median and largest)")
    print(f"{'rig':<14} {'limits':<8} {'points ms':>9} {'reached':>8} {'it':>4} {'max':>4} | ", end="")
    print(f"{'bones ms':>8} {'reached':>8} {'it':>4} {'max':>4} {'ratio':>6}")
    for name, rig in (("Y", y_bones), ("hand", hand_bones), ("60-bone tree", branching_bones)):
        rest, tips = rig()
        bones = len(rest.parents)
        start = np.tile([1.0, 0.0, 0.0, 0.0], (bones, 1))
        cones = JointLimits.of(bones, lock=[0, 1, 0], use_limit=[1, 0, 1], minimum=-0.44, maximum=0.44)
        for label, limits in (("free", JointLimits.free(bones)), ("cones", cones)):
            targets = _posed_path(rest, tips, 120, limits)
            bone_run = partial(
                solve_tree_pose, rest, start, tips, targets, limits=limits, tolerance=TOLERANCE, max_iterations=500
            )
            ours = bone_run()
            ours_ms = timed(bone_run) * 1e3 / len(targets)
            columns = f"{'-':>9} {'-':>8} {'-':>4} {'-':>4} | "
            ratio = "-"
            if label == "free":
                joints = solver_tree(rest, start, tips)
                point_run = partial(
                    solve_tree, joints.tree, joints.tail[tips], targets, tolerance=TOLERANCE, max_iterations=500
                )
                theirs = point_run()
                theirs_ms = timed(point_run) * 1e3 / len(targets)
                columns = (
                    f"{theirs_ms:>9.3f} {theirs.all_reached.mean():>8.1%} {np.median(theirs.iterations):>4.0f} "
                    f"{theirs.iterations.max():>4} | "
                )
                ratio = f"{theirs_ms / ours_ms:.1f}x"
            print(
                f"{name:<14} {label:<8} {columns}{ours_ms:>8.3f} {ours.all_reached.mean():>8.1%} "
                f"{np.median(ours.iterations):>4.0f} {ours.iterations.max():>4} {ratio:>6}"
            )


if __name__ == "__main__":
    table_1()
    frames_benchmark()
    solve_loop_benchmark()
    cone_benchmark()
    tree_benchmark()
    tree_pose_benchmark()
