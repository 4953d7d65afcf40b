"""Blender's own IK constraints as the input: ``api.bake_ik_constraints`` reads every IK constraint that is on,
bakes them all with FABRIK in one walk, and mutes them so the keys show; Blender's evaluation with the
constraints muted is the oracle, and Blender's IK itself the peer for where the knees go."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bpy
import numpy as np
import pytest
from rigs import CREATURE_CHAINS, creature_rig, keyed_empty, loop_path, make_chain, rigify_metarig, tip_errors

from fabrik_addon import api
from fabrik_addon.blender.rig import keys

from .oracle import fcurve_keys, file_digest, file_summary

FRAMES = range(1, 41)
TOLERANCE = 1e-3
TIPS = [tip for chains in CREATURE_CHAINS.values() for tip, _ in chains]


def ik_goals_and_tips(armature: bpy.types.Object, constraints: list[bpy.types.KinematicConstraint]) -> dict[str, Any]:
    """Per frame: each constraint's goal (its target, or its bone's head), its owner's tail, and the knees
    (the heads of the legs' tips), as Blender evaluates the scene."""
    scene = bpy.context.scene
    goals, tips, knees = [], [], []
    for frame in FRAMES:
        scene.frame_set(frame)
        row_goals, row_tips = [], []
        for constraint in constraints:
            target = constraint.target
            goal = target.matrix_world.translation
            if constraint.subtarget:
                goal = target.matrix_world @ target.pose.bones[constraint.subtarget].head
            row_goals.append(np.array(goal))
            owner = armature.pose.bones[_owner(armature, constraint)]
            row_tips.append(np.array(armature.matrix_world @ owner.tail))
        goals.append(row_goals)
        tips.append(row_tips)
        knees.append(
            [np.array(armature.matrix_world @ armature.pose.bones[t].head) for t, _ in CREATURE_CHAINS["legs"]]
        )
    return {"goals": np.array(goals), "tips": np.array(tips), "knees": np.array(knees)}


def _owner(armature: bpy.types.Object, constraint: bpy.types.Constraint) -> str:
    return next(pb.name for pb in armature.pose.bones if any(c == constraint for c in pb.constraints))


def ik_constraints(armature: bpy.types.Object) -> list[bpy.types.KinematicConstraint]:
    return [c for pb in armature.pose.bones for c in pb.constraints if c.type == "IK"]


def control_keys(creature: bpy.types.Object, prop: bpy.types.Object) -> dict[Any, Any]:
    """The animators' keys: the body's and the foot controls', and the prop's."""
    ours = {k: v for k, v in fcurve_keys(creature).items() if not k[0].endswith(("rotation_quaternion", "scale"))}
    return {"creature": ours, "prop": fcurve_keys(prop)}


def test_the_creature_bakes_its_four_ik_constraints_in_one_walk() -> None:
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES.start, FRAMES.stop - 1
    creature, prop = creature_rig(FRAMES)
    constraints = ik_constraints(creature)
    blender = ik_goals_and_tips(creature, constraints)
    controls = control_keys(creature, prop)

    report = api.bake_ik_constraints(creature)

    assert [chain.tip_bone for chain in report.chains] == TIPS
    assert all(c.mute for c in constraints)
    ours = ik_goals_and_tips(creature, constraints)
    errors = np.linalg.norm(ours["tips"] - ours["goals"], axis=2)  # (F, chains), the constraints muted
    np.testing.assert_allclose(errors, np.array([c.error for c in report.chains]).T, atol=1e-6)
    assert ((errors <= TOLERANCE).mean(axis=0) >= 0.99).all()
    blender_errors = np.linalg.norm(blender["tips"] - blender["goals"], axis=2)
    assert (blender_errors[:, 2] <= TOLERANCE).mean() < 0.5  # Blender's IK misses the 32-bone tail
    leg = sum(creature.data.bones[name].length for name in ("thigh.L", "shin.L"))
    assert np.linalg.norm(ours["knees"] - blender["knees"], axis=2).max() <= 0.02 * leg
    assert control_keys(creature, prop) == controls  # the controls' keys, bit for bit


@pytest.mark.parametrize("after", ["remove", "keep"])
def test_after_removes_or_keeps_the_constraints(after: str) -> None:
    armature, names = make_chain(3)
    target = keyed_empty("Target", [(1, (0.6, 0.2, 2.0)), (5, (-0.4, 0.5, 2.2))])
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count = target, 3
    report = api.bake_ik_constraints(armature, frame_start=1, frame_end=5, after=after)
    assert report.chains[0].bones == tuple(names)
    left = [(c.name, c.mute, c.influence) for c in armature.pose.bones[names[-1]].constraints]
    assert left == ([] if after == "remove" else [("IK", False, 1.0)])


def test_a_failure_gives_the_constraints_back_and_writes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    creature, _ = creature_rig(range(1, 6))
    before = file_summary()
    monkeypatch.setattr(keys.Keys, "write", lambda *args, **kwargs: (_ for _ in ()).throw(RuntimeError("full disk")))
    with pytest.raises(RuntimeError, match="full disk"):
        api.bake_ik_constraints(creature, frame_start=1, frame_end=5)
    monkeypatch.undo()
    assert all(not c.mute and c.influence == 1.0 for c in ik_constraints(creature))
    # Value for value (not byte for byte: taking keys back leaves Blender's update tags set, which are saved).
    assert file_summary() == before


def _refuse(
    make: Callable[[bpy.types.Object, list[str], bpy.types.KinematicConstraint], object],
    message: str,
    state: Callable[[], object] = file_digest,
) -> None:
    armature, names = make_chain(4)
    target = keyed_empty("Target", [(1, (0.6, 0.2, 2.0))])
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count = target, 3
    make(armature, names, ik)
    before = state()
    with pytest.raises((TypeError, ValueError), match=message):
        api.bake_ik_constraints(armature, frame_start=1, frame_end=3)
    assert state() == before


def _second_ik_with_rotation(armature: bpy.types.Object, names: list[str], ik: bpy.types.KinematicConstraint) -> None:
    other = armature.pose.bones[names[2]].constraints.new("IK")
    other.target, other.chain_count, other.use_rotation = ik.target, 2, True


def _parent_to_none(armature: bpy.types.Object, bone: str) -> None:
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    armature.data.edit_bones[bone].parent = None
    bpy.ops.object.mode_set(mode="OBJECT")


def _driven_mute_reading_keys(armature: bpy.types.Object, names: list[str], ik: bpy.types.KinematicConstraint) -> None:
    armature["pole"] = 0.0
    armature.keyframe_insert('["pole"]', frame=1)
    variable = ik.driver_add("mute").driver.variables.new()
    variable.targets[0].id, variable.targets[0].data_path = armature, '["pole"]'


REFUSED: dict[str, tuple[Callable[..., object], str]] = {
    "animated influence": (
        lambda a, n, ik: ik.keyframe_insert("influence", frame=1),
        "the IK constraint 'IK' of bone 'bone.003' has an animated or driven influence",
    ),
    "static influence below 1": (
        lambda a, n, ik: setattr(ik, "influence", 0.5),
        r"the IK constraint 'IK' of bone 'bone.003' has Influence 0.5: Blender shows a blend of the IK's pose with "
        r"the pose beneath, FABRIK bakes the IK's own; set its Influence to 1 to bake it \(or mute it\)",
    ),
    "no target": (lambda a, n, ik: setattr(ik, "target", None), "has no target"),
    "rotation only": (lambda a, n, ik: setattr(ik, "use_location", False), "solves for rotation only"),
    "target bone in the chain": (
        lambda a, n, ik: (setattr(ik, "target", a), setattr(ik, "subtarget", "bone.002")),
        r"the IK constraint 'IK' of bone 'bone.003': the target bone 'bone.002' is a bone of the chain",
    ),
    "use tail off on a root bone": (
        lambda a, n, ik: (setattr(ik, "use_tail", False), setattr(ik, "chain_count", 1), _parent_to_none(a, n[-1])),
        r"the IK constraint 'IK' of bone 'bone.003' has Use Tail off on a bone without a parent: its chain would "
        r"have no bone; turn Use Tail on to bake",
    ),
    "a tree turning a tip": (
        _second_ik_with_rotation,
        r"share bones and are solved as one tree, which does not turn a tip",
    ),
    "driven mute reading keys": (_driven_mute_reading_keys, r"switched on and off by a driver that reads animated"),
    "nothing on": (lambda a, n, ik: setattr(ik, "mute", True), "has no IK constraint that is on to bake"),
}


@pytest.mark.parametrize("case", REFUSED.keys())
def test_what_cannot_be_baked_is_refused_naming_the_constraint(case: str) -> None:
    _refuse(*REFUSED[case])


def test_itascs_simulation_mode_is_refused() -> None:
    """iTaSC in Simulation mode keeps a state from one evaluation to the next (saved in the file), so the file
    is compared value by value here."""
    _refuse(
        lambda a, n, ik: (setattr(a.pose, "ik_solver", "ITASC"), setattr(a.pose.ik_param, "mode", "SIMULATION")),
        "solves its IK with iTaSC in Simulation mode",
        file_summary,
    )


def test_itasc_bakes_its_constraints_switched_off_by_their_mute() -> None:
    """iTaSC still applies an IK constraint whose Influence is 0 (it holds the chain near its rest pose): the
    bake switches the constraints off by their mute, so the report measures what the muted rig plays."""
    frames = range(1, 11)
    armature, names = make_chain(4)
    target = keyed_empty("Target", loop_path(frames, (0.5, 0.0, 2.2), (0.8, 0.6, 0.5)))
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count = target, 3
    armature.pose.ik_solver = "ITASC"
    report = api.bake_ik_constraints(armature, frame_start=frames.start, frame_end=frames.stop - 1)
    assert ik.mute
    errors = tip_errors(armature, names[-1], target, frames)
    np.testing.assert_allclose(errors, report.chains[0].error, atol=1e-6)
    assert report.chains[0].on_target


def _driven_mute(armature: bpy.types.Object, names: list[str], ik: bpy.types.KinematicConstraint) -> None:
    armature["pole"] = 0.0
    variable = ik.driver_add("mute").driver.variables.new()
    variable.targets[0].id, variable.targets[0].data_path = armature, '["pole"]'


ITASC_REFUSED: dict[str, tuple[Callable[..., object], str]] = {
    "driven mute": (
        _driven_mute,
        r"armature 'Rig' solves its IK with iTaSC, which applies an IK constraint even at Influence 0, and "
        r"the mute of the IK constraint 'IK' of bone 'bone.003' is driven \(its driver would undo a mute\): the "
        r"keys would not show; set the armature's IK Solver to Standard \(Armature properties, Inverse "
        r"Kinematics panel\) to bake",
    ),
    "influence 0": (
        lambda a, n, ik: setattr(ik, "influence", 0.0),
        r"the IK constraint 'IK' of bone 'bone.003' has Influence 0, which iTaSC \(the armature's IK Solver\) "
        r"still applies: mute it to leave it "
        r"out, or set its Influence to 1 to bake it",
    ),
}


@pytest.mark.parametrize("case", ITASC_REFUSED.keys())
def test_what_itasc_would_undo_is_refused_naming_itasc(case: str) -> None:
    make, message = ITASC_REFUSED[case]
    _refuse(lambda a, n, ik: (setattr(a.pose, "ik_solver", "ITASC"), make(a, n, ik)), message, file_summary)


def _second_ik_on_the_tip(armature: bpy.types.Object, names: list[str], ik: bpy.types.KinematicConstraint) -> None:
    other = armature.pose.bones[names[-1]].constraints.new("IK")
    other.target, other.chain_count = keyed_empty("Other", [(1, (-0.6, 0.2, 2.0))]), 2


TIP_SHARED = {
    "STANDARD": r"Blender's IK follows only the first, 'IK' \(the others would take over once it is muted\)",
    "ITASC": "iTaSC puts the tail between their targets",
}


@pytest.mark.parametrize("solver", TIP_SHARED.keys())
def test_two_ik_constraints_on_one_tip_are_refused_saying_which_blender_follows(solver: str) -> None:
    def make(armature: bpy.types.Object, names: list[str], ik: bpy.types.KinematicConstraint) -> None:
        _second_ik_on_the_tip(armature, names, ik)
        armature.pose.ik_solver = "LEGACY" if solver == "STANDARD" else "ITASC"

    _refuse(
        make,
        r"the IK constraints 'IK' and 'IK.001' of bone 'bone.003' all end at the tail of bone 'bone.003': "
        f"{TIP_SHARED[solver]}; a bake follows one target per tip: mute or remove all but one of them to bake",
        file_summary,
    )


def test_use_tail_off_on_a_child_of_another_tip_is_refused_naming_both() -> None:
    def make(armature: bpy.types.Object, names: list[str], ik: bpy.types.KinematicConstraint) -> None:
        ik.chain_count = 2
        other = armature.pose.bones[names[-2]].constraints.new("IK")
        other.target, other.chain_count = keyed_empty("Other", [(1, (-0.6, 0.2, 2.0))]), 2
        ik.use_tail = False

    _refuse(
        make,
        r"the IK constraints 'IK' of bone 'bone.002' and 'IK' of bone 'bone.003' \(Use Tail off\) all end at the "
        r"tail of bone 'bone.002'; a bake follows one target per tip: mute or remove all but one of them to bake",
    )


def test_a_chain_length_beyond_the_root_stops_at_the_root_as_blender_does() -> None:
    frames = range(1, 6)
    armature, names = make_chain(3)
    target = keyed_empty("Target", loop_path(frames, (0.4, 0.0, 2.0), (0.5, 0.4, 0.3)))
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count = target, 9
    report = api.bake_ik_constraints(armature, frame_start=frames.start, frame_end=frames.stop - 1)
    assert report.chains[0].bones == tuple(names)
    np.testing.assert_allclose(tip_errors(armature, names[-1], target, frames), report.chains[0].error, atol=1e-6)
    assert report.chains[0].on_target


def test_use_tail_off_on_an_unconnected_bone_puts_its_parents_tail_on_the_target_as_blender_does() -> None:
    """Without Use Tail the chain ends at the owner's parent, whose tail Blender's IK puts on the target, even
    where the owner's head is elsewhere (not connected)."""
    frames = range(1, 6)
    armature, names = make_chain(4, connected=False, gap=(0.2, 0.0, 0.1))
    target = keyed_empty("Target", loop_path(frames, (0.4, 0.0, 2.5), (0.5, 0.4, 0.3)))
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target, ik.chain_count, ik.use_tail = target, 2, False
    scene = bpy.context.scene
    blender = []
    for frame in frames:
        scene.frame_set(frame)
        blender.append((armature.matrix_world @ armature.pose.bones[names[-2]].tail - target.location).length)
    assert max(blender) < TOLERANCE  # Blender's IK: the parent's tail on the target
    report = api.bake_ik_constraints(armature, frame_start=frames.start, frame_end=frames.stop - 1)
    assert report.chains[0].bones == tuple(names[1:3])
    np.testing.assert_allclose(tip_errors(armature, names[-2], target, frames), report.chains[0].error, atol=1e-6)
    assert report.chains[0].on_target


def test_a_bad_after_is_refused() -> None:
    armature, names = make_chain(2)
    armature.pose.bones[names[-1]].constraints.new("IK").target = keyed_empty("Target", [(1, (0.5, 0.0, 1.5))])
    before = file_digest()
    with pytest.raises(ValueError, match="after must be one of 'mute', 'remove', 'keep', got 'hide'"):
        api.bake_ik_constraints(armature, after="hide")
    assert file_digest() == before


def test_rigifys_generated_rig_bakes_its_limbs_with_the_pole_switch_as_it_stands() -> None:
    """Rigify's limbs each carry two IK constraints on one bone, with and without a pole, one of them muted by
    a driver on the pole switch (a property of the IK control, not animated): the one that is on is baked,
    and each tip is on target with the constraints switched off."""
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 8
    rigify_metarig("human")
    bpy.ops.pose.rigify_generate()
    rig = bpy.data.objects["rig"]
    for name in ("foot_ik.L", "hand_ik.R"):
        control = rig.pose.bones[name]
        for frame in range(1, 9):
            control.location = (0.04 * np.sin(0.5 * frame), 0.04 * np.cos(0.5 * frame), 0.02)
            control.keyframe_insert("location", frame=frame)
    states = {(pb.name, c.name): c.mute for pb in rig.pose.bones for c in pb.constraints if c.type == "IK"}
    report = api.bake_ik_constraints(rig)
    tips = {chain.tip_bone for chain in report.chains}
    assert tips == {"MCH-shin_ik.L", "MCH-shin_ik.R", "MCH-forearm_ik.L", "MCH-forearm_ik.R"}
    assert [(chain.tip_bone, chain.off_target_frames) for chain in report.chains if not chain.on_target] == []
    after = {
        (pb.name, c.name): (c.mute, c.influence) for pb in rig.pose.bones for c in pb.constraints if c.type == "IK"
    }
    # Those that were on are switched off by their influence (their mute is driven); the others are as they were.
    assert after == {key: (muted, 1.0 if muted else 0.0) for key, muted in states.items()}
    assert sum(not muted for muted in states.values()) == 4
