"""Bake FABRIK into bone rotation keys: scene -> arrays -> solve -> rotations -> keyframes -> Blender's check.

``bake`` takes a ``BakeSettings`` of any number of chains and walks the frames once to read them all, once to
check them all; the keys of every chain are written all or nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from contextlib import ExitStack
from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ..settings import BakeSettings
from ..solver import FloatArray
from .adapter import PreparedChain, Solved, check_goals_apart, prepare_chain, solve_chain
from .chain import bone_path
from .channels import keyed_channels
from .checks import check_action_switch, check_channels_unlocked, check_writable, current_scene
from .evaluation import evaluation
from .keys import KeyWriter
from .overrides import animated_paths, check_blending
from .pose_state import PoseSnapshot
from .sampling import sample_inputs, sample_tips
from .tree_adapter import PreparedTree, prepare_tree, shared_groups, solve_tree_unit

#: Shares of the progress bar: reading the scene, then (after solving and writing) checking the keys.
_READ_SHARE = 0.45
_CHECK_SHARE = 0.45


@dataclass(frozen=True)
class BakeReport:
    """What a bake did to one chain, measured by Blender's own evaluation of the keys it wrote.

    Attributes
    ----------
    armature, tip_bone : str
    bones : tuple of str
        The chain, root first.
    frames : ndarray of int, shape (F,)
        The baked (keyed) frames.
    error : ndarray, shape (F,)
        Distance from the tip bone's tail to the target on each frame, in world units, as Blender evaluates
        the written keys.
    iterations : ndarray of int, shape (F,)
        Solver iterations per frame.
    unreachable_frames : tuple of int
        Frames where the solver could not bring the tip within tolerance of the target: the target was out
        of the chain's reach (or, rarely, the iterations ran out).
    off_target_frames : tuple of int
        Frames where ``error`` exceeds ``tolerance``, whatever the cause: the frames out of reach, and any
        frame where the scene undoes what the keys say. Empty when the tip is on target on every frame.
    tolerance : float
        The tolerance the bake was given, in world units.
    max_error : float
        The largest of ``error``.
    seconds : float
        Wall time of the whole bake.
    timings : dict of str to float
        Seconds spent reading the scene, solving, writing keys and checking them.
    action : bpy.types.Action
        The Action the keys were written into.
    """

    armature: str
    tip_bone: str
    bones: tuple[str, ...]
    frames: NDArray[np.int64]
    error: FloatArray
    iterations: NDArray[np.int64]
    unreachable_frames: tuple[int, ...]
    off_target_frames: tuple[int, ...]
    tolerance: float
    max_error: float
    seconds: float
    timings: dict[str, float]
    action: bpy.types.Action

    @property
    def on_target(self) -> bool:
        """Whether the tip is within tolerance of the target on every baked frame, as Blender evaluates it."""
        return not self.off_target_frames and not self.unreachable_frames


@dataclass(frozen=True)
class RigBakeReport:
    """What a bake of several chains did: one ``BakeReport`` per chain, in the order they were given.

    Attributes
    ----------
    chains : tuple of BakeReport
    max_error : float
        The largest error of any chain on any frame.
    seconds : float
        Wall time of the whole bake.
    timings : dict of str to float
        Seconds spent reading the scene, solving, writing keys and checking them, for all chains.
    evaluation : str
        Where the frames were evaluated: ``"sandbox"`` (a scene holding only what the chains need), or
        ``"scene: <why>"`` when the sandbox could not give the scene's answer (or was not asked for).
    """

    chains: tuple[BakeReport, ...]
    max_error: float
    seconds: float
    timings: dict[str, float]
    evaluation: str


def bake(
    settings: BakeSettings[bpy.types.Object],
    progress: Callable[[float], None] | None = None,
    *,
    sandbox: bool = True,
) -> RigBakeReport:
    """Key the rotations of every chain of ``settings`` so that its tip follows its target on every frame.

    Parameters
    ----------
    settings : BakeSettings
        The chains (on one or more armatures), frames, solver and Action.
    progress : callable, optional
        Called with the fraction done, from 0 to 1.
    sandbox : bool
        Evaluate frames in a sandbox scene holding only what the chains need (see ``evaluation``); False
        steps the whole scene (the same keys, slower in a heavy scene).

    Returns
    -------
    RigBakeReport

    Raises
    ------
    TypeError, ValueError
        For settings the scene cannot honour, with a message naming what is wrong. Nothing is written then:
        the bake either completes or leaves the file as it was.
    """
    return run(plan(settings), progress, sandbox=sandbox)


@dataclass(frozen=True)
class BakePlan:
    """A bake whose every check has passed: what ``run`` does, nothing written yet.

    Attributes
    ----------
    settings : BakeSettings
    scene : bpy.types.Scene
    frame_range : range
        The frames to key; keys are replaced from its first frame to its last (``frame_end``).
    chains : list of PreparedChain
    chain_bones : dict of armature to set of str
        The chains' bones on each armature.
    units : list of list of int
        The chains solved together: alone, or with the chains they share bones with (a tree).
    trees : dict of int to PreparedTree
        The trees among ``units``, by their position in it.
    """

    settings: BakeSettings[bpy.types.Object]
    scene: bpy.types.Scene
    frame_range: range
    chains: list[PreparedChain]
    chain_bones: dict[bpy.types.Object, set[str]]
    units: list[list[int]]
    trees: dict[int, PreparedTree]


def plan(
    settings: BakeSettings[bpy.types.Object], replaced: Collection[tuple[bpy.types.Object, str, str]] = ()
) -> BakePlan:
    """Check everything a bake of ``settings`` needs, writing nothing.

    ``replaced`` names IK constraints (armature, bone, constraint) that the keys will replace (the caller
    switches them off before ``run``; see ``ik_constraints``): they are not taken for constraints that would
    override the keys.

    Raises
    ------
    TypeError, ValueError
        Naming what is wrong.
    """
    scene = current_scene()
    frame_range = settings.frames.resolved(scene.frame_start, scene.frame_end)
    chains = []
    for chain in settings.chains:
        theirs = {(bone, name) for owner, bone, name in replaced if owner == chain.armature}
        chains.append(prepare_chain(chain, settings.solver, theirs))
    check_goals_apart(chains)
    chain_bones = _check_armatures(chains, settings.action_name)
    units = shared_groups(chains)
    _check_unlocked(chains, units, settings.action_name)
    trees = {
        k: prepare_tree([chains[i] for i in unit], settings.solver) for k, unit in enumerate(units) if len(unit) > 1
    }
    return BakePlan(settings, scene, frame_range, chains, chain_bones, units, trees)


def run(plan: BakePlan, progress: Callable[[float], None] | None = None, *, sandbox: bool = True) -> RigBakeReport:
    """Carry out a planned bake (see ``bake``): read, solve, write, check; all or nothing."""
    started = time.perf_counter()
    settings, scene, prepared, chain_bones = plan.settings, plan.scene, plan.chains, plan.chain_bones
    solver = settings.solver
    frames = np.array(plan.frame_range, dtype=np.int64)
    span = (float(plan.frame_range.start), float(plan.frame_range.stop - 1))
    report_progress = progress or (lambda fraction: None)

    def reading(i: int) -> None:
        report_progress(_READ_SHARE * (i + 1) / len(frames))

    def checking(i: int) -> None:
        report_progress(1.0 - _CHECK_SHARE + _CHECK_SHARE * (i + 1) / len(frames))

    timings: dict[str, float] = {}
    original_frame = (scene.frame_current, scene.frame_subframe)
    # Blender's evaluation of the new keys (and stepping the scene through frames) writes keyed values over
    # poses set by hand: each armature's pose is put back afterwards, but for the chains' bones when the
    # bake succeeds (they show their new keys). A sandbox's walks leave the scene's objects alone.
    snapshots = [PoseSnapshot.take(armature) for armature in chain_bones]
    goals = [goal for p in prepared for goal in (p.target, p.pole_target) if goal is not None]
    succeeded = False
    mode = ""
    try:
        with evaluation(scene, [*chain_bones, *goals], sandbox) as stepping:
            mode = stepping.mode
            clock = time.perf_counter()
            inputs = sample_inputs(stepping, frames, prepared, reading)
            timings["read scene"] = time.perf_counter() - clock

            clock = time.perf_counter()
            solved = [
                solve_tree_unit(plan.trees[k], [inputs[i] for i in unit], frames, solver)
                if k in plan.trees
                else solve_chain(prepared[unit[0]], inputs[unit[0]], frames, solver)
                for k, unit in enumerate(plan.units)
            ]
            timings["solve"] = time.perf_counter() - clock

            with ExitStack() as undo:  # from here on, a failure undoes every key of every armature
                writers = {a: undo.enter_context(KeyWriter(a, settings.action_name)) for a in chain_bones}
                clock = time.perf_counter()
                for unit, result in zip(plan.units, solved, strict=True):
                    _write(writers[prepared[unit[0]].chain.armature], frames, span, result)
                timings["write keys"] = time.perf_counter() - clock
                report_progress(1.0 - _CHECK_SHARE)

                # The goals were read already, and nothing the keys do moves them (``check_goals_apart``):
                # the check evaluates the armatures alone.
                stepping.keep_only(chain_bones)
                clock = time.perf_counter()
                tips = sample_tips(stepping, frames, [chain.chain for chain in prepared], checking)
                timings["check keys"] = time.perf_counter() - clock
        succeeded = True
    finally:
        if mode != "sandbox":
            scene.frame_set(original_frame[0], subframe=original_frame[1])
        _settle(snapshots, chain_bones if succeeded else {})

    seconds = time.perf_counter() - started
    found = {
        i: (solved[k].iterations[j], solved[k].reached[j])
        for k, unit in enumerate(plan.units)
        for j, i in enumerate(unit)
    }
    reports = tuple(
        _report(chain, frames, *found[i], tip, inputs[i].targets, settings.solver.tolerance, seconds, timings, writers)
        for i, (chain, tip) in enumerate(zip(prepared, tips, strict=True))
    )
    return RigBakeReport(reports, max(r.max_error for r in reports), seconds, timings, mode)


def _settle(snapshots: list[PoseSnapshot], keyed: dict[bpy.types.Object, set[str]]) -> None:
    """Put back the poses set by hand but on the ``keyed`` bones. Blender's evaluation writes animated values
    over them: where a bone other than the keyed ones is animated, the scene's frame is evaluated first, so
    that this happens now. Then every pose that differs from the snapshot (moved by that evaluation, by the
    walks stepping the scene itself, or by a failed bake's keys) is put back, and the frame evaluated again.
    Where no other bone is animated, nothing can write over them later, and the scene is left for Blender to
    evaluate when it next needs to (a heavy shot costs a bake nothing here)."""
    view_layer = bpy.context.view_layer
    assert view_layer is not None
    if any(_overwritten(snapshot.armature, keyed.get(snapshot.armature, ())) for snapshot in snapshots):
        view_layer.update()
    changed = [snapshot.restore(leave=keyed.get(snapshot.armature, ())) for snapshot in snapshots]
    if any(changed):
        view_layer.update()


def _overwritten(armature: bpy.types.Object, keyed: Collection[str]) -> bool:
    """Whether Blender's evaluation writes over the pose of a bone of ``armature`` outside ``keyed``: one of
    its channels is animated (by the Action, NLA strips or a driver)."""
    kept = tuple(bone_path(name) for name in keyed)
    return any(path.startswith("pose.bones[") and not path.startswith(kept) for path in animated_paths(armature))


def _check_armatures(prepared: list[PreparedChain], action_name: str | None) -> dict[bpy.types.Object, set[str]]:
    """Each armature's keys can go into the Action and play from there; returns the chains' bones of each."""
    chain_bones: dict[bpy.types.Object, set[str]] = {}
    for chain in prepared:
        chain_bones.setdefault(chain.chain.armature, set()).update(chain.chain.bone_names)
    if action_name is not None and len(chain_bones) > 1:
        raise ValueError(
            f"action_name names one Action, but the chains are on {len(chain_bones)} armatures: bake each on its own"
        )
    for armature, bones in chain_bones.items():
        check_writable(armature, action_name)
        check_action_switch(armature, action_name, bones)
        check_blending(armature)
    return chain_bones


def _check_unlocked(chains: list[PreparedChain], units: list[list[int]], action_name: str | None) -> None:
    """No F-curve the keys could go into is locked (``checks.check_channels_unlocked``): each unit's bones' rotations,
    and their Y scales where a chain of the unit stretches (a tree with stretch keys every bone's)."""
    keyed: dict[bpy.types.Object, set[tuple[str, int]]] = {}
    for unit in units:
        stretch = any(chains[i].settings.use_stretch for i in unit)
        for i in unit:
            channels = keyed.setdefault(chains[i].chain.armature, set())
            channels.update(c for pose_bone in chains[i].chain.pose_bones for c in keyed_channels(pose_bone, stretch))
    for armature, channels in keyed.items():
        check_channels_unlocked(armature, action_name, channels)


def _write(writer: KeyWriter, frames: NDArray[np.int64], span: tuple[float, float], solved: Solved) -> None:
    """Key each solved bone's rotation channels (and Y scale, with stretch) on ``frames``, replacing their keys
    within ``span``."""
    for k, (pose_bone, channels) in enumerate(zip(solved.pose_bones, solved.channels, strict=True)):
        columns = [*channels.T, *([] if solved.y_scales is None else [solved.y_scales[:, k]])]
        for (path, index), values in zip(keyed_channels(pose_bone, solved.y_scales is not None), columns, strict=True):
            writer.replace(path, index, pose_bone.name, frames, values, span)


def _report(
    prepared: PreparedChain,
    frames: NDArray[np.int64],
    iterations: NDArray[np.int64],
    reached: NDArray[np.bool_],
    tips: FloatArray,
    targets: FloatArray,
    tolerance: float,
    seconds: float,
    timings: dict[str, float],
    writers: dict[bpy.types.Object, KeyWriter],
) -> BakeReport:
    error = np.linalg.norm(tips - targets, axis=1)
    chain = prepared.chain
    return BakeReport(
        armature=chain.armature.name,
        tip_bone=chain.bone_names[-1],
        bones=chain.bone_names,
        frames=frames,
        error=error,
        iterations=iterations,
        unreachable_frames=tuple(int(f) for f in frames[~reached]),
        off_target_frames=tuple(int(f) for f in frames[~(error <= tolerance)]),
        tolerance=tolerance,
        max_error=float(error.max()),
        seconds=seconds,
        timings=dict(timings),
        action=writers[chain.armature].action,
    )
