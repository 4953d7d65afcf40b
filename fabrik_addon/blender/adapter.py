"""Between the scene and the solver: a chain's settings checked against the armature it names, the arrays read
from the scene turned into the solver's input (in the chain's root frame), and the solved rotations turned
into each bone's rotation channels. The bake and the live preview both go through here, so they follow the
same rules."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ..settings import ChainSettings, SolverSettings
from ..solver import FloatArray, inherited_stretch, matrix_to_quat, needs_pose_solve, solve_bones
from .chain import ArmatureChain, read_chain
from .channels import bone_channels
from .checks import check_armature, check_evaluated, check_goal
from .overrides import check_chain_alone, check_goal_independent
from .sampling import Inputs

#: How far a matrix may be from a rotation times a uniform scale (Blender stores matrices in float32).
_MATRIX_TOLERANCE = 1e-4
#: Rotation error, in radians, that storing and evaluating one bone's rotation in float32 can add (a few
#: units in the last place of 2**-24).
_FLOAT32_ROUNDING = 2.5e-7


@dataclass(frozen=True)
class PreparedChain:
    """A chain whose settings passed every check: ready to sample and solve.

    Attributes
    ----------
    chain : ArmatureChain
    target : bpy.types.Object
    pole_target : bpy.types.Object or None
    settings : ChainSettings
        As given (``pole_angle``, ``use_stretch``...).
    """

    chain: ArmatureChain
    target: bpy.types.Object
    pole_target: bpy.types.Object | None
    settings: ChainSettings[bpy.types.Object]

    @property
    def target_bone(self) -> str:
        return self.settings.target_bone

    @property
    def pole_bone(self) -> str:
        return self.settings.pole_bone

    @property
    def use_rotation(self) -> bool:
        return self.settings.use_rotation

    @property
    def solves_pose(self) -> bool:
        """Whether the chain is solved on its bones' rotations (``solve_pose``) rather than as points: it has IK
        limits, a pole target, or stretch that some bone takes a share of."""
        return needs_pose_solve(self.chain.limits, self.pole_target, self.settings.use_stretch)


def prepare_chain(
    settings: ChainSettings[bpy.types.Object], solver: SolverSettings, replaced: Collection[tuple[str, str]] = ()
) -> PreparedChain:
    """Read the chain that ``settings`` name and check everything the bake needs of it and its goals (but for
    the IK constraints ``replaced``, (bone, constraint) of its armature that the bake replaces).

    Raises
    ------
    TypeError, ValueError
        Naming the problem: not an armature, a target that is no object or is not evaluated, a missing bone,
        a chain bone whose constraints would override the keys, a goal that moves with the chain, stretch
        without full scale inheritance, a method that cannot honour the chain's limits, pole or stretch.
    """
    armature = check_armature(settings.armature)
    target = check_goal(settings.target, settings.target_bone, "target", armature)
    check_evaluated(armature, "armature")
    pole = settings.pole_target
    if pole is not None:
        pole = check_goal(pole, settings.pole_bone, "pole target", armature, (target, settings.target_bone))
    elif settings.pole_bone:
        raise ValueError(f"pole_bone '{settings.pole_bone}' names a bone of no pole target: pick the pole_target")
    chain = read_chain(armature, settings.tip_bone, settings.chain_length)
    check_chain_alone(chain, settings.use_stretch, replaced)
    check_goal_independent(target, chain, "target", settings.target_bone)
    if pole is not None:
        check_goal_independent(pole, chain, "pole target", settings.pole_bone)
    if settings.use_stretch:
        for pose_bone in chain.pose_bones[1:]:
            if pose_bone.bone.inherit_scale != "FULL":
                raise ValueError(
                    f"use_stretch needs the chain's bones to inherit their parent's scale fully: bone "
                    f"'{pose_bone.name}' has Inherit Scale '{pose_bone.bone.inherit_scale}' (set it to Full)"
                )
    prepared = PreparedChain(chain, target, pole, settings)
    if solver.method != "fabrik" and prepared.solves_pose:
        raise ValueError(
            f"method {solver.method!r} does not support joint limits, a pole target or stretch (the chain has "
            f"{'IK limits' if chain.limits.any else 'a pole target or stretch'}): use method 'fabrik'"
        )
    return prepared


@dataclass(frozen=True)
class Solved:
    """A solved unit (one chain, or chains that share bones, solved as one tree) as the keys to write.

    Attributes
    ----------
    pose_bones : list of bpy.types.PoseBone
        The bones to key.
    channels : list of ndarray, shape (F, 3) or (F, 4)
        Per bone, its rotation channel values in its own rotation mode.
    y_scales : ndarray, shape (F, bones), or None
        Y scales to key, with stretch.
    iterations, reached : list of ndarray, shape (F,)
        Per chain of the unit: solver iterations, and whether the solver brought its tip within tolerance.
    """

    pose_bones: list[bpy.types.PoseBone]
    channels: list[FloatArray]
    y_scales: FloatArray | None
    iterations: list[NDArray[np.int64]]
    reached: list[NDArray[np.bool_]]


@dataclass(frozen=True)
class ChainFrame:
    """A chain's inputs, checked, in its root frame (the root bone's rest frame under its posed parent, at its
    head), where the solver works.

    Attributes
    ----------
    scale, linear, origin : ndarray, shapes (F,), (F, 3, 3), (F, 3)
        The root frame's uniform scale, linear part and origin per frame.
    rotations : ndarray, shape (F or 1, m, 4)
        Each chain bone's own rotation, read from the scene: where the solve starts.
    tolerance : float
        The tolerance in the root frame's units, less what float32 keys can cost.
    """

    scale: FloatArray
    linear: FloatArray
    origin: FloatArray
    rotations: FloatArray
    tolerance: float

    def points(self, world: FloatArray) -> FloatArray:
        """World points (F, 3) into the root frame: rotated back and scaled down to the chain's rest units, by
        the root frame's inverse (not its transpose over its scale: Blender's float32 matrices are slightly
        sheared, by a few 1e-6 where the root bone points nearly opposite its parent, and Blender poses the
        chain with them as they are)."""
        return np.asarray(np.linalg.solve(self.linear, (world - self.origin)[..., None])[..., 0], dtype=np.float64)

    def orientations(self, world: FloatArray) -> FloatArray:
        """World orientations (F, 3, 3) into the root frame."""
        rotation = self.linear / self.scale[:, None, None]
        return np.asarray(np.swapaxes(rotation, 1, 2) @ world, dtype=np.float64)


def check_goals_apart(chains: list[PreparedChain]) -> None:
    """No goal moves with another chain of the same bake (``check_goal_independent``): goals are read before
    any key is written, so such a goal would be solved toward where it was, not where the other chain's keys
    take it, and the report (which measures against the goals read) would not see it.

    Raises
    ------
    ValueError
        Naming the goal, how it follows the other chain and that chain's tip.
    """
    for prepared in chains:
        goals = [(prepared.target, "target", prepared.target_bone)]
        if prepared.pole_target is not None:
            goals.append((prepared.pole_target, "pole target", prepared.pole_bone))
        for other in chains:
            if other is not prepared:
                owner = f"the chain of '{other.chain.bone_names[-1]}' of '{other.chain.armature.name}' (baked too)"
                for goal, role, bone in goals:
                    check_goal_independent(goal, other.chain, role, bone, owner)


def chain_frame(prepared: PreparedChain, inputs: Inputs, frames: NDArray[np.int64], tolerance: float) -> ChainFrame:
    """Check what the scene did on each frame and set the chain's inputs in its root frame.

    Raises
    ------
    ValueError
        For what the scene does on some frame that the solve cannot honour (naming the frame): a scaled or
        moved chain bone, a non-uniform scale above the chain, a number that is not finite.
    """
    chain = prepared.chain
    _check_finite(chain, inputs, frames)
    _check_bone_bases(chain, inputs.bone_bases, frames, prepared.settings.use_stretch)
    scale, linear, origin = _split_root_frames(inputs.root_frames, frames, chain.bone_names[0])
    bases = inputs.bone_bases[..., :3, :3]
    rotations = matrix_to_quat(bases / np.linalg.norm(bases, axis=-2, keepdims=True))  # (F or 1, m, 4)
    # Blender keeps keys and evaluates poses in float32: aim inside the tolerance by what that can cost,
    # a rounding of each bone's rotation moving the tip by up to the chain's reach (capped at half).
    reach = float(chain.rest.lengths.sum() * scale.max())
    margin = min(0.5 * tolerance, _FLOAT32_ROUNDING * len(chain.bone_names) * reach)
    return ChainFrame(scale, linear, origin, rotations, (tolerance - margin) / float(scale.max()))


def solve_chain(prepared: PreparedChain, inputs: Inputs, frames: NDArray[np.int64], solver: SolverSettings) -> Solved:
    """Solve in the chain's root frame and turn the result into each bone's rotation channel values.

    Raises
    ------
    ValueError
        As ``chain_frame``.
    """
    chain = prepared.chain
    root = chain_frame(prepared, inputs, frames, solver.tolerance)
    orientations = None
    if prepared.use_rotation:
        assert inputs.target_rotations is not None, "read with the goal's orientation"
        orientations = root.orientations(inputs.target_rotations)
    solution = solve_bones(
        chain.rest,
        root.rotations,
        root.points(inputs.targets),
        limits=chain.limits,
        poles=None if inputs.poles is None else root.points(inputs.poles),
        pole_angle=prepared.settings.pole_angle,
        stretch=prepared.settings.use_stretch,
        orientations=orientations,
        orientation_weight=prepared.settings.rotation_weight,
        tolerance=root.tolerance,
        max_iterations=solver.max_iterations,
        method=solver.method,
        warm_start=solver.warm_start,
    )
    rotations, y_scales = solution.rotations, None
    if solution.scales is not None:
        rotations, y_scales = inherited_stretch(chain.rest, rotations, solution.scales)
    channels = bone_channels(rotations, [pb.rotation_mode for pb in chain.pose_bones], inputs.first_channels)
    return Solved(chain.pose_bones, channels, y_scales, [solution.iterations], [solution.error <= root.tolerance])


def _check_finite(chain: ArmatureChain, inputs: Inputs, frames: NDArray[np.int64]) -> None:
    """Every number read from the scene is finite (NaN or infinity would pass the other checks, unnoticed, and
    be keyed); else a ValueError naming what and on which frame."""

    def first_bad(values: FloatArray) -> int | None:
        bad = np.flatnonzero(~np.isfinite(values.reshape(len(values), -1)).all(axis=1))
        return int(frames[bad[0]]) if bad.size else None

    for k, name in enumerate(chain.bone_names):
        frame = first_bad(inputs.bone_bases[:, k])
        if frame is not None:
            raise ValueError(f"bone '{name}' has a location, rotation or scale that is not a number on frame {frame}")
    root = f"the transform above the chain's root bone '{chain.bone_names[0]}' (armature object or parent bones)"
    checks = [(inputs.root_frames, root), (inputs.targets, "the target's location")]
    if inputs.poles is not None:
        checks.append((inputs.poles, "the pole target's location"))
    for values, what in checks:
        frame = first_bad(values)
        if frame is not None:
            raise ValueError(f"{what} is not a number on frame {frame}")


def _split_root_frames(
    root_frames: FloatArray, frames: NDArray[np.int64], root_bone: str
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Uniform scale (F,), linear part (F, 3, 3) and origin (F, 3) of the chain's root frames.

    The linear part is checked to be a rotation times the uniform scale, to within what float32 allows.
    """
    linear = root_frames[:, :3, :3]
    determinant = np.einsum("fi,fi->f", linear[:, :, 0], np.cross(linear[:, :, 1], linear[:, :, 2]))
    scale = np.cbrt(np.abs(determinant))
    rotation = linear / np.where(scale > 0, scale, 1.0)[:, None, None]
    deviation = np.abs(np.swapaxes(rotation, 1, 2) @ rotation - np.eye(3)).max(axis=(1, 2))
    bad = np.flatnonzero((determinant <= 0) | (deviation > _MATRIX_TOLERANCE))
    if bad.size:
        raise ValueError(
            f"the chain's root bone '{root_bone}' is scaled non-uniformly, mirrored or to zero on frame "
            f"{frames[bad[0]]} (by the armature object or a parent bone): FABRIK needs a uniform scale"
        )
    return scale, linear, root_frames[:, :3, 3]


def _check_bone_bases(chain: ArmatureChain, bases: FloatArray, frames: NDArray[np.int64], stretch: bool) -> None:
    """Chain bones must have unit scale (but along Y when stretching, which replaces it), and (but for the
    root) no location: the offsets between bones are rigid."""
    scales = np.linalg.norm(bases[..., :3, :3], axis=-2)  # (F, m, 3): length of each basis column
    if stretch:
        scales[..., 1] = 1.0
    locations = np.linalg.norm(bases[..., :3, 3], axis=-1)  # (F, m)
    for k, pose_bone in enumerate(chain.pose_bones):
        bad = np.flatnonzero(~(np.abs(scales[:, k] - 1.0).max(axis=1) <= _MATRIX_TOLERANCE))  # NaN is bad too
        if bad.size:
            raise ValueError(
                f"bone '{pose_bone.name}' is scaled ({np.round(scales[bad[0], k], 4).tolist()}) on frame "
                f"{frames[bad[0]]}: bones of the chain must keep a scale of 1 (but along Y with use_stretch)"
            )
        if k == 0 or pose_bone.bone.use_connect:
            continue  # the root's location moves the whole chain; a connected bone ignores its location
        bad = np.flatnonzero(locations[:, k] > _MATRIX_TOLERANCE * pose_bone.bone.length)
        if bad.size:
            raise ValueError(
                f"bone '{pose_bone.name}' is moved from its rest position by its Location on frame "
                f"{frames[bad[0]]}: the offsets between the chain's bones must stay rigid, clear it first"
            )
