"""Bake FABRIK into bone rotation keys: scene -> arrays -> solve -> rotations -> keyframes -> Blender's check."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import bpy
import numpy as np
from numpy.typing import NDArray

from ..solver import DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE, METHODS, solve_frames, solve_pose
from ..solver.pose import forward_kinematics, inherited_stretch, local_rotations
from ..solver.rotations import matrix_to_quat
from ..solver.validate import FloatArray, positive_float, positive_int
from . import compat
from .chain import ArmatureChain, armature_data, read_chain
from .channels import rotation_channels, rotation_property
from .keys import KeyWriter
from .sampling import Inputs, sample_inputs, sample_tips

#: How far a matrix may be from a rotation times a uniform scale (Blender stores matrices in float32).
_MATRIX_TOLERANCE = 1e-4
#: Rotation error, in radians, that storing and evaluating one bone's rotation in float32 can add (a few
#: units in the last place of 2**-24).
_FLOAT32_ROUNDING = 2.5e-7


@dataclass(frozen=True)
class BakeReport:
    """What a bake did, measured by Blender's own evaluation of the keys it wrote.

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
    max_error: float
    seconds: float
    timings: dict[str, float]
    action: bpy.types.Action


def bake(
    armature: bpy.types.Object,
    target: bpy.types.Object,
    *,
    tip_bone: str,
    chain_length: int = 0,
    frame_start: int | None = None,
    frame_end: int | None = None,
    frame_step: int = 1,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    method: str = "fabrik",
    warm_start: bool = True,
    action_name: str | None = None,
    pole_target: bpy.types.Object | None = None,
    pole_angle: float = 0.0,
    use_stretch: bool = False,
    progress: Callable[[float], None] | None = None,
) -> BakeReport:
    """Key the rotations of a chain of bones so its tip follows a target on every frame.

    Parameters
    ----------
    armature : bpy.types.Object
        An armature object.
    target : bpy.types.Object
        Any object: its evaluated world location on each frame is the goal for the tail of ``tip_bone``.
    tip_bone : str
        The last bone of the chain.
    chain_length : int
        Bones in the chain, counted from ``tip_bone`` up through its parents as Blender's IK constraint
        counts them; 0 goes up to the root bone.
    frame_start, frame_end : int, optional
        The frames to bake, both included; the scene's frame range by default.
    frame_step : int
        Key every ``frame_step``-th frame from ``frame_start``.
    tolerance : float
        How close the tip must come to the target, in world units.
    max_iterations, method, warm_start
        As for ``fabrik_addon.solver.solve_frames``.
    action_name : str, optional
        Bake into this Action (created if missing) and make it the armature's active Action; by default
        the keys go into the armature's active Action, one being created if it has none.
    pole_target : bpy.types.Object, optional
        The chain bends toward this object, as with the pole target of Blender's IK constraint.
    pole_angle : float
        Radians, with the meaning of the IK constraint's Pole Angle: the root bone's X axis, turned toward
        its Z axis by this angle, faces the pole.
    use_stretch : bool
        Let bones lengthen, each by its IK Stretch share, to reach a target beyond the chain's length, as
        the IK constraint's Stretch option does; their Y scale is then keyed too.
    progress : callable, optional
        Called with the fraction done, from 0 to 1.

    Returns
    -------
    BakeReport

    Raises
    ------
    TypeError, ValueError
        For bad input, with a message naming what is wrong. Nothing is written then: the bake either
        completes or leaves the file as it was.

    Notes
    -----
    Each bone's IK settings (Bone Properties, Inverse Kinematics: Lock, Limit and Stretch per axis) are
    honoured as Blender's IK constraint honours them; with limits, a pole or stretch the bake solves on the
    bones' rotations (``fabrik_addon.solver.solve_pose``; FABRIK only, not CCD).

    Only the rotation channels of the chain's bones are keyed, in each bone's own rotation mode (and, with
    ``use_stretch``, their Y scale). Their keys from ``frame_start`` to ``frame_end`` are replaced; every
    other key and channel stays as it was.
    """
    started = time.perf_counter()
    scene = _scene()
    frames = _frames(scene, frame_start, frame_end, frame_step)
    _check_objects(armature, target)
    tolerance = positive_float(tolerance, "tolerance")
    max_iterations = positive_int(max_iterations, "max_iterations")
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    chain = read_chain(armature, tip_bone, chain_length)
    _check_target_independent(target, chain)
    pose = _pose_options(armature, target, chain, pole_target, pole_angle, use_stretch)
    if method != "fabrik" and pose.needed(chain):
        raise ValueError(
            f"method {method!r} does not support joint limits, a pole target or stretch (the chain has "
            f"{'IK limits' if chain.limits.any else 'a pole target or stretch'}): use method 'fabrik'"
        )
    _check_writable(armature, action_name)

    report_progress = progress or (lambda fraction: None)
    timings: dict[str, float] = {}
    original_frame = (scene.frame_current, scene.frame_subframe)
    try:
        clock = time.perf_counter()
        inputs = sample_inputs(
            scene, frames, chain, target, lambda i: report_progress(0.45 * (i + 1) / len(frames)), pole_target
        )
        timings["read scene"] = time.perf_counter() - clock

        clock = time.perf_counter()
        solved = _solve(chain, inputs, frames, tolerance, max_iterations, method, warm_start, pose)
        timings["solve"] = time.perf_counter() - clock

        with KeyWriter(armature, action_name) as writer:  # from here on, a failure undoes every key
            clock = time.perf_counter()
            for k, (pose_bone, channels) in enumerate(zip(chain.pose_bones, solved.channels, strict=True)):
                path = pose_bone.path_from_id(rotation_property(pose_bone.rotation_mode))
                for index in range(channels.shape[1]):
                    writer.replace(path, index, pose_bone.name, frames, channels[:, index])
                if solved.y_scales is not None:
                    writer.replace(pose_bone.path_from_id("scale"), 1, pose_bone.name, frames, solved.y_scales[:, k])
            timings["write keys"] = time.perf_counter() - clock
            report_progress(0.55)

            clock = time.perf_counter()
            tips, targets = sample_tips(
                scene, frames, chain, target, lambda i: report_progress(0.55 + 0.45 * (i + 1) / len(frames))
            )
            timings["check keys"] = time.perf_counter() - clock
    finally:
        scene.frame_set(original_frame[0], subframe=original_frame[1])

    error = np.linalg.norm(tips - targets, axis=1)
    return BakeReport(
        armature=armature.name,
        tip_bone=chain.bone_names[-1],
        bones=chain.bone_names,
        frames=frames,
        error=error,
        iterations=solved.iterations,
        unreachable_frames=tuple(int(f) for f in frames[~solved.reached]),
        max_error=float(error.max()),
        seconds=time.perf_counter() - started,
        timings=timings,
        action=writer.action,
    )


@dataclass(frozen=True)
class PoseOptions:
    """What besides the target shapes the solve: a pole target and stretch (the limits come with the chain)."""

    pole_target: bpy.types.Object | None = None
    pole_angle: float = 0.0
    use_stretch: bool = False

    def needed(self, chain: ArmatureChain) -> bool:
        """Whether the chain must be solved on its bones' rotations (``solve_pose``) rather than as points."""
        stretching = self.use_stretch and bool(chain.limits.stretch.any())
        return chain.limits.any or self.pole_target is not None or stretching


def _pose_options(
    armature: bpy.types.Object,
    target: bpy.types.Object,
    chain: ArmatureChain,
    pole_target: object,
    pole_angle: object,
    use_stretch: object,
) -> PoseOptions:
    """Checked pole and stretch arguments."""
    if pole_target is not None:
        if not isinstance(pole_target, bpy.types.Object):
            raise TypeError(f"pole_target must be a Blender Object or None, got {type(pole_target).__name__}")
        if pole_target == armature:
            raise ValueError(f"the pole target cannot be the armature '{armature.name}' itself: pick an Empty")
        if pole_target == target:
            raise ValueError(f"the pole target cannot be the target '{target.name}' too: the chain would not bend")
        _check_evaluated(pole_target, "pole target")
        _check_target_independent(pole_target, chain, "pole target")
    if isinstance(pole_angle, bool) or not isinstance(pole_angle, (int, float)) or not np.isfinite(pole_angle):
        raise ValueError(f"pole_angle must be a finite number of radians, got {pole_angle!r}")
    if not isinstance(use_stretch, bool):
        raise TypeError(f"use_stretch must be True or False, got {use_stretch!r}")
    if use_stretch:
        for pose_bone in chain.pose_bones[1:]:
            if pose_bone.bone.inherit_scale != "FULL":
                raise ValueError(
                    f"use_stretch needs the chain's bones to inherit their parent's scale fully: bone "
                    f"'{pose_bone.name}' has Inherit Scale '{pose_bone.bone.inherit_scale}' (set it to Full)"
                )
    return PoseOptions(pole_target, float(pole_angle), use_stretch)


@dataclass(frozen=True)
class _Solved:
    channels: list[FloatArray]  # per bone, (F, 3 or 4) rotation channel values in its own mode
    y_scales: FloatArray | None  # (F, m) Y scales to key, with stretch
    iterations: NDArray[np.int64]
    reached: NDArray[np.bool_]


def _solve(
    chain: ArmatureChain,
    inputs: Inputs,
    frames: NDArray[np.int64],
    tolerance: float,
    max_iterations: int,
    method: str,
    warm_start: bool,
    pose: PoseOptions,
) -> _Solved:
    """Solve in the chain's root frame and turn the result into each bone's rotation channel values."""
    _check_bone_bases(chain, inputs.bone_bases, frames, pose.use_stretch)
    scale, linear, origin = _split_root_frames(inputs.root_frames, frames, chain.bone_names[0])
    bad = np.flatnonzero(~np.isfinite(inputs.targets).all(axis=1))
    if bad.size:
        raise ValueError(f"the target's location is not a number on frame {frames[bad[0]]}")

    def to_root_frame(points: FloatArray) -> FloatArray:
        """World points into the root frame: rotated back and scaled down to the chain's rest units, by the
        root frame's inverse (not its transpose over its scale: Blender's float32 matrices are slightly
        sheared, by a few 1e-6 where the root bone points nearly opposite its parent, and Blender poses the
        chain with them as they are)."""
        return np.asarray(np.linalg.solve(linear, (points - origin)[..., None])[..., 0], dtype=np.float64)

    targets = to_root_frame(inputs.targets)
    bases = inputs.bone_bases[..., :3, :3]
    input_rotations = matrix_to_quat(bases / np.linalg.norm(bases, axis=-2, keepdims=True))  # (F or 1, m, 4)
    # Blender keeps keys and evaluates poses in float32: aim inside the tolerance by what that can cost,
    # a rounding of each bone's rotation moving the tip by up to the chain's reach (capped at half).
    reach = float(chain.rest.lengths.sum() * scale.max())
    margin = min(0.5 * tolerance, _FLOAT32_ROUNDING * len(chain.bone_names) * reach)
    solver_tolerance = (tolerance - margin) / float(scale.max())
    y_scales = None
    if pose.needed(chain):
        solution = solve_pose(
            chain.rest,
            input_rotations,
            targets,
            limits=chain.limits,
            poles=None if inputs.poles is None else to_root_frame(inputs.poles),
            pole_angle=pose.pole_angle,
            stretch=pose.use_stretch,
            tolerance=solver_tolerance,
            max_iterations=max_iterations,
        )
        rotations = solution.rotations
        if pose.use_stretch:
            rotations, y_scales = inherited_stretch(chain.rest, rotations, solution.scales)
        iterations, reached = solution.iterations, solution.reached
    else:
        start, _ = forward_kinematics(chain.rest, input_rotations[:1])
        points = solve_frames(
            start[0],
            targets,
            tolerance=solver_tolerance,
            max_iterations=max_iterations,
            method=method,
            warm_start=warm_start,
        )
        rotations = local_rotations(chain.rest, points.joints, input_rotations)
        iterations, reached = points.iterations, points.reached
    channels = [
        rotation_channels(rotations[:, k], pose_bone.rotation_mode, inputs.first_channels[k])
        for k, pose_bone in enumerate(chain.pose_bones)
    ]
    return _Solved(channels, y_scales, iterations, reached)


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
        bad = np.flatnonzero(np.abs(scales[:, k] - 1.0).max(axis=1) > _MATRIX_TOLERANCE)
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


def _scene() -> bpy.types.Scene:
    scene = bpy.context.scene
    if scene is None:
        raise RuntimeError("there is no active scene to bake in")
    return scene


def _frames(scene: bpy.types.Scene, start: int | None, end: int | None, step: int) -> NDArray[np.int64]:
    start = scene.frame_start if start is None else start
    end = scene.frame_end if end is None else end
    for name, value in (("frame_start", start), ("frame_end", end), ("frame_step", step)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    if end < start:
        raise ValueError(f"frame_end ({end}) is before frame_start ({start})")
    if step < 1:
        raise ValueError(f"frame_step must be 1 or more, got {step}")
    return np.arange(int(start), int(end) + 1, int(step), dtype=np.int64)


def _check_objects(armature: bpy.types.Object, target: bpy.types.Object) -> None:
    _check_armature(armature)
    if not isinstance(target, bpy.types.Object):
        raise TypeError(f"target must be a Blender Object, got {type(target).__name__}")
    if target == armature:
        raise ValueError(f"the target cannot be the armature '{armature.name}' itself: pick an Empty or another object")
    for role, obj in (("armature", armature), ("target", target)):
        _check_evaluated(obj, role)


def _check_armature(armature: bpy.types.Object) -> None:
    """An armature object whose pose and animation can be edited."""
    armature_data(armature)
    library: bpy.types.Library | None = armature.library
    if library is not None:
        raise ValueError(
            f"armature '{armature.name}' is linked from the library '{library.filepath}' and cannot be "
            "edited: make it local (or a library override) first"
        )
    override: bpy.types.IDOverrideLibrary | None = armature.override_library
    if override is not None and override.is_system_override:
        raise ValueError(
            f"armature '{armature.name}' is a system library override and cannot be edited: make it editable first"
        )
    if armature.mode == "EDIT":
        raise ValueError(f"armature '{armature.name}' is in Edit Mode: switch to Object or Pose Mode to bake")


def _check_evaluated(obj: bpy.types.Object, role: str) -> None:
    """Blender only evaluates objects in the view layer that are not disabled in viewports (hidden with the
    eye icon is fine): anything else would be read stale and baked wrong."""
    view_layer = bpy.context.view_layer
    assert view_layer is not None
    in_layer = view_layer.objects.get(obj.name) == obj
    if not in_layer or obj.hide_viewport or not (obj.visible_get() or obj.hide_get()):
        raise ValueError(
            f"the {role} '{obj.name}' is not evaluated in the view layer '{view_layer.name}': it is not in it, "
            "or it or its collection is disabled in viewports; link it to the scene and enable it to bake"
        )


def _check_target_independent(target: bpy.types.Object, chain: ArmatureChain, role: str = "target") -> None:
    """The target (or pole) must not move with the chain (it would run away from the bones following it)."""
    descendants = set(chain.bone_names)
    for bone in armature_data(chain.armature).bones:
        if bone.parent is not None and bone.parent.name in descendants:
            descendants.add(bone.name)
    carrier: bpy.types.Object | None = target
    while carrier is not None:
        if carrier.parent == chain.armature and carrier.parent_type == "BONE" and carrier.parent_bone in descendants:
            raise ValueError(
                f"the {role} '{target.name}' is parented to the bone '{carrier.parent_bone}', which the chain "
                "moves: the target would move with the bake"
            )
        carrier = carrier.parent


def _check_writable(
    armature: bpy.types.Object, action_name: str | None, remedy: str = "bake into another action (action_name)"
) -> None:
    """The keys can go into the action: not linked, not shared with other objects (``remedy`` says what to do
    then), the armature not in NLA tweak mode."""
    anim = armature.animation_data
    if anim is not None and anim.use_tweak_mode:
        raise ValueError(f"armature '{armature.name}' is in NLA tweak mode: leave it before baking")
    if action_name is not None and not isinstance(action_name, str):
        raise TypeError(f"action_name must be a string, got {type(action_name).__name__}")
    action = bpy.data.actions.get(action_name) if action_name else (anim.action if anim is not None else None)
    if action is None:
        return
    library: bpy.types.Library | None = action.library
    if library is not None:
        raise ValueError(
            f"the action '{action.name}' is linked from the library '{library.filepath}' and cannot take "
            "new keys: make it local first"
        )
    sharing = compat.objects_sharing_channels(action, armature)
    if sharing:
        raise ValueError(
            f"the action '{action.name}' also animates {', '.join(repr(name) for name in sharing)}: in this "
            "Blender version an Action moves every object it is assigned to with all its channels; "
            f"{remedy}"
        )
