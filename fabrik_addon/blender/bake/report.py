"""What a bake did, measured by Blender's own evaluation of the keys it wrote: a ``BakeReport`` per chain and a
``RigBakeReport`` for the whole bake."""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ...off_target import beyond_reach, off_target_causes, reach_span
from ...reduction import KeysReport
from ...solver import FloatArray
from ...words import SCENE_UNITS, Unit, causes_words, counted, frames_words, length_words, missed_words
from .inputs import Inputs
from .unit import PreparedChain


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
    off_target : dict of str to tuple of int
        The same frames by cause (``fabrik_addon.off_target``): ``"out of reach"`` (the target farther from
        the chain's root than its bones reach, or nearer than they fold), ``"soft reach"`` (eased short of it,
        as asked), ``"IK limits"`` (the solve could not get there within them), ``"not converged"`` (the
        iterations ran out), ``"the scene"`` (solved, but something the bake does not own plays the keys
        elsewhere). Only causes with frames.
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
    tips : ndarray, shape (F, 3)
        Where the tip bone's tail is on each frame, in world space, as Blender evaluates the written keys.
    keys : KeysReport or None
        With a ``key_error``, the chain's bones' keys kept and how far Blender's evaluation of them puts the
        bones from the solved pose; None where every frame is keyed.
    length_unit : (str, float)
        The unit its ``repr`` gives lengths in, as its symbol and the world units in one: the scene's
        (``blender.units.named_unit``: millimetres in a scene of metres).
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
    tips: FloatArray
    off_target: dict[str, tuple[int, ...]]
    keys: KeysReport | None = None
    length_unit: Unit = SCENE_UNITS

    def __repr__(self) -> str:
        return (
            f"BakeReport({self.tip_bone!r} of {self.armature!r}: {counted(len(self.bones), 'bone')}, "
            f"{frames_words(self.frames.tolist())}, max error {length_words(self.max_error, self.length_unit)}, "
            f"{missed_words(self.off_target, len(self.off_target_frames))}{_keys(self.keys)}; {self.seconds:.2f} s)"
        )

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
    keys : KeysReport or None
        With a ``key_error``, every keyed bone's keys kept (the chains' and any a planting keys) and how far
        Blender's evaluation of them puts the bones from the solved pose; None where every frame is keyed.
    """

    chains: tuple[BakeReport, ...]
    max_error: float
    seconds: float
    timings: dict[str, float]
    evaluation: str
    keys: KeysReport | None = None

    def __repr__(self) -> str:
        unit = self.chains[0].length_unit if self.chains else SCENE_UNITS
        missed = [chain for chain in self.chains if chain.off_target_frames]
        frames = sum(len(chain.off_target_frames) for chain in missed)
        verdict = (
            missed_words({})
            if not missed
            else (
                f"off target on {counted(frames, 'frame')}{causes_words(c.off_target for c in missed)} in "
                f"{counted(len(missed), 'chain')}"
            )
        )
        return (
            f"RigBakeReport({counted(len(self.chains), 'chain')} ({', '.join(c.tip_bone for c in self.chains)}): "
            f"max error {length_words(self.max_error, unit)}, {verdict}{_keys(self.keys)}; {self.seconds:.2f} s)"
        )


def _keys(keys: KeysReport | None) -> str:
    """``", kept 8% of the keys (...)"``, with a ``key_error``; else nothing."""
    return "" if keys is None else f", {keys.words()}"


def chain_report(
    prepared: PreparedChain,
    frames: NDArray[np.int64],
    iterations: NDArray[np.int64],
    reached: NDArray[np.bool_],
    tips: FloatArray,
    inputs: Inputs,
    tolerance: float,
    seconds: float,
    timings: dict[str, float],
    action: bpy.types.Action,
    keys: KeysReport | None = None,
    length_unit: Unit = SCENE_UNITS,
) -> BakeReport:
    """The report of one chain of a bake: what it solved (``iterations``, ``reached``) and where Blender put
    its tip (``tips``) against its target (``inputs.targets``), on every frame, and why it missed where it did
    (``off_target_causes``: the chain hangs from ``inputs.root_frames``); its lengths shown in ``length_unit``."""
    targets = inputs.targets
    error = np.linalg.norm(tips - targets, axis=1)
    chain = prepared.chain
    settings = prepared.settings
    roots = inputs.root_frames[:, :3, 3]
    scales = np.linalg.norm(inputs.root_frames[:, :3, :3], axis=1).mean(axis=1)  # uniform: checked
    near, far = reach_span(chain.rest.lengths)
    distance = np.linalg.norm(targets - roots, axis=1)
    stretches = settings.use_stretch and bool((chain.limits.stretch > 0.0).any())
    out_of_reach = np.zeros(len(frames), dtype=bool)
    if not stretches:
        out_of_reach = beyond_reach(roots, targets, (near, far), scales)
    eased = np.zeros(len(frames), dtype=bool)
    if settings.soft_reach > 0.0 and not stretches:
        eased = distance > scales * far - settings.soft_reach
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
        action=action,
        tips=tips,
        off_target=off_target_causes(
            frames.tolist(),
            tips,
            targets,
            tolerance=tolerance,
            out_of_reach=out_of_reach,
            eased=eased,
            unsolved=~reached,
            limited=chain.limits.any,
        ),
        keys=keys,
        length_unit=length_unit,
    )
