"""Targets from Animation: for each chain of an armature's list, an Empty keyed on every frame where the chain's
tip is in the animation (its orientation too, where the chain turns its tip with its target), and for a chain of
two bones or more a pole Empty keyed where the chain bends, with the pole angle that reproduces the bend
(``fabrik_addon.targets``); the Empties made the chain's target and pole. A bake of the chain list toward them
then gives the animation back; moving them edits it.

One walk through the frames reads every chain's root, middle and tip bone (``bake.read_bones``); the Empties'
keys are written in bulk. All or nothing: a failure takes back every Empty, key and chain setting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import bpy
import numpy as np
from numpy.typing import NDArray

from ...reduction import KeysReport
from ...setting_checks import key_error_distance
from ...setting_names import named
from ...settings import FrameRange
from ...solver import FloatArray, matrix_to_quat, sign_continuous
from ...targets import pole_angle, pole_places
from ...words import block_name, counted
from ..bake import BoneTrack, check_armature, current_scene, read_bones
from ..chain_list import chain_lists_read
from ..interrupts import made, put_back
from ..properties import FABRIK_PG_chain, chain_label, enabled_chains, settings_of
from ..reduction import thin_object_keys
from ..rig import KeyWriter, armature_data, chain_bone_names
from ..units import named_unit

#: A custom property of the Empties made here: the name of the armature whose chain they serve.
MADE_FOR = "fabrik_targets_of"
#: How large the Empties are drawn, in lengths of their chain.
_TARGET_SIZE = 0.12
_POLE_SIZE = 0.08
#: How far a pole is from the chain's root-to-tip line, in lengths of the chain.
_POLE_DISTANCE = 0.5


@dataclass(frozen=True)
class TargetsReport:
    """What Targets from Animation made.

    Attributes
    ----------
    targets, poles : dict of str to bpy.types.Object
        Per chain (named as the panel names it: its name, else its tip bone), its target Empty, and its pole
        Empty (chains of two bones or more, with ``poles``).
    pole_angles : dict of str to float
        Per chain given a pole, the pole angle set (radians).
    collection : bpy.types.Collection
        Where the Empties are: a collection named after the armature.
    frames : tuple of int
        The first and last frame keyed.
    seconds : float
    keys : KeysReport or None
        With a ``key_error``, the Empties' keys kept and how far Blender's evaluation of them puts the Empties
        from where the animation has the chains; None where every frame is keyed.
    """

    targets: dict[str, bpy.types.Object]
    poles: dict[str, bpy.types.Object]
    pole_angles: dict[str, float]
    collection: bpy.types.Collection
    frames: tuple[int, int]
    seconds: float
    keys: KeysReport | None = None

    def __repr__(self) -> str:
        poles = f" ({counted(len(self.poles), 'pole')})" if self.poles else ""
        keys = "" if self.keys is None else f", {self.keys.words()}"
        return (
            f"TargetsReport(targets for {counted(len(self.targets), 'chain')}{poles} in {block_name(self.collection)}, "
            f"frames {self.frames[0]}-{self.frames[1]}{keys}; {self.seconds:.2f} s)"
        )


@dataclass
class _Chain:
    """A chain of the list to make targets for: its item, label, bones, the bones its pole bends (``bend``: all of
    them, or in a tree of chains its branch, ``_branch``) and whether it gets a pole."""

    item: FABRIK_PG_chain
    label: str
    bones: tuple[str, ...]
    bend: tuple[str, ...]
    pole: bool


def targets_from_animation(
    armature: bpy.types.Object,
    *,
    chains: Sequence[str] | None = None,
    frames: FrameRange | None = None,
    poles: bool = True,
    replace: bool = False,
    key_error: float = 0.0,
    progress: Callable[[float], None] | None = None,
) -> TargetsReport:
    """Key an Empty where each chain's tip is on every frame (and a pole where it bends), and make them the
    chain's target and pole (see the module).

    Parameters
    ----------
    armature : bpy.types.Object
    chains : sequence of str, optional
        The chains, by name (or tip bone); by default every enabled chain of the armature's list.
    frames : FrameRange, optional
        The frames keyed (its step is not used: every frame); the scene's range by default.
    poles : bool
        Give chains of two bones or more a pole Empty and the pole angle that reproduces their bend.
    replace : bool
        Replace a chain's target (and pole) where it has one; Empties made here before are keyed again.
    key_error : float
        World units (>= 0; 0 keys every frame): keep the Empties' keys on the fewest frames that keep each within
        this distance of where the animation has its chain (and, where it turns, points a fifth of its chain's
        length off it).
    progress : callable, optional
        Called with the fraction done, from 0 to 1.

    Raises
    ------
    TypeError, ValueError
        Naming the problem (an unknown chain, a chain with a target already, a missing bone); nothing is
        made then.
    """
    started = time.perf_counter()
    armature = check_armature(armature)
    key_error = key_error_distance(key_error, named("key_error"))
    picked = _picked(armature, chains, poles, replace)
    scene = current_scene()
    span = (frames or FrameRange()).resolved(scene.frame_start, scene.frame_end)
    keyed = list(range(span.start, span.stop))
    bones = sorted({name for chain in picked for name in _read(chain)})
    tracks = dict(zip(bones, read_bones(armature, bones, keyed, _share(progress, 0.9)), strict=True))
    goals = [_goals(armature, chain, tracks) for chain in picked]
    if progress is not None:
        progress(0.95)
    making = _Making(armature)
    frames_keyed = np.array(keyed, dtype=np.int64)
    try:  # the last step: nothing of the file changes before it
        targets, pole_empties, angles, collection = making.make(picked, goals, frames_keyed, holding=bool(key_error))
        kept = thin_object_keys(making.held, frames_keyed, key_error, named_unit(scene)) if key_error else None
        if progress is not None:
            progress(1.0)
    except BaseException:
        making.rollback()
        raise
    seconds = time.perf_counter() - started
    return TargetsReport(targets, pole_empties, angles, collection, (keyed[0], keyed[-1]), seconds, kept)


def _picked(armature: bpy.types.Object, names: Sequence[str] | None, poles: bool, replace: bool) -> list[_Chain]:
    """The chains to make targets for, checked: named ones found, bones there, no target (or pole) to replace
    unless ``replace``."""
    chain_lists_read()
    listed = list(enumerate(settings_of(armature).chains))
    if names is None:
        found = enabled_chains(armature)
        if not found:
            raise ValueError(f"armature '{armature.name}' has no enabled chain: add one in the FABRIK panel")
    else:
        if isinstance(names, str) or not all(isinstance(name, str) for name in names):
            raise TypeError(f"chains must be a list of chain names, got {names!r}")
        labels = {chain_label(chain, index): (index, chain) for index, chain in listed}
        tips = {chain.tip_bone: (index, chain) for index, chain in listed}
        missing = [name for name in names if name not in labels and name not in tips]
        if missing:
            known = ", ".join(repr(label) for label in labels) or "none"
            raise ValueError(f"armature '{armature.name}' has no chain {missing[0]!r} (its chains: {known})")
        found = list(dict.fromkeys(labels.get(name) or tips[name] for name in names))
    picked = []
    baked = [chain_bone_names(armature, item.tip_bone, item.chain_length) for _, item in enabled_chains(armature)]
    for index, item in found:
        label = chain_label(item, index)
        bones = chain_bone_names(armature, item.tip_bone, item.chain_length)
        bend = _branch(bones, baked)
        pole = poles and len(bend) >= 2
        goals = (("target", item.target), ("pole", item.pole_target if pole else None))
        taken = [f"a {what} '{obj.name}'" for what, obj in goals if obj is not None]
        if taken and not replace:
            raise ValueError(
                f"chain '{label}' has {' and '.join(taken)} already: replace {'them' if len(taken) > 1 else 'it'} "
                "(replace=True, Replace in the panel), or clear it first"
            )
        picked.append(_Chain(item, label, bones, bend, pole))
    return picked


def _branch(bones: tuple[str, ...], baked: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The bones of a chain (``bones``, root first) that its pole bends when it is baked with the chains ``baked``:
    where it shares bones with others (a tree), its branch, from below the nearest bone above its tip where the
    tree forks or another chain ends (the tree solver's branch, ``solver.bones.tree_layout``); all of them
    otherwise."""
    tree = [chain for chain in baked if chain != bones and set(chain) & set(bones)]
    if not tree:
        return bones
    children: dict[str, set[str]] = {}
    for chain in (bones, *tree):
        for parent, child in pairwise(chain):
            children.setdefault(parent, set()).add(child)
    tips = {chain[-1] for chain in tree}
    start = len(bones) - 1
    while start > 0 and len(children[bones[start - 1]]) == 1 and bones[start - 1] not in tips:
        start -= 1
    return bones[start:]


def _read(chain: _Chain) -> tuple[str, ...]:
    """The bones read of a chain: its root, the first and middle bones of what its pole bends (the bone starting
    at its middle joint) and its tip."""
    bend = chain.bend
    return (chain.bones[0], bend[0], bend[len(bend) // 2], chain.bones[-1])


def _share(progress: Callable[[float], None] | None, share: float) -> Callable[[float], None] | None:
    return None if progress is None else (lambda fraction: progress(share * fraction))


@dataclass(frozen=True)
class _Goal:
    """An Empty to key for a chain: the one it has (if made here before) or a new one, its name, size, look and
    keys (places, and orientations as quaternions where the chain uses Rotation), and the chain settings it
    takes (with a value each); ``length`` is its chain's (world units)."""

    current: bpy.types.Object | None
    name: str
    length: float
    size: float
    display: str
    places: FloatArray
    turns: FloatArray | None
    settings: tuple[tuple[str, object], ...]


def _goals(armature: bpy.types.Object, chain: _Chain, tracks: dict[str, BoneTrack]) -> tuple[_Goal, ...]:
    """What a chain's target (and pole) Empty are to be, computed from the bones read: the target keyed at the tip
    bone's tail (and turned as the tip bone, with Rotation), the pole beside the bend (of the bones it bends,
    ``_Chain.bend``) with its pole angle."""
    bones, bend = chain.bones, chain.bend
    root = tracks[bones[0]].world_matrices()
    tip = tracks[bones[-1]].world_matrices()
    first = tracks[bend[0]].world_matrices()
    middle = tracks[bend[len(bend) // 2]].world_matrices()
    data = armature_data(armature).bones
    length = float(np.cbrt(abs(np.linalg.det(root[0, :3, :3])))) * sum(data[name].length for name in bones)
    tails = tip[:, :3, 3] + tip[:, :3, 1] * data[bones[-1]].length
    item = chain.item
    turns = None
    if item.use_rotation:
        turns = sign_continuous(matrix_to_quat(tip[:, :3, :3] / np.linalg.norm(tip[:, :3, :3], axis=1, keepdims=True)))
    display = "ARROWS" if item.use_rotation else "SPHERE"
    target = _Goal(
        item.target,
        f"{chain.label} Target",
        length,
        length * _TARGET_SIZE,
        display,
        tails,
        turns,
        (("target_bone", ""),),
    )
    if not chain.pole:
        return (target,)
    heads, middles = first[:, :3, 3], middle[:, :3, 3]
    # The pole turns the chain about the line to its goal: with Rotation, the bones above the tip are solved
    # toward the tip bone's head (``solver.bones.tip_rotation``).
    ends = tip[:, :3, 3] if item.use_rotation else tails
    x_axes, z_axes = (_unit(first[:, :3, k]) for k in (0, 2))
    angle = pole_angle(heads, ends, middles, x_axes, z_axes)
    places = pole_places(heads, ends, middles, x_axes, z_axes, angle, _POLE_DISTANCE * length)
    pole = _Goal(
        item.pole_target,
        f"{chain.label} Pole",
        length,
        length * _POLE_SIZE,
        "PLAIN_AXES",
        places,
        None,
        (("pole_bone", ""), ("pole_angle", angle)),
    )
    return target, pole


@dataclass
class _Making:
    """The Empties, keys and chain settings made for one armature, and what takes them back."""

    armature: bpy.types.Object
    undo: list[Callable[[], None]] = field(default_factory=list)
    #: With ``holding``, each Empty's writer, holding its keys to thin, and its chain's length (world units).
    held: list[tuple[KeyWriter, float]] = field(default_factory=list)

    def rollback(self) -> None:
        """Take back everything made, newest first (all of it, even if Ctrl+C lands meanwhile)."""
        put_back(self.undo)

    def make(
        self, chains: list[_Chain], goals: list[tuple[_Goal, ...]], frames: NDArray[np.int64], *, holding: bool = False
    ) -> tuple[dict[str, bpy.types.Object], dict[str, bpy.types.Object], dict[str, float], bpy.types.Collection]:
        """Make and key every chain's Empties, put the new ones into the collection named after the armature, and
        make them the chains' targets and poles: per chain label its target, pole and pole angle, and the
        collection. Everything is computed before (``_goals``): a datablock made, or a chain's pointer set, that
        a rollback then takes back would not leave the file's bytes as they were (Blender stores them anew).
        With ``holding``, the keys are held to thin (``held``)."""
        collection = self._collection()
        targets, poles, angles = {}, {}, {}
        for chain, (target, *pole) in zip(chains, goals, strict=True):
            targets[chain.label] = self._goal(chain.item, "target", target, frames, collection, holding)
            if pole:
                poles[chain.label] = self._goal(chain.item, "pole_target", pole[0], frames, collection, holding)
                angles[chain.label] = float(dict(pole[0].settings)["pole_angle"])  # type: ignore[arg-type]
        return targets, poles, angles, collection

    def _goal(
        self,
        item: FABRIK_PG_chain,
        pointer: str,
        goal: _Goal,
        frames: NDArray[np.int64],
        collection: bpy.types.Collection,
        holding: bool,
    ) -> bpy.types.Object:
        """The Empty of ``goal``, keyed (held to thin, with ``holding``), set as the chain's ``pointer`` with the
        goal's settings."""
        empty = self._empty(goal.current, goal.name, goal.size, collection)
        empty.empty_display_type = goal.display  # type: ignore[assignment]
        self._key(empty, frames, goal.places, goal.turns, goal.length if holding else None)
        for name, value in ((pointer, empty), *goal.settings):
            self._set(item, name, value)
        return empty

    def _collection(self) -> bpy.types.Collection:
        """The collection named after the armature, linked to the scene (made, or linked, if it is not)."""
        scene = current_scene()
        name = f"{self.armature.name} Targets"
        collection: bpy.types.Collection | None = bpy.data.collections.get(name)
        if collection is None:
            collection = made(self.undo.append, lambda: bpy.data.collections.new(name), bpy.data.collections.remove)
        if collection not in scene.collection.children_recursive:
            linked, children = collection, scene.collection.children
            self.undo.append(lambda: children.unlink(linked) if linked.name in children else None)
            children.link(collection)
        return collection

    def _empty(
        self, current: bpy.types.Object | None, name: str, size: float, collection: bpy.types.Collection
    ) -> bpy.types.Object:
        """The chain's Empty: the one it has if it was made here for this armature (keyed again), else a new one."""
        if current is not None and current.get(MADE_FOR) == self.armature.name and current.type == "EMPTY":
            return current
        empty = made(self.undo.append, lambda: bpy.data.objects.new(name, None), bpy.data.objects.remove)
        empty[MADE_FOR] = self.armature.name
        empty.empty_display_size = size
        empty.rotation_mode = "QUATERNION"
        collection.objects.link(empty)
        return empty

    def _key(
        self,
        empty: bpy.types.Object,
        frames: NDArray[np.int64],
        places: FloatArray,
        turns: FloatArray | None,
        holding: float | None,
    ) -> None:
        """Key the Empty's location (and rotation) on ``frames``, replacing its keys in their span; with
        ``holding`` (its chain's length), hold the keys to thin them (``held``)."""
        writer = KeyWriter(empty).__enter__()
        self.undo.append(writer.rollback)
        if holding is not None:
            writer.hold()
            self.held.append((writer, holding))
        writer.replace_channels("location", range(3), "Object Transforms", frames, places)
        if turns is not None:
            writer.replace_channels("rotation_quaternion", range(4), "Object Transforms", frames, turns)

    def _set(self, item: FABRIK_PG_chain, name: str, value: object) -> None:
        """Set a chain's setting, set back on rollback (unset, where it was never set: as the file had it)."""
        old, was_set = getattr(item, name), item.is_property_set(name)
        setattr(item, name, value)
        self.undo.append(lambda: setattr(item, name, old) if was_set else item.property_unset(name))


def _unit(vectors: FloatArray) -> FloatArray:
    return np.asarray(vectors / np.linalg.norm(vectors, axis=-1, keepdims=True), dtype=np.float64)
