"""Bake FABRIK into bone rotation keys: scene -> arrays -> solve -> rotations -> keyframes -> Blender's check.

``bake`` takes a ``BakeSettings`` of any number of chains, plans it (``plan``: every check), then walks the
frames once to read them all, solves each unit, writes the keys of every chain all or nothing, and walks the
frames once more to check them all with Blender's own evaluation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import bpy
import numpy as np
from numpy.typing import NDArray

from ...settings import BakeSettings
from ...solver import FloatArray
from ..interrupts import put_back
from ..layer import LayerWriter, below_the_layer, played_below
from ..reduction import Pins, Thinning, thin_held, tracked_bones
from ..rig import ArmatureChain, KeyWriter, Node, PoseSnapshot, animated_paths, bone_path, rotation_property
from .checks import current_scene
from .inputs import Inputs
from .order import solve_in_order
from .plan import BakePlan, plan
from .read import BoneTrack, ChannelTrack, Track, sample_inputs, sample_tips
from .report import RigBakeReport, rig_report
from .sandbox import Evaluation, evaluating, only_what_is_read
from .unit import Solved

#: Shares of the progress bar: reading the scene, then (after solving and writing) checking the keys.
_READ_SHARE = 0.45
_CHECK_SHARE = 0.45

#: Writes keys of a bake's own besides the chains' (``Adjusted.write``): given each armature's writer, the frames
#: and the span of frames whose keys are replaced.
ExtraKeys = Callable[[Mapping[bpy.types.Object, KeyWriter], NDArray[np.int64], tuple[float, float]], None]


#: Writes what goes with a bake's keys (a chain list's summaries), given the report before the bake returns, and
#: what undoes each change, to give before making it: if it fails, or Ctrl+C lands before the bake returns, every
#: key and every change it made is undone.
Finish = Callable[[RigBakeReport, Callable[[Callable[[], None]], None]], None]


@dataclass(frozen=True)
class Adjusted:
    """What an ``Adjust`` makes of what the bake read.

    Attributes
    ----------
    inputs : list of Inputs
        Per chain, what it is solved from and toward (the goals the report measures against).
    write : callable, optional
        Keys of its own, written with the chains' (all or nothing): see ``ExtraKeys``.
    keyed : dict of armature to set of str
        The bones ``write`` keys, which show their new keys after the bake (as the chains' bones do).
    pins : Pins
        Balls of feet to keep within the bake's ``key_error`` of their pins where keys are thinned.
    """

    inputs: list[Inputs]
    write: ExtraKeys | None = None
    keyed: Mapping[bpy.types.Object, set[str]] = field(default_factory=dict)
    pins: Pins = field(default_factory=dict)


class Adjust(Protocol):
    """A change to a bake between reading the frames and solving them (planting feet is one): ``tracks`` are
    bones it needs read on every frame besides the chains, filled by the read walk, and ``channels`` the
    channels (data path, index) of each armature its own keys may go into; then it is called with every
    chain's inputs and the frames, and returns what to solve."""

    @property
    def tracks(self) -> Sequence[BoneTrack]: ...
    @property
    def channels(self) -> Mapping[bpy.types.Object, Collection[tuple[str, int]]]: ...

    def __call__(self, inputs: list[Inputs], frames: NDArray[np.int64]) -> Adjusted: ...


def bake(
    settings: BakeSettings[bpy.types.Object],
    progress: Callable[[float], None] | None = None,
    *,
    sandbox: bool = True,
    finish: Finish | None = None,
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
    finish : Finish, optional
        Writes what goes with the keys, given the report before the bake returns: all or nothing with them.

    Returns
    -------
    RigBakeReport

    Raises
    ------
    TypeError, ValueError
        For settings the scene cannot honour, with a message naming what is wrong. Nothing is written then:
        the bake either completes or leaves the file as it was.
    """
    return carry_out(plan(settings), progress, sandbox=sandbox, finish=finish)


def carry_out(
    plan: BakePlan,
    progress: Callable[[float], None] | None = None,
    *,
    sandbox: bool = True,
    adjust: Adjust | None = None,
    finish: Finish | None = None,
) -> RigBakeReport:
    """Carry out a planned bake (see ``bake``): read, solve, write, check; all or nothing. ``adjust`` changes
    what was read before it is solved, and may key bones of its own with the chains'; ``finish`` writes what goes
    with the keys (see ``Finish``)."""
    started = time.perf_counter()
    settings, scene, prepared, chain_bones = plan.settings, plan.scene, plan.chains, plan.chain_bones
    solver = settings.solver
    frames = np.array(plan.frames, dtype=np.int64)
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
    succeeded = False
    keyed: dict[bpy.types.Object, set[str]] = {}  # the bones that show their new keys, once they are written
    mode = ""
    try:
        with ExitStack() as undo:  # a failure before the report is made undoes every key of every armature
            channels = _channels(plan, adjust)
            layered = settings.output == "layer"
            below = [ChannelTrack.empty(a, p, len(frames)) for a, paths in _paths(channels).items() for p in paths]
            below = below if layered else []
            thinned = {a: _tracks(a, channels[a], len(frames)) for a in channels} if settings.key_error else {}
            tracks: list[Track] = [*(() if adjust is None else adjust.tracks), *below]
            tracks += [track for read in thinned.values() for track in read.values()]
            written = ExitStack()  # the writers: rolled back inside the walk if it fails, else by ``undo``
            undo.push(written)
            with _walks(plan, sandbox, tracks) as evaluation, _rolled_back_here(written):
                mode = evaluation.mode
                clock = time.perf_counter()
                with ExitStack() as muted:  # a layer's chains read what plays below the layer
                    for armature, baked in channels.items() if layered else ():
                        muted.enter_context(below_the_layer(armature, baked))
                    inputs = sample_inputs(evaluation, frames, prepared, reading, tracks)
                below_values = _below_values(below) if layered else {}
                timings["read scene"] = time.perf_counter() - clock
                adjusted = Adjusted(inputs) if adjust is None else adjust(inputs, frames)
                inputs = adjusted.inputs

                clock = time.perf_counter()
                solved = solve_in_order(plan.units, plan.order, inputs, frames, solver)
                timings["solve"] = time.perf_counter() - clock

                writers = {
                    a: written.enter_context(_writer(a, settings, below_values.get(a, {}), span)) for a in chain_bones
                }
                clock = time.perf_counter()
                for writer in writers.values() if thinned else ():
                    writer.hold()  # the keys are thinned before they are written
                for unit, result in zip(plan.units, solved, strict=True):
                    _write(writers[unit.armature], frames, span, result)
                if adjusted.write is not None:
                    adjusted.write(writers, frames, span)
                thinning = thin_held(writers, frames, settings.key_error, thinned, adjusted.pins) if thinned else None
                for writer in writers.values():
                    writer.finish()
                keyed = {armature: set(bones) for armature, bones in chain_bones.items()}
                for armature, bones in adjusted.keyed.items():
                    keyed.setdefault(armature, set()).update(bones)
                timings["write keys"] = time.perf_counter() - clock
                report_progress(1.0 - _CHECK_SHARE)

                # The goals were read already, and nothing the keys do moves them (``check_goals_apart``):
                # the check evaluates the armatures alone.
                evaluation.keep_only(chain_bones)
                clock = time.perf_counter()
                tips = _check(evaluation, frames, [chain.chain for chain in prepared], checking, thinning)
                timings["check keys"] = time.perf_counter() - clock
            actions = {armature: writer.action for armature, writer in writers.items()}
            seconds = time.perf_counter() - started
            report = rig_report(plan, solved, tips, inputs, actions, thinning, (seconds, timings, mode))
            if finish is not None:
                undone: list[Callable[[], None]] = []  # what ``finish`` did, undone if the bake fails after all
                undo.push(lambda kind, *_: put_back(undone) if kind is not None else None)
                finish(report, undone.append)
            undo.pop_all()  # done: from here on, whatever lands keeps the keys (an exit that ran would undo them)
            succeeded = True
    finally:  # even if Ctrl+C lands meanwhile
        put_back(
            [
                lambda: _settle(snapshots, keyed if succeeded else {}),
                lambda: None if mode == "sandbox" else scene.frame_set(original_frame[0], subframe=original_frame[1]),
            ]
        )
    return report


def read_frames(
    plan: BakePlan, progress: Callable[[float], None] | None = None, *, sandbox: bool = True
) -> list[Inputs]:
    """What a bake of ``plan`` would read on its frames (``carry_out``'s first walk), writing nothing: each
    chain's inputs. The scene is left on its frame, every pose as it was."""
    frames = np.array(plan.frame_range, dtype=np.int64)
    with _left_as_it_was(plan.scene, plan.chain_bones) as evaluated, _walks(plan, sandbox) as evaluation:
        evaluated.append(evaluation.mode)
        return sample_inputs(evaluation, frames, plan.chains, _fractions(progress, len(frames)))


def read_bones(
    armature: bpy.types.Object,
    bones: Sequence[str],
    frames: Sequence[int],
    progress: Callable[[float], None] | None = None,
    *,
    sandbox: bool = True,
) -> list[BoneTrack]:
    """Where Blender puts each of ``bones`` of ``armature`` on each of ``frames``, as a walk like a bake's reads it
    (in a sandbox where it can, evaluating only the animation those bones follow), writing nothing: a
    ``BoneTrack`` per bone. The scene is left on its frame, every pose as it was."""
    tracks = [BoneTrack.empty(armature, bone, len(frames)) for bone in bones]
    scene = current_scene()
    reads = [Node(armature, bone) for bone in bones]
    with (
        _left_as_it_was(scene, [armature]) as evaluated,
        evaluating(scene, [armature], sandbox) as evaluation,
        only_what_is_read(evaluation, reads),
    ):
        evaluated.append(evaluation.mode)
        order = np.array(frames, dtype=np.int64)
        sample_inputs(evaluation, order, [], _fractions(progress, len(order)), tracks)
    return tracks


@contextmanager
def _rolled_back_here(stack: ExitStack) -> Iterator[None]:
    """Unwind ``stack`` (the writers, rolling their keys back) where the block fails, before what encloses it
    exits (the frame walk's sandbox goes after the keys, as they came); kept where it succeeds."""
    try:
        yield
    except BaseException as error:
        stack.__exit__(type(error), error, error.__traceback__)
        raise


def _fractions(progress: Callable[[float], None] | None, frames: int) -> Callable[[int], None]:
    """A walk's progress (the index of the frame read) as the fraction done."""
    return lambda i: None if progress is None else progress((i + 1) / frames)


@contextmanager
def _left_as_it_was(scene: bpy.types.Scene, armatures: Iterable[bpy.types.Object]) -> Iterator[list[str]]:
    """Meanwhile a walk reads frames without writing: afterwards the scene is on its frame again (where the walk
    stepped the scene itself, its evaluation's mode put in the list yielded) and every pose as it was."""
    original_frame = (scene.frame_current, scene.frame_subframe)
    snapshots = [PoseSnapshot.take(armature) for armature in armatures]
    modes: list[str] = []
    try:
        yield modes
    finally:
        if modes and modes[0] != "sandbox":
            scene.frame_set(original_frame[0], subframe=original_frame[1])
        _settle(snapshots, {})


@contextmanager
def _walks(plan: BakePlan, sandbox: bool, tracks: Sequence[Track] = ()) -> Iterator[Evaluation]:
    """Where a bake's walks step (``sandbox.evaluating``): the chains' armatures and goals, Blender evaluating
    only the animation of what the walks read (the chains' bones, their goals, the bones ``tracks`` follow)."""
    nodes = [Node(armature, bone) for armature, bones in plan.chain_bones.items() for bone in sorted(bones)]
    goals = []
    for chain in plan.chains:
        for goal, bone in ((chain.target, chain.target_bone), (chain.pole_target, chain.pole_bone)):
            if goal is not None:
                goals.append(goal)
                nodes.append(Node(goal, bone if goal.type == "ARMATURE" else ""))
    nodes += [Node(track.armature, track.bone) for track in tracks]
    with (
        evaluating(plan.scene, [*plan.chain_bones, *goals], sandbox) as evaluation,
        only_what_is_read(evaluation, nodes),
    ):
        yield evaluation


def _tracks(armature: bpy.types.Object, channels: Collection[tuple[str, int]], frames: int) -> dict[str, BoneTrack]:
    """What the read walk reads of the armature's keyed bones for their keys to be thinned
    (``reduction.tracked_bones``)."""
    return {bone: BoneTrack.empty(armature, bone, frames) for bone in tracked_bones(armature, sorted(channels))}


def _check(
    evaluation: Evaluation,
    frames: NDArray[np.int64],
    chains: Sequence[ArmatureChain],
    progress: Callable[[int], None],
    thinning: Thinning | None,
) -> list[FloatArray]:
    """The check walk: each chain's tip on every frame as Blender evaluates the keys, and the thinned keys' bones
    (walked again once they are keyed where Blender put a point out of bounds: ``Thinning.repair``)."""
    tips = sample_tips(evaluation, frames, chains, progress, () if thinning is None else thinning.tracks)
    if thinning is not None and thinning.repair():
        tips = sample_tips(evaluation, frames, chains, None, thinning.tracks)
    return tips


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


def _write(writer: KeyWriter, frames: NDArray[np.int64], span: tuple[float, float], solved: Solved) -> None:
    """Key each solved bone's rotation channels (and Y scale, with stretch) on ``frames``, replacing their keys
    within ``span``."""
    for k, (pose_bone, channels) in enumerate(zip(solved.pose_bones, solved.channels, strict=True)):
        rotation = pose_bone.path_from_id(rotation_property(pose_bone.rotation_mode))
        writer.replace_channels(rotation, range(channels.shape[1]), pose_bone.name, frames, channels, span)
        if solved.y_scales is not None:
            scale = pose_bone.path_from_id("scale")
            writer.replace_channels(scale, [1], pose_bone.name, frames, solved.y_scales[:, k : k + 1], span)


def _writer(
    armature: bpy.types.Object,
    settings: BakeSettings[bpy.types.Object],
    below: Mapping[str, FloatArray],
    span: tuple[float, float],
) -> KeyWriter:
    """Where the keys of ``armature`` go: its Action, or its FABRIK layer over what plays ``below`` it (data path
    to values on the bake's frames, the first and last of them ``span``), by the bake's ``output``."""
    if settings.output == "layer":
        return LayerWriter(armature, below=below, frames=span)
    return KeyWriter(armature, settings.action_name)


def _channels(plan: BakePlan, adjust: Adjust | None) -> dict[bpy.types.Object, set[tuple[str, int]]]:
    """The channels (data path, index) a bake keys on each armature: the chains' and the adjustment's own."""
    channels = {armature: set(keyed) for armature, keyed in plan.channels.items()}
    for armature, keyed in ({} if adjust is None else adjust.channels).items():
        channels.setdefault(armature, set()).update(keyed)
    return channels


def _paths(channels: Mapping[bpy.types.Object, Collection[tuple[str, int]]]) -> dict[bpy.types.Object, list[str]]:
    """The data paths of each armature's channels, each once, in a steady order."""
    return {armature: sorted({path for path, _ in keyed}) for armature, keyed in channels.items()}


def _below_values(tracks: Sequence[ChannelTrack]) -> dict[bpy.types.Object, dict[str, FloatArray]]:
    """What plays below each armature's layer on each channel the bake keys (``tracks``, read with the layer's
    channels muted), as Combine blends over it (``played_below``)."""
    read: dict[bpy.types.Object, dict[str, NDArray[np.float32]]] = {}
    for track in tracks:
        read.setdefault(track.armature, {})[track.data_path] = track.values
    return {armature: played_below(armature, values) for armature, values in read.items()}
