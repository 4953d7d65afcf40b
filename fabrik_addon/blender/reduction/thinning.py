"""A bake's keys thinned within its ``key_error``: the keys its writers held (``KeyWriter.hold``), armature by
armature, posed as Blender plays them (``model``), thinned (``fabrik_addon.reduction.thin_keys``) and written as
Bezier keys; then measured by the bake's check walk (``tracks``, ``measured``), and where Blender's evaluation
puts a point out of bounds all the same, keyed there (``repair``) before the check walks again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import bpy
import numpy as np
from numpy.typing import NDArray

from ...reduction import KeysReport, Thinned, basis, keyed_curve, keys_report, points_of, posed, thin_keys
from ...solver import FloatArray
from ...words import SCENE_UNITS, Unit
from ..rig import Held, KeyWriter, bone_in_path
from ..units import scene_length
from .bezier import write_kept
from .measure import PoseTrack, measured_points, pose_tracks
from .model import BoneModel, BoneRows, Keyed, Plays, bone_model, tracked

#: The share of the error allowed left to float32: Blender keeps keys and poses bones in float32, so what it
#: plays may differ from the prediction by a few units in the last place of the points' coordinates.
_FLOAT32_SHARE = 0.25
#: A float32 rounding of a world coordinate, relative to its size (a few units in the last place, 2**-24).
_FLOAT32_ROUNDING = 1e-6

#: Per armature, per foot bone: the frames its ball is pinned on (F,) and the pins (F, 3), in world space.
Pins = Mapping[bpy.types.Object, Mapping[str, tuple[NDArray[np.bool_], FloatArray]]]


def tracked_bones(armature: bpy.types.Object, channels: Sequence[tuple[str, int]]) -> list[str]:
    """The bones of ``armature`` a bake keying ``channels`` (data path, index) must read on every frame to thin
    its keys (``model.tracked``)."""
    keyed = {bone_in_path(path) for path, _ in channels} - {""}
    return tracked(armature, keyed)


@dataclass
class _Armature:
    """One armature's keys, thinned: its model, the held keys each thinned property stands for, the pose's
    points, the keys kept and what the check walk reads."""

    model: BoneModel
    writer: KeyWriter
    held: list[Held]
    sources: list[Held]  # the held keys of each thinned property, in ``model.sources``' order
    reference: FloatArray  # (F, P, 3): where a key on every frame plays the points (the keys' pose, as Blender has it)
    rounding: FloatArray  # (F, P): how far that is from the pose the keys stand for (a layer's rounding)
    keys: list[NDArray[np.int64]]  # each thinned property's kept rows
    controls: list[FloatArray]  # (K - 1, 2, k): each thinned property's segments' control values
    tracks: list[PoseTrack]


@dataclass
class Thinning:
    """The thinned keys of a bake, armature by armature.

    Attributes
    ----------
    frames : ndarray of int, shape (F,)
    key_error : float
    """

    frames: NDArray[np.int64]
    key_error: float
    armatures: list[_Armature] = field(default_factory=list)
    _measured: dict[bpy.types.Object, FloatArray] | None = None
    _reports: dict[tuple[frozenset[str], ...], KeysReport] = field(default_factory=dict)

    @property
    def tracks(self) -> list[PoseTrack]:
        """What the bake's check walk reads for ``measured``."""
        return [track for armature in self.armatures for track in armature.tracks]

    def read_from(self, walked: Mapping[bpy.types.Object, Mapping[str, BoneRows]]) -> None:
        """Fill ``tracks`` from what a walk read of the keyed bones (instead of the bake's check walk)."""
        for track in self.tracks:
            read = walked[track.armature]
            track.world[:] = next(iter(read.values())).world
            for k, bone in enumerate(track.bones):
                track.rows(k)[:] = read[bone].matrix
        self._measured = None
        self._reports.clear()

    def measured(self) -> dict[bpy.types.Object, FloatArray]:
        """Per armature, each point's distance (F, P) from the pose on every frame, as the check walk read it
        (last: ``repair`` keys again, and the check walks again)."""
        if self._measured is None:
            self._measured = {
                a.model.armature: _apart(measured_points(a.model.skeleton, a.tracks), a.reference)
                for a in self.armatures
            }
        return self._measured

    def repair(self) -> bool:
        """Key every frame the check walk found a point out of bounds on, for that point's bone and every bone
        above it, and write those keys again; whether there was any (the check must walk again)."""
        repaired = False
        for armature, errors in zip(self.armatures, self.measured().values(), strict=True):
            rows, columns = np.nonzero(errors > self.key_error)
            if not rows.size:
                continue
            skeleton = armature.model.skeleton
            owners = skeleton.point_nodes[columns]
            for a, (bone, _) in enumerate(armature.model.sources):
                node = armature.model.bones.index(bone)
                hit = np.isin(owners, [k for k in range(len(skeleton.parents)) if node in _above(skeleton.parents, k)])
                if hit.any():
                    kept = armature.keys[a] = np.union1d(armature.keys[a], rows[hit])
                    times = self.frames.astype(np.float64)
                    armature.controls[a] = keyed_curve(times, kept, armature.sources[a].values)[1]
                    _write(armature, a, self.frames)
                    repaired = True
        if repaired:
            self._measured = None
            self._reports.clear()
        return repaired

    def report(self, bones: Mapping[bpy.types.Object, set[str]] | None = None, unit: Unit = SCENE_UNITS) -> KeysReport:
        """The report of the keys kept (of ``bones`` only, by armature, if given) and of Blender's evaluation of
        them, as the check walk read it (worked out once for the same bones); its lengths shown in ``unit`` (the
        scene's)."""
        picks = tuple(
            frozenset(a.model.bones)
            if bones is None
            else frozenset(bones.get(a.model.armature, set())) & frozenset(a.model.bones)
            for a in self.armatures
        )
        if picks not in self._reports:
            self._reports[picks] = self._report(bones)
        return replace(self._reports[picks], length_unit=unit)

    def _report(self, bones: Mapping[bpy.types.Object, set[str]] | None) -> KeysReport:
        errors, keys, dense, rounding = [], 0, 0, 0.0
        for armature, measured in zip(self.armatures, self.measured().values(), strict=True):
            model = armature.model
            picked = set(model.bones) if bones is None else bones.get(model.armature, set())
            if picked >= set(model.bones):  # every bone: no copy
                errors.append(measured)
                rounding = max(rounding, float(armature.rounding.max(initial=0.0)))
            else:
                nodes = [k for k, bone in enumerate(model.bones) if bone in picked]
                columns = np.isin(model.skeleton.point_nodes, nodes)
                errors.append(measured[:, columns])
                rounding = max(rounding, float(armature.rounding[:, columns].max(initial=0.0)))
            for (bone, _), kept, held in zip(model.sources, armature.keys, armature.sources, strict=True):
                if bone in picked:
                    keys += len(kept) * len(held.indices)
                    dense += len(self.frames) * len(held.indices)
            thinned = {id(held) for held in armature.sources}
            for held in armature.held:
                if id(held) not in thinned and bone_in_path(held.data_path) in picked:
                    keys += held.values.size
                    dense += held.values.size
        together = errors[0] if len(errors) == 1 else np.concatenate(errors, axis=1)
        return keys_report(self.frames, together, keys, dense, self.key_error, rounding)


def thin_held(
    writers: Mapping[bpy.types.Object, KeyWriter],
    frames: NDArray[np.int64],
    key_error: float,
    read: Mapping[bpy.types.Object, Mapping[str, BoneRows]],
    pins: Pins | None = None,
    posed: Mapping[bpy.types.Object, Mapping[str, FloatArray]] | None = None,
) -> Thinning:
    """Thin the keys each writer holds (and stop it holding), and write them.

    Parameters
    ----------
    writers : mapping of armature to KeyWriter
        Each holding the bake's keys (``KeyWriter.hold``).
    frames : ndarray of int, shape (F,)
        The bake's frames, which every held key is on.
    key_error : float
        World units (> 0).
    read : mapping of armature to mapping of str to BoneRows
        What the bake's read walk read of the bones ``tracked_bones`` names.
    pins : Pins, optional
        Balls of feet that must stay within ``key_error`` of their pins on the frames they are pinned.
    posed : mapping of armature to mapping of str to ndarray, shape (F, 4, 4), optional
        Keys that exist: where Blender poses each keyed bone (in world space) as they play, the pose the thinned
        keys keep to, instead of the one the held keys stand for.

    Raises
    ------
    ValueError
        With ``posed``, where a bone is posed farther from where its keys put it than half of ``key_error``
        (something besides them moves it): nothing is written then.
    """
    thinning = Thinning(frames, key_error)
    for armature, writer in writers.items():
        held = writer.release()
        keyed: dict[str, list[Keyed]] = {}
        by_source: dict[tuple[str, str], Held] = {}
        for record in held:
            bone, prop = bone_in_path(record.data_path), record.data_path.rpartition(".")[2]
            every = np.arange(len(frames))
            solved = writer.played(record, record.values, every, exact=True)
            keyed.setdefault(bone, []).append(
                Keyed(prop, record.indices, record.values, _plays(writer, record), solved)
            )
            by_source[(bone, prop)] = record
        model = bone_model(armature, keyed, read.get(armature, {}), len(frames))
        posed_points = None
        if posed is not None:  # keys that exist: the pose Blender gives them is the pose
            posed_points = points_of(model.skeleton, np.stack([posed[armature][b] for b in model.bones], axis=1))
        thinned, reference, rounding = _thin_model(
            model, frames, key_error, (pins or {}).get(armature, {}), posed_points
        )
        sources = [by_source[(bone, source.prop)] for bone, source in model.sources]
        tracks = pose_tracks(armature, model.bones, len(frames))
        kept, controls = list(thinned.keys), list(thinned.controls)
        done = _Armature(model, writer, held, sources, reference, rounding, kept, controls, tracks)
        for a in range(len(sources)):
            _write(done, a, frames)
        for record in held:
            if record not in sources:  # keys that pose nothing thinned: as given
                for j, index in enumerate(record.indices):
                    writer.replace(
                        record.data_path, index, record.group, record.frames, record.values[:, j], record.span
                    )
        thinning.armatures.append(done)
    return thinning


def _thin_model(
    model: BoneModel,
    frames: NDArray[np.int64],
    key_error: float,
    pins: Mapping[str, tuple[NDArray[np.bool_], FloatArray]],
    posed: FloatArray | None,
) -> tuple[Thinned, FloatArray, FloatArray]:
    """Thin the model's keys: the keys kept, where a key on every frame plays the points (F, P, 3), the reference
    the kept keys are measured from, and how far that is from the pose the keys stand for (F, P: a layer's
    rounding). ``posed``: where Blender poses the points of keys that exist (F, P, 3), the pose they keep to.

    Raises
    ------
    ValueError
        With ``posed``, where a bone is posed farther from where its keys put it than half of ``key_error``.
    """
    times = frames.astype(np.float64)
    playing = [[c.values for c in channels] for channels in model.nodes]
    exact = all(
        a is b for node, values in zip(model.solved, playing, strict=True) for a, b in zip(node, values, strict=True)
    )
    if exact and posed is None:  # the keys play the pose they stand for: ``thin_keys`` poses it once for both

        def bound(points: FloatArray) -> FloatArray:
            return _bound(model, points, key_error, pins)

        thinned = thin_keys(times, model.skeleton, model.nodes, bound)
        reference = thinned.reference if thinned.reference is not None else _points(model, playing)
        return thinned, reference, np.zeros(reference.shape[:2])
    played = _points(model, playing)
    solved = played if exact else _points(model, model.solved)
    reference = played
    if posed is not None:
        _check_posed(model, played, posed, frames, key_error)
        reference = solved = posed
    thinned = thin_keys(times, model.skeleton, model.nodes, _bound(model, solved, key_error, pins))
    return thinned, reference, np.linalg.norm(played - solved, axis=-1)


def _check_posed(
    model: BoneModel, played: FloatArray, posed: FloatArray, frames: NDArray[np.int64], key_error: float
) -> None:
    """Where Blender poses the keyed bones (``posed``'s points) is where their keys put them (``played``), to half
    of ``key_error``: else a constraint, a driver or NLA strips move a bone too, and thinning its keys would not
    keep its pose.

    Raises
    ------
    ValueError
        Naming the bone, the frame and the distance.
    """
    apart = np.linalg.norm(played - posed, axis=-1)
    off = np.flatnonzero(apart.max(axis=0) > 0.5 * key_error)
    if not off.size:
        return
    node = int(model.skeleton.point_nodes[off].min())  # the first bone off (parents come first): what moves it
    columns = np.flatnonzero(model.skeleton.point_nodes == node)
    row, column = np.unravel_index(int(np.argmax(apart[:, columns])), (len(apart), len(columns)))
    away = scene_length(float(apart[row, columns[column]]))
    raise ValueError(
        f"bone '{model.bones[node]}' of '{model.armature.name}' is not where its keys put it on frame {frames[row]} "
        f"(they put it {away} away): a constraint, a driver or NLA strips move it too, so "
        "thinning its keys would not keep its pose; mute what moves it, or leave the bone out"
    )


def _plays(writer: KeyWriter, record: Held) -> Plays | None:
    """What the held keys' channels play, as the writer's F-curves play them (a layer's); None where they play
    what they hold (an Action's)."""
    if writer.plays_keys:
        return None

    def plays(keyed: FloatArray, rows: NDArray[np.int64]) -> FloatArray:
        return writer.played(record, keyed, rows)

    return plays


def _points(model: BoneModel, values: Sequence[Sequence[FloatArray]]) -> FloatArray:
    """The measured points (F, P, 3) of the model's bones whose channels play ``values`` (per node, per channel)."""
    bases = [basis(channels, node) for channels, node in zip(model.nodes, values, strict=True)]
    return points_of(model.skeleton, posed(model.skeleton, bases))


def _bound(
    model: BoneModel, solved: FloatArray, key_error: float, pins: Mapping[str, tuple[NDArray[np.bool_], FloatArray]]
) -> FloatArray:
    """How far each point may stray (F, P) from where a key on every frame plays it: ``key_error`` less what
    float32 may cost, and for a pinned ball less how far the pose (``solved``) has it from its pin."""
    bound = np.full(solved.shape[:2], allowed(key_error, solved))
    starts = np.cumsum([0, *(len(p) for p in model.skeleton.points)])
    for bone, (pinned, goals) in pins.items():
        if bone in model.bones:
            column = starts[model.bones.index(bone)] + 1  # the tail: ``bone_points``
            off = np.linalg.norm(solved[:, column] - goals, axis=-1)
            bound[pinned, column] -= off[pinned]
    return np.asarray(np.maximum(bound, 0.0), dtype=np.float64)


def allowed(key_error: float, points: FloatArray) -> float:
    """``key_error`` less what float32 may cost points (..., 3) that far from the world's origin."""
    extent = float(np.abs(points).max()) if points.size else 0.0
    return key_error - min(_FLOAT32_SHARE * key_error, _FLOAT32_ROUNDING * extent)


def _write(armature: _Armature, a: int, frames: NDArray[np.int64]) -> None:
    """Write the kept keys of thinned property ``a`` as Bezier keys, replacing its held keys' span."""
    write_kept(armature.writer, armature.sources[a], frames, armature.keys[a], armature.controls[a])


def _apart(points: FloatArray, reference: FloatArray) -> FloatArray:
    """The distances (F, P) between points (F, P, 3) and where they should be."""
    moved = points - reference
    return np.asarray(np.sqrt(np.einsum("fpi,fpi->fp", moved, moved)), dtype=np.float64)


def _above(parents: Sequence[int], node: int) -> list[int]:
    """The node and every node above it."""
    found = []
    while node >= 0:
        found.append(node)
        node = parents[node]
    return found
