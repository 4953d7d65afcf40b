"""Step Through Iterations: one chain solved at the current frame with the solver's history
(``solve(..., history=True)``, or ``solve_pose``'s for a chain with limits, a pole or stretch), then posed as
it was after any step, so a person sees FABRIK (or CCD) converge.

A step's pose puts every joint where the history has it: the bones turned along its segments and, where a
pass has moved the root off its place (FABRIK's pass from the target), the root bone moved there by its
Location. Stepping writes no keys, and leaving puts back the pose the chain had (every bone's location,
rotations and scale, as taken when stepping began). The tip's goal orientation (Rotation) is not part of
the history: the steps are those of the position solve.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...settings import SolverSettings
from ...solver import (
    FloatArray,
    forward_kinematics,
    inherited_stretch,
    local_rotations,
    soften_reach,
    solve,
    solve_pose,
)
from ..bake import PreparedChain, current_inputs, prepare_chain
from ..properties import chain_settings, settings_of
from ..rig import PoseSnapshot, bone_channels, rotation_property

#: The last step where the solver's best pose came before its last pass: that pose again, named as
#: ``solve_pose`` names its own last step, so the slider always ends on the pose Solve Now gives.
SOLVED = "solved"


@dataclass(frozen=True)
class SteppedSolve:
    """One chain's solve at one frame, step by step, ready to pose and draw.

    Attributes
    ----------
    bone_names : tuple of str
        The chain's bones, root first.
    names : tuple of str
        Each step's name (the solver's: "start", "toward the target", "back to the root", CCD's "turn about
        joint k", ...).
    world : ndarray, shape (steps, m+1, 3)
        The joints after each step, in world space.
    target : ndarray, shape (3,)
        The target, in world space.
    tolerance : float
        The solver's tolerance, in world units.
    channels : list of ndarray, shape (steps, 3) or (steps, 4)
        Per bone, its rotation values after each step, in its own rotation mode.
    locations : ndarray, shape (steps, 3)
        The root bone's location after each step.
    y_scales : ndarray, shape (steps, m), or None
        Each bone's Y scale after each step, with stretch.
    """

    bone_names: tuple[str, ...]
    names: tuple[str, ...]
    world: FloatArray
    target: FloatArray
    tolerance: float
    channels: list[FloatArray]
    locations: FloatArray
    y_scales: FloatArray | None

    @property
    def distances(self) -> FloatArray:
        """The tip's distance to the target after each step (steps,)."""
        return np.asarray(np.linalg.norm(self.world[:, -1] - self.target, axis=-1), dtype=np.float64)


def chain_steps(prepared: PreparedChain, solver: SolverSettings, frame: int) -> SteppedSolve:
    """Solve a checked chain (``prepare_chain``) as Blender last evaluated it, keeping every step.

    Raises
    ------
    ValueError
        As ``PreparedChain.root_frame``.
    """
    chain = prepared.chain
    inputs = current_inputs(prepared)
    root = prepared.root_frame(inputs, np.array([frame]), solver.tolerance)
    goal = root.points(inputs.targets)[0]
    if not prepared.settings.use_stretch:  # eased as every solve of the chain eases it (``solve_bones``)
        goal = soften_reach(goal, float(chain.rest.lengths.sum()), prepared.settings.soft_reach / root.scale[0])
    start = root.rotations[:1]
    if prepared.solves_pose:
        poles = None if inputs.poles is None else root.points(inputs.poles)
        solution = solve_pose(
            chain.rest,
            start,
            goal[None],
            limits=chain.limits,
            poles=poles,
            pole_angle=prepared.settings.pole_angle,
            stretch=prepared.settings.use_stretch,
            tolerance=root.tolerance,
            max_iterations=solver.max_iterations,
            history=True,
        )
        history, names = solution.history, solution.history_steps
    else:
        joints = forward_kinematics(chain.rest, start)[0][0]
        points = solve(
            joints,
            goal,
            tolerance=root.tolerance,
            max_iterations=solver.max_iterations,
            method=solver.method,
            history=True,
        )
        history, names = points.history, points.history_steps
        assert history is not None
        if not np.array_equal(history[-1], points.joints):  # the best pose came before the last pass
            history, names = np.concatenate([history, points.joints[None]]), (*names, SOLVED)
    assert history is not None
    rotations = local_rotations(chain.rest, history, start)
    y_scales = None
    if prepared.settings.use_stretch and prepared.solves_pose:
        lengths = np.linalg.norm(np.diff(history, axis=1), axis=-1)
        rotations, y_scales = inherited_stretch(chain.rest, rotations, lengths / chain.rest.lengths)
    pose_bones = chain.pose_bones
    channels = bone_channels(rotations, [bone.rotation_mode for bone in pose_bones], inputs.first_channels)
    world = np.einsum("ij,knj->kni", root.linear[0], history) + root.origin[0]
    return SteppedSolve(
        bone_names=chain.bone_names,
        names=names,
        world=world,
        target=inputs.targets[0].copy(),
        tolerance=solver.tolerance,
        channels=channels,
        locations=np.array(pose_bones[0].location) + history[:, 0],
        y_scales=y_scales,
    )


@dataclass(frozen=True)
class Session:
    """Stepping through one chain's solve: the armature, the chain's place in its list, the frame, the steps
    and the pose to put back on leaving."""

    armature: bpy.types.Object
    chain_index: int
    frame: int
    steps: SteppedSolve
    snapshot: PoseSnapshot
    #: The armature's ``session_uid``, which the live preview's pause goes by (readable after it is deleted).
    armature_uid: int

    def alive(self) -> bool:
        """Whether the armature is still there (not deleted meanwhile) with the chain's bones (none renamed)."""
        try:
            pose = self.armature.pose
        except ReferenceError:
            return False
        return pose is not None and all(name in pose.bones for name in self.steps.bone_names)

    def put_back(self) -> bool:
        """The pose found, on the chain's bones only, renamed or not (the others keep what the user did
        meanwhile); returns whether anything changed. Raises ReferenceError if the armature was deleted."""
        return self.snapshot.restore(leave=set(self.snapshot.names) - set(self.steps.bone_names))

    def pose(self, step: int) -> None:
        """Pose the chain as it was after ``step`` (clamped to the steps there are)."""
        step = min(max(step, 0), len(self.steps.names) - 1)
        pose = self.armature.pose
        assert pose is not None
        for k, name in enumerate(self.steps.bone_names):
            bone = pose.bones[name]
            setattr(bone, rotation_property(bone.rotation_mode), self.steps.channels[k][step].tolist())
            if self.steps.y_scales is not None:
                bone.scale[1] = float(self.steps.y_scales[step, k])
        pose.bones[self.steps.bone_names[0]].location = self.steps.locations[step].tolist()
        self.armature.update_tag()


def begin(armature: bpy.types.Object, chain_index: int, solver: SolverSettings, frame: int) -> Session:
    """Solve the armature's chain at ``chain_index`` with its history and take the pose to put back.

    Raises
    ------
    TypeError, ValueError
        Naming the problem, as ``prepare_chain`` and ``chain_frame``; nothing is written then.
    """
    chains = settings_of(armature).chains
    if not 0 <= chain_index < len(chains):
        raise ValueError("select a chain in the list to step through")
    settings = chain_settings(armature, chains[chain_index])
    if settings.target is None:
        raise ValueError("pick a target object")
    if not settings.tip_bone:
        raise ValueError("pick a tip bone")
    steps = chain_steps(prepare_chain(settings, solver), solver, frame)
    return Session(armature, chain_index, frame, steps, PoseSnapshot.take(armature), armature.session_uid)
