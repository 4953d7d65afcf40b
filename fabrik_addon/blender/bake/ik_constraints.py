"""Blender's own IK constraints as the input of a bake: every IK constraint of an armature that is on is read
as a chain (target and bone, pole and bone, pole angle, chain length, tail, stretch, rotation and its
weight, iterations), all of them are baked with FABRIK in one walk through the frames, and then they are
muted (or removed, or kept), so that the keys show. As in Blender's IK, a chain length beyond the root stops
there, and without Use Tail the chain ends at the owner's parent, whose tail goes to the target (connected or
not). Constraints that end at the same bone's tail are refused: a bake follows one target per tip.

Which constraints are on is read as Blender evaluates them at the scene's current frame. A driver on a
constraint's mute (Rigify switches between an IK with a pole and one without this way) is followed as it
stands now, provided nothing it reads is animated: the bake cannot tell on which frames an animated switch
would turn the constraint on. A constraint whose influence is below 1, animated or driven is refused (FABRIK
bakes the IK's pose, not a blend with what lies under it), and so are what FABRIK cannot honour: IK by
distance, IK without a target, rotation-only IK, and the iTaSC solver's simulation mode. While the bake runs,
the constraints are muted, or switched off by their influence where a driver sets their mute (it would undo a
mute), and whatever happens they are left as they were unless the bake succeeded and ``after`` says
otherwise. iTaSC applies an IK constraint even at Influence 0: with it, a constraint at 0 that is not muted is
on (and refused), and one whose mute is driven cannot be switched off (refused, naming iTaSC).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial

import bpy

from ...settings import IK_AFTER, BakeSettings, ChainSettings, FrameRange, SolverSettings
from ..interrupts import put_back
from ..rig import animated_paths, bone_path
from .checks import check_armature, joined
from .conflicts import applies
from .plan import plan
from .report import RigBakeReport
from .run import carry_out


@dataclass(frozen=True)
class IKSource:
    """An IK constraint read as a chain to bake.

    Attributes
    ----------
    bone, constraint : str
        The bone that owns the constraint, and the constraint's name.
    chain : ChainSettings
    driven_mute : bool
        Whether a driver sets its mute (then it is switched off by its influence, not muted).
    """

    bone: str
    constraint: str
    chain: ChainSettings[bpy.types.Object]
    driven_mute: bool

    @property
    def label(self) -> str:
        return f"the IK constraint '{self.constraint}' of bone '{self.bone}'"


def read_ik_constraints(armature: bpy.types.Object) -> tuple[list[IKSource], list[tuple[str, str]], int]:
    """The armature's IK constraints that are on now, as chains, the IK constraints that are off now (bone,
    constraint), and the most iterations any of those on asks for.

    Raises
    ------
    ValueError
        Naming a constraint that cannot be baked, and why.
    """
    check_armature(armature)
    pose = armature.pose
    assert pose is not None
    animated = animated_paths(armature)
    anim = armature.animation_data
    drivers = {fcurve.data_path: fcurve for fcurve in anim.drivers} if anim is not None else {}
    sources: list[IKSource] = []
    off: list[tuple[str, str]] = []
    iterations = 0
    for pose_bone in pose.bones:
        for constraint in pose_bone.constraints:
            if not isinstance(constraint, bpy.types.KinematicConstraint):
                continue
            path = constraint.path_from_id()
            driven_mute = f"{path}.mute" in drivers
            label = f"the IK constraint '{constraint.name}' of bone '{pose_bone.name}'"
            if f"{path}.influence" in animated:
                raise ValueError(
                    f"{label} has an animated or driven influence: FABRIK bakes the IK's pose, not a blend of it "
                    "with the pose beneath; fix its influence at 1 (or 0) to bake"
                )
            if f"{path}.mute" in animated and not driven_mute:
                raise ValueError(f"{label} is muted and unmuted by keys: bake the frames of each state apart")
            if driven_mute:
                _check_switch_still(label, drivers[f"{path}.mute"])
            if not applies(constraint, armature):
                off.append((pose_bone.name, constraint.name))
                continue
            if constraint.influence < 1.0:
                raise ValueError(_blend_text(label, constraint.influence))
            chain = _chain(armature, pose_bone, constraint, label)
            sources.append(IKSource(pose_bone.name, constraint.name, chain, driven_mute))
            iterations = max(iterations, constraint.iterations)
    _check_tips_apart(armature, sources)
    if pose.ik_solver == "ITASC":
        _check_itasc(armature, sources)
    return sources, off, iterations


def _check_tips_apart(armature: bpy.types.Object, sources: list[IKSource]) -> None:
    """No two constraints that are on end at the same bone's tail: a bake follows one target per tip."""
    by_tip: dict[str, list[IKSource]] = {}
    for source in sources:
        by_tip.setdefault(source.chain.tip_bone, []).append(source)
    for tip, sharing in by_tip.items():
        if len(sharing) < 2:
            continue
        if len({source.bone for source in sharing}) == 1:  # on one bone: what Blender does with them
            listed = f"{joined([repr(s.constraint) for s in sharing])} of bone '{sharing[0].bone}'"
            itasc = armature.pose is not None and armature.pose.ik_solver == "ITASC"
            how = (
                ": iTaSC puts the tail between their targets"
                if itasc
                else f": Blender's IK follows only the first, '{sharing[0].constraint}' (the others would take "
                "over once it is muted)"
            )
        else:
            listed = joined([f"'{s.constraint}' of bone '{s.bone}'{_tail_off(s, tip)}" for s in sharing])
            how = ""
        raise ValueError(
            f"the IK constraints {listed} all end at the tail of bone '{tip}'{how}; a bake follows one target per "
            "tip: mute or remove all but one of them to bake"
        )


def _tail_off(source: IKSource, tip: str) -> str:
    """Says that a constraint's chain ends at its owner's parent, where it does."""
    return " (Use Tail off)" if source.bone != tip else ""


def _blend_text(label: str, influence: float) -> str:
    """Why an IK constraint that is on with an influence below 1 is refused."""
    if influence <= 0.0:  # on at 0: solved by iTaSC
        return (
            f"{label} has Influence 0, which iTaSC (the armature's IK Solver) still applies: mute it to leave it "
            "out, or set its Influence to 1 to bake it"
        )
    return (
        f"{label} has Influence {influence:.3g}: Blender shows a blend of the IK's pose with the pose beneath, "
        "FABRIK bakes the IK's own; set its Influence to 1 to bake it (or mute it)"
    )


def _check_itasc(armature: bpy.types.Object, sources: list[IKSource]) -> None:
    """iTaSC in Animation mode, with no constraint to bake whose mute is driven: iTaSC applies an IK
    constraint even at Influence 0, so only a mute switches one off."""
    pose = armature.pose
    assert pose is not None
    if getattr(pose.ik_param, "mode", "") == "SIMULATION":
        raise ValueError(
            f"armature '{armature.name}' solves its IK with iTaSC in Simulation mode, where each frame follows "
            "from the one before: set its IK Solver to Standard, or iTaSC's mode to Animation, to bake"
        )
    for source in sources:
        if source.driven_mute:
            raise ValueError(
                f"armature '{armature.name}' solves its IK with iTaSC, which applies an IK constraint even at "
                f"Influence 0, and the mute of {source.label} is driven (its driver would undo a mute): the keys "
                "would not show; set the armature's IK Solver to Standard (Armature properties, Inverse "
                "Kinematics panel) to bake"
            )


def bake_ik_constraints(
    armature: bpy.types.Object,
    frames: FrameRange,
    solver: SolverSettings,
    *,
    after: str = "mute",
    output: str = "action",
    key_error: float = 0.0,
    progress: Callable[[float], None] | None = None,
) -> RigBakeReport:
    """Bake every IK constraint of ``armature`` that is on with FABRIK, in one walk, all or nothing, into its
    Action or its FABRIK layer (``output``, as ``BakeSettings.output``, its keys thinned within ``key_error``);
    then mute them (``after="mute"``), remove them (``"remove"``) or keep them (``"keep"``).

    The solver's iteration cap is the larger of ``solver.max_iterations`` and the constraints' own.

    Returns
    -------
    RigBakeReport
        One ``BakeReport`` per constraint, in the order of the armature's bones and their constraints.

    Raises
    ------
    TypeError, ValueError
        For an armature with no IK constraint on, a constraint that cannot be baked (see the module), or
        anything a bake refuses; nothing is written then.
    """
    if after not in IK_AFTER:
        raise ValueError(f"after must be one of {', '.join(map(repr, IK_AFTER))}, got {after!r}")
    sources, off, iterations = read_ik_constraints(armature)
    if not sources:
        raise ValueError(f"armature '{armature.name}' has no IK constraint that is on to bake")
    settings = BakeSettings(
        tuple(source.chain for source in sources),
        frames,
        replace(solver, max_iterations=max(solver.max_iterations, iterations)),
        output=output,
        key_error=key_error,
    )
    replaced = {(armature, bone, name) for bone, name in [*((s.bone, s.constraint) for s in sources), *off]}
    for source in sources:  # each chain's own problems, named by its constraint
        try:
            plan(BakeSettings((source.chain,), frames, settings.solver, output=output), replaced)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{source.label}: {error}") from None
    planned = plan(settings, replaced)  # the chains together: nothing is switched off before it passes
    with _switched_off(armature, sources) as finish:
        report = carry_out(planned, progress)
        finish(after)
    return report


def _chain(
    armature: bpy.types.Object, owner: bpy.types.PoseBone, constraint: bpy.types.KinematicConstraint, label: str
) -> ChainSettings[bpy.types.Object]:
    """The chain an IK constraint solves, as the bake's settings."""
    if constraint.ik_type != "COPY_POSE":
        raise ValueError(f"{label} keeps a distance (iTaSC's Distance type), which FABRIK does not solve")
    if not constraint.use_location:
        raise ValueError(f"{label} solves for rotation only (Position is off), which FABRIK does not solve")
    if constraint.target is None:
        raise ValueError(f"{label} has no target (a targetless IK for posing): give it a target to bake")
    tip = owner
    if not constraint.use_tail:  # the chain ends at the owner's parent: Blender's IK puts its tail on the target
        if owner.parent is None:
            raise ValueError(
                f"{label} has Use Tail off on a bone without a parent: its chain would have no bone; turn Use Tail "
                "on to bake"
            )
        tip = owner.parent
    depth = len(tip.parent_recursive) + 1  # a Chain Length beyond the root stops there, as in Blender's IK
    pole = constraint.pole_target
    return ChainSettings(
        armature,
        constraint.target,
        tip.name,
        min(constraint.chain_count, depth),
        pole_target=pole,
        pole_angle=constraint.pole_angle if pole is not None else 0.0,
        use_stretch=constraint.use_stretch,
        target_bone=constraint.subtarget if constraint.target.type == "ARMATURE" else "",
        pole_bone=constraint.pole_subtarget if pole is not None and pole.type == "ARMATURE" else "",
        use_rotation=constraint.use_rotation,
        rotation_weight=max(constraint.orient_weight, 0.01),
    )


def _check_switch_still(label: str, driver: bpy.types.FCurve) -> None:
    """A driven mute is followed as it stands now only if nothing its driver reads is animated."""
    variables = driver.driver.variables if driver.driver is not None else ()
    for variable in variables:
        for target in variable.targets:
            source = target.id
            if source is None or not hasattr(source, "animation_data"):
                continue
            read = {target.data_path} if target.data_path else set()
            if target.bone_target:
                read |= {f"{bone_path(target.bone_target)}.{p}" for p in _TRANSFORMS}
            moving = read & animated_paths(source) if isinstance(source, bpy.types.Object) else set()
            if moving:
                raise ValueError(
                    f"{label} is switched on and off by a driver that reads animated values "
                    f"({', '.join(sorted(moving))}): the bake cannot tell on which frames it is on; bake the "
                    "frames of each state apart"
                )


_TRANSFORMS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")


@contextmanager
def _switched_off(armature: bpy.types.Object, sources: list[IKSource]) -> Iterator[Callable[[str], None]]:
    """The constraints switched off while the block runs: muted, or where a driver sets the mute (which would
    undo one), by their influence (with the Standard solver: ``_check_itasc``). They are given back as they
    were unless the block calls ``finish(after)``, which keeps them switched off (``after="mute"``), removes
    them or gives them back."""
    pose = armature.pose
    assert pose is not None
    constraints = [pose.bones[s.bone].constraints[s.constraint] for s in sources]
    influences = [c.influence for c in constraints]
    finished = [False]

    def give_back() -> None:  # all of them, even if Ctrl+C lands meanwhile
        put_back(
            [
                partial(setattr, constraint, "influence", influence)
                if source.driven_mute
                else partial(setattr, constraint, "mute", False)  # it was on
                for source, constraint, influence in zip(sources, constraints, influences, strict=True)
            ]
        )

    def finish(after: str) -> None:
        finished[0] = True
        if after == "keep":
            give_back()
        elif after == "remove":
            for source, constraint in zip(sources, constraints, strict=True):
                _remove(armature, pose.bones[source.bone], constraint)

    for source, constraint in zip(sources, constraints, strict=True):
        if source.driven_mute:
            constraint.influence = 0.0
        else:
            constraint.mute = True
    try:
        yield finish
    finally:
        if not finished[0]:
            give_back()


def _remove(armature: bpy.types.Object, owner: bpy.types.PoseBone, constraint: bpy.types.Constraint) -> None:
    """Remove a constraint and the drivers of its properties (they would point at nothing)."""
    prefix = f"{constraint.path_from_id()}."
    anim = armature.animation_data
    for fcurve in [d for d in anim.drivers if d.data_path.startswith(prefix)] if anim is not None else []:
        anim.drivers.remove(fcurve)  # type: ignore[union-attr]
    owner.constraints.remove(constraint)
