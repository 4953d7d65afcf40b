"""A chain's inputs in its root frame, where the solver works, and the checks of what the scene did on each
frame read (a scaled or moved chain bone, a non-uniform scale above the chain, a number that is not finite),
which can only be made once the frames are read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...solver import FloatArray, matrix_to_quat
from ..rig import ArmatureChain
from .read import Inputs

#: How far a matrix may be from a rotation times a uniform scale (Blender stores matrices in float32).
_MATRIX_TOLERANCE = 1e-4
#: Rotation error, in radians, that storing and evaluating one bone's rotation in float32 can add (a few
#: units in the last place of 2**-24).
_FLOAT32_ROUNDING = 2.5e-7


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


def chain_frame(
    chain: ArmatureChain, stretch: bool, inputs: Inputs, frames: NDArray[np.int64], tolerance: float
) -> ChainFrame:
    """Check what the scene did on each frame and set the chain's inputs in its root frame.

    Raises
    ------
    ValueError
        For what the scene does on some frame that the solve cannot honour (naming the frame): a scaled or
        moved chain bone, a non-uniform scale above the chain, a number that is not finite.
    """
    _check_finite(chain, inputs, frames)
    _check_bone_bases(chain, inputs.bone_bases, frames, stretch)
    scale, linear, origin = _split_root_frames(inputs.root_frames, frames, chain.bone_names[0])
    bases = inputs.bone_bases[..., :3, :3]
    rotations = matrix_to_quat(bases / np.linalg.norm(bases, axis=-2, keepdims=True))  # (F or 1, m, 4)
    # Blender keeps keys and evaluates poses in float32: aim inside the tolerance by what that can cost,
    # a rounding of each bone's rotation moving the tip by up to the chain's reach (capped at half).
    reach = float(chain.rest.lengths.sum() * scale.max())
    margin = min(0.5 * tolerance, _FLOAT32_ROUNDING * len(chain.bone_names) * reach)
    return ChainFrame(scale, linear, origin, rotations, (tolerance - margin) / float(scale.max()))


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
