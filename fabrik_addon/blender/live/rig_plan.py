"""What the live preview keeps of an armature between updates (``RigPlan``): its enabled chains checked as a bake
checks them (``bake.prepare_chain``), grouped into units, one chain or a tree, and put in order
(``bake.solve_order``); where each unit's bones, roots and goals are in the armature's pose read in bulk
(``PoseRows``); and what each unit read when it was last solved, so that a unit whose inputs have not changed
is not solved again.

A plan is made once (``make_plan``) and kept while what it was made from holds: the armature's FABRIK settings
(``settings_key``: every property of its settings and of its chains, whatever properties those are) and its
rig (``rig_key``: its bones' rest, inheritance, IK limits and rotation modes, the pose's IK solver, and the
constraints the checks read). The preview drops every plan on undo, redo, loading a file and a change of
relations (``updates``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np
from numpy.typing import NDArray

from ...settings import ChainSettings, SolverSettings
from ..bake import Inputs, Order, Unit, goal_fill, groups, inputs_from_rows, prepare_chain, solve_order
from ..properties import chain_settings, enabled_chains, settings_of, solver_settings
from ..rig import armature_data, rotation_property
from .pose_rows import PoseRows

#: Properties of the settings that say nothing about what the preview solves: names, and the list (compared
#: chain by chain). Hidden ones (the chain the panel shows, the last bake's summary, the layout version and
#: older files' settings) are left out too: reading an unset pointer among them would set it.
_NOT_SOLVED = frozenset({"rna_type", "name", "chains"})
#: The pose bone properties a rig key reads (the IK limits and stretch the solve keeps, and the rotation modes
#: the channels are in), with the type of their values.
_POSE_BONE_KEYS = (
    *((f"{kind}_{axis}", bool) for kind in ("lock_ik", "use_ik_limit") for axis in "xyz"),
    *((f"ik_{bound}_{axis}", np.float32) for bound in ("min", "max") for axis in "xyz"),
    ("ik_stretch", np.float32),
    ("rotation_mode", np.int32),
)
#: The bone properties a rig key reads: how each bone hangs from its parent and its rest.
_BONE_KEYS = (
    ("use_inherit_rotation", bool, 1),
    ("inherit_scale", np.int32, 1),
    ("use_connect", bool, 1),
    ("matrix_local", np.float32, 16),
    ("length", np.float32, 1),
)
#: Constraints that turn bones above their owner: a chain's checks read them wherever they are.
_CHAIN_CONSTRAINTS = frozenset({"IK", "SPLINE_IK"})

#: One read of a unit's fingerprint: a pose bone property and the rows of the bones it is read for.
Rows = tuple[str, NDArray[np.intp]]


@dataclass(frozen=True)
class ChainRows:
    """Where one chain's inputs are: its bones' rows in ``pose.bones`` (root first) and their rotation
    properties, and what fills a row with each of its goals' world matrices (``bake.goal_fill``)."""

    bones: NDArray[np.intp]
    channels: tuple[str, ...]
    target: Callable[[NDArray[np.float32]], None]
    pole: Callable[[NDArray[np.float32]], None] | None
    use_rotation: bool

    def inputs(self, rows: PoseRows, goals: NDArray[np.float32]) -> Inputs:
        """The chain's ``Inputs`` on this update, from the pose read and its goals' rows (target, pole)."""
        first = [rows.values[name][k].astype(np.float64) for name, k in zip(self.channels, self.bones, strict=True)]
        return inputs_from_rows(
            rows.world[None],
            rows.values["matrix"][self.bones[:1]],
            goals[:1],
            rows.values["matrix_basis"][self.bones][None],
            first,
            None if self.pole is None else goals[1:2],
            self.use_rotation,
        )


@dataclass
class UnitPlan:
    """A unit as the preview solves it.

    Attributes
    ----------
    unit : Unit
    members : tuple of int
        Its chains' places in the armature's list.
    chains : tuple of ChainRows
        In ``unit.chains``' order.
    bones : ndarray of int
        The rows of the bones it turns, in ``unit.bone_names``' order (the order of ``Solved``'s channels).
    channels : tuple of str
        Their rotation properties.
    reads : list of Rows
        What else its inputs read of the pose: its bones' own channels, and the posed matrices of the bones
        its chains hang from (outside it).
    last : ndarray or None
        Everything it read when it was last solved (or found on its goals), its bones' channels as they were
        left; None until then.
    """

    unit: Unit
    members: tuple[int, ...]
    chains: tuple[ChainRows, ...]
    bones: NDArray[np.intp]
    channels: tuple[str, ...]
    reads: list[Rows]
    last: NDArray[np.float32] | None = None

    @property
    def settings(self) -> list[ChainSettings[bpy.types.Object]]:
        return [prepared.settings for prepared in self.unit.chains]

    def goals(self) -> list[NDArray[np.float32]]:
        """Each chain's goals' world matrices as rows (target, then pole), as Blender evaluated them last."""
        found = []
        for chain in self.chains:
            rows = np.empty((1 if chain.pole is None else 2, 16), dtype=np.float32)
            chain.target(rows[0])
            if chain.pole is not None:
                chain.pole(rows[1])
            found.append(rows)
        return found

    def fingerprint(self, rows: PoseRows, goals: list[NDArray[np.float32]]) -> NDArray[np.float32]:
        """Everything the unit reads, in one array: equal arrays give equal solves."""
        return np.concatenate([rows.world, *(g.ravel() for g in goals), rows.gather(self.reads)])

    def inputs(self, rows: PoseRows, goals: list[NDArray[np.float32]]) -> list[Inputs]:
        return [chain.inputs(rows, found) for chain, found in zip(self.chains, goals, strict=True)]


@dataclass
class RigPlan:
    """An armature's enabled chains, ready to be solved on every update.

    Attributes
    ----------
    armature : bpy.types.Object
    settings_key, rig_key : tuple
        What the plan was made from (``settings_key``, ``rig_key``).
    constrained : tuple of str
        The bones whose constraints the rig key reads (``_constrained``).
    solver : SolverSettings
    units : list of UnitPlan
    order : Order
        The units' order (``bake.solve_order``).
    problems : dict of int to str
        Why some chains cannot be solved, by their places in the list.
    watched : frozenset of int
        The ``session_uid`` of every object whose update can change what the chains read: the armature, its
        chains' targets and poles.
    reads : frozenset of str
        The pose bone properties read on every update.
    bone_count : int
        The pose's bones when the plan was made (the rows it knows the bones by).
    bone_names : tuple of str
        The bones the plan knows by name (its units' bones, the bones they hang from, those whose constraints
        it reads): a bone renamed since makes it stale.
    goal_bones : tuple of (bpy.types.Object, str)
        The target and pole bones its units' chains name, with their armatures: one renamed since makes it
        stale.
    goal_rigs : tuple of bpy.types.Object
        The armatures among its enabled chains' targets and poles.
    names_seen : tuple of tuple of str
        Where it has problems: every bone's name of the armature and of ``goal_rigs`` when it was made, so that
        a rename that mends a problem (a bone named back) makes it stale.
    """

    armature: bpy.types.Object
    settings_key: tuple[object, ...]
    rig_key: tuple[object, ...]
    constrained: tuple[str, ...]
    solver: SolverSettings
    units: list[UnitPlan] = field(default_factory=list)
    order: Order = field(default_factory=list)
    problems: dict[int, str] = field(default_factory=dict)
    watched: frozenset[int] = frozenset()
    reads: frozenset[str] = frozenset()
    bone_count: int = 0
    bone_names: tuple[str, ...] = ()
    goal_bones: tuple[tuple[bpy.types.Object, str], ...] = ()
    goal_rigs: tuple[bpy.types.Object, ...] = ()
    names_seen: tuple[tuple[str, ...], ...] = ()

    def holds(self, check_rig: bool) -> bool:
        """Whether the plan still stands for the armature: its settings are those it was made from, and (with
        ``check_rig``, after an update that touched the armature) its rig too; and it has as many bones, each it
        knows by name still so named, as are its goals' bones; where it has problems, every bone as named then."""
        pose = self.armature.pose
        if pose is None or len(pose.bones) != self.bone_count or settings_key(self.armature) != self.settings_key:
            return False
        bones = pose.bones
        if not all(name in bones for name in self.bone_names):
            return False
        if not all(goal.pose is not None and name in goal.pose.bones for goal, name in self.goal_bones):
            return False
        if self.problems and _names_seen(self.armature, self.goal_rigs) != self.names_seen:
            return False
        return not check_rig or rig_key(self.armature, self.constrained) == self.rig_key


def make_plan(armature: bpy.types.Object) -> RigPlan:
    """Check and group the armature's enabled chains as a bake does (``bake.prepare_chain``, ``Unit.of``,
    ``bake.solve_order``); a chain that cannot be solved is left out and its problem noted (the chains of a
    tree that cannot be solved, each of them)."""
    solver = solver_settings(armature)
    plan = RigPlan(armature, settings_key(armature), (), (), solver)
    watched = {armature.session_uid}
    wanted: list[tuple[int, ChainSettings[bpy.types.Object]]] = []
    goal_rigs: list[bpy.types.Object] = []
    for index, item in enabled_chains(armature):
        watched.update(obj.session_uid for obj in (item.target, item.pole_target) if obj is not None)
        goal_rigs += [obj for obj in (item.target, item.pole_target) if obj is not None and obj.type == "ARMATURE"]
        try:
            chain = chain_settings(armature, item)
            if chain.target is None:
                raise ValueError("pick a target object")
            if not chain.tip_bone:
                raise ValueError("pick a tip bone")
            wanted.append((index, chain))
        except (TypeError, ValueError) as error:
            plan.problems[index] = str(error)
    ready = []
    for index, chain in wanted:
        try:
            ready.append((index, prepare_chain(chain, solver)))
        except (TypeError, ValueError) as error:
            plan.problems[index] = str(error)
    chains = [prepared for _, prepared in ready]
    units: list[tuple[tuple[int, ...], Unit]] = []
    for group in groups(chains):
        members = tuple(ready[i][0] for i in group)
        try:
            units.append((members, Unit.of(chains, group, solver)))
        except (TypeError, ValueError) as error:
            plan.problems.update((index, str(error)) for index in members)
    try:
        plan.order = solve_order([unit for _, unit in units])
    except ValueError as error:
        plan.problems.update((index, str(error)) for members, _ in units for index in members)
        units = []
    plan.units = [_unit_plan(armature, members, unit) for members, unit in units]
    plan.watched = frozenset(watched)
    plan.reads = frozenset(
        {"matrix", "matrix_basis", "location", "scale", *(name for u in plan.units for name in u.channels)}
    )
    plan.constrained = _constrained(armature, {name for u in plan.units for name in u.unit.bone_names})
    plan.rig_key = rig_key(armature, plan.constrained)
    plan.bone_count = len(armature.pose.bones) if armature.pose is not None else 0
    plan.bone_names = _named_bones(armature, plan)
    plan.goal_bones = tuple(
        (goal, bone)
        for unit in plan.units
        for chain in unit.settings
        for goal, bone in ((chain.target, chain.target_bone), (chain.pole_target, chain.pole_bone))
        if goal is not None and bone
    )
    plan.goal_rigs = tuple(dict.fromkeys(goal_rigs))
    plan.names_seen = _names_seen(armature, plan.goal_rigs) if plan.problems else ()
    return plan


def _names_seen(armature: bpy.types.Object, goal_rigs: Sequence[bpy.types.Object]) -> tuple[tuple[str, ...], ...]:
    """Every bone's name of the armature and of the armatures its chains' goals are."""
    return tuple(tuple(obj.pose.bones.keys()) if obj.pose is not None else () for obj in (armature, *goal_rigs))


def _named_bones(armature: bpy.types.Object, plan: RigPlan) -> tuple[str, ...]:
    """The bones ``plan`` knows by name: its units' bones and their parents, and the bones it reads the
    constraints of."""
    bones = armature_data(armature).bones
    own = {name for unit in plan.units for name in unit.unit.bone_names}
    parents = {parent.name for name in own if (parent := bones[name].parent) is not None}
    return tuple(sorted(own | parents | set(plan.constrained)))


def _unit_plan(armature: bpy.types.Object, members: tuple[int, ...], unit: Unit) -> UnitPlan:
    """Where a unit's bones and goals are, and what its fingerprint reads."""
    pose = armature.pose
    assert pose is not None
    row = {name: k for k, name in enumerate(pose.bones.keys())}
    bones = armature_data(armature).bones

    def property_of(name: str) -> str:
        return rotation_property(pose.bones[name].rotation_mode)

    chains = []
    hanging: set[int] = set()
    for prepared in unit.chains:
        assert prepared.target is not None  # a chain of the list follows a target (only a planting's do not)
        names = prepared.chain.bone_names
        parent = bones[names[0]].parent
        if parent is not None and parent.name not in unit.bone_names:
            hanging.add(row[parent.name])
        chains.append(
            ChainRows(
                np.array([row[name] for name in names], dtype=np.intp),
                tuple(property_of(name) for name in names),
                goal_fill(prepared.target, prepared.target_bone),
                None if prepared.pole_target is None else goal_fill(prepared.pole_target, prepared.pole_bone),
                prepared.use_rotation,
            )
        )
    own = np.array([row[name] for name in unit.bone_names], dtype=np.intp)
    channels = tuple(property_of(name) for name in unit.bone_names)
    reads: list[Rows] = [("location", own), ("scale", own), ("matrix", np.array(sorted(hanging), dtype=np.intp))]
    for name in sorted(set(channels)):
        reads.append((name, own[[k for k, channel in enumerate(channels) if channel == name]]))
    return UnitPlan(unit, members, tuple(chains), own, channels, reads)


def settings_key(armature: bpy.types.Object) -> tuple[object, ...]:
    """Every setting of the armature that the preview's solve can depend on, and every setting of each of its
    chains, as they are now: any property the settings show, so that a setting added to them counts too."""
    settings = settings_of(armature)
    return (_values(settings), *(_values(chain) for chain in settings.chains))


def _values(group: bpy.types.PropertyGroup) -> tuple[object, ...]:
    kind = type(group).__name__
    names = _SOLVED.get(kind)
    if names is None:
        names = _SOLVED[kind] = tuple(
            p.identifier for p in group.bl_rna.properties if not (p.is_hidden or p.identifier in _NOT_SOLVED)
        )
    return tuple(getattr(group, name) for name in names)


#: The properties ``settings_key`` reads of each kind of property group, by its class's name.
_SOLVED: dict[str, tuple[str, ...]] = {}


def rig_key(armature: bpy.types.Object, constrained: tuple[str, ...]) -> tuple[object, ...]:
    """What the checks and the solve read of the armature's rig, as it is now: its Armature, every bone's rest
    matrix, length and inheritance, every pose bone's IK limits, stretch and rotation mode, the pose's IK
    solver, and the constraints of the bones ``constrained``."""
    data = armature_data(armature)
    pose = armature.pose
    assert pose is not None
    key: list[object] = [data.as_pointer(), len(data.bones), pose.ik_solver]
    for name, kind in _POSE_BONE_KEYS:
        key.append(_bulk(pose.bones, name, kind, 1))
    for name, kind, width in _BONE_KEYS:
        key.append(_bulk(data.bones, name, kind, width))
    for name in constrained:
        pose_bone = pose.bones.get(name)
        key.append(None if pose_bone is None else tuple(_constraint(c) for c in pose_bone.constraints))
    return tuple(key)


def _bulk(collection: bpy.types.bpy_prop_collection[Any], name: str, kind: type, width: int) -> bytes:
    values: NDArray[Any] = np.empty(len(collection) * width, dtype=kind)
    collection.foreach_get(name, values)
    return values.tobytes()


def _constraint(constraint: bpy.types.Constraint) -> tuple[object, ...]:
    return (
        constraint.name,
        constraint.type,
        constraint.enabled,
        constraint.influence,
        getattr(constraint, "chain_count", None),
        getattr(constraint, "use_tail", None),
    )


def _constrained(armature: bpy.types.Object, chain_bones: set[str]) -> tuple[str, ...]:
    """The bones whose constraints a chain's checks read: the chains' bones, and every bone with an IK or
    Spline IK constraint (which may reach into a chain)."""
    pose = armature.pose
    assert pose is not None
    return tuple(
        pose_bone.name
        for pose_bone in pose.bones
        if pose_bone.name in chain_bones or any(c.type in _CHAIN_CONSTRAINTS for c in pose_bone.constraints)
    )
