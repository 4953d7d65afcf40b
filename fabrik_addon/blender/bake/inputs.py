"""A chain's inputs: what the bake reads of it on each frame (``Inputs``), made from rows of the matrices
Blender evaluated (``foreach_get``, float32, column after column), the same way for a frame walk and the live
preview; those inputs in the chain's root frame, where the solver works (``chain_frame``), with the checks of
what the scene did on each frame read (a scaled or moved chain bone, a non-uniform scale above the chain, a
number that is not finite), which can only be made once the frames are read; and how a solved unit moves the
root frames of chains hanging below its bones (``Motion``). Arithmetic on arrays: ``read`` fills the rows."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...setting_names import named
from ...solver import (
    ChainRest,
    FloatArray,
    TreeRest,
    cross,
    forward_kinematics,
    matrix_to_quat,
    tree_forward_kinematics,
)
from ..rig import ArmatureChain, animated_paths, bone_path


@dataclass(frozen=True)
class Inputs:
    """What Blender evaluates on each baked frame, before the bake.

    Attributes
    ----------
    targets : ndarray, shape (F, 3)
        The target's world location (an object's, or a target bone's head).
    root_frames : ndarray, shape (F, 4, 4)
        World matrix of the chain root's frame without its own rotation: where the chain hangs from.
    bone_bases : ndarray, shape (F, m, 4, 4) or (1, m, 4, 4)
        Each chain bone's ``matrix_basis`` (its own location, rotation and scale); one frame if the chain's
        bones are not animated.
    first_channels : list of ndarray, shape (4,) or (3,)
        Each chain bone's rotation values in its own rotation mode on the first frame: the keys written
        start next to them (same quaternion sign, Euler angles within half a turn).
    poles : ndarray, shape (F, 3), or None
        The pole target's world location (or its bone's head), if there is one.
    target_rotations : ndarray, shape (F, 3, 3), or None
        The target's world orientation (its matrix's columns made unit length), when the tip turns with it.
    tip_heads : ndarray, shape (F, 3), or None
        For a chain whose goal is its own tip as animated (no target): the tip bone's head in world space;
        ``targets`` is then its tail and ``target_rotations`` its orientation.
    """

    targets: FloatArray
    root_frames: FloatArray
    bone_bases: FloatArray
    first_channels: list[FloatArray]
    poles: FloatArray | None = None
    target_rotations: FloatArray | None = None
    tip_heads: FloatArray | None = None


def inputs_from_rows(
    world: NDArray[np.float32],
    root_pose: NDArray[np.float32],
    targets: NDArray[np.float32],
    bases: NDArray[np.float32],
    first_channels: list[FloatArray],
    poles: NDArray[np.float32] | None,
    use_rotation: bool,
    *,
    tips: NDArray[np.float32] | None = None,
) -> Inputs:
    """A chain's ``Inputs`` from the matrices Blender evaluated, as rows of 16 filled column after column
    (``foreach_get``), one row per frame: the armature's world matrix (F, 16), the root bone's posed matrix
    (F, 16), the target's (and pole's) world matrix (F, 16), each chain bone's ``matrix_basis`` (F or 1, m,
    16), and each bone's rotation values in its own mode on the first frame; with ``tips`` (F, 2, 3), the tip
    bone's head and tail in armature space (and ``targets`` its matrix there), for a chain whose goal is its own
    tip as animated. What a frame walk and the live preview read both become ``Inputs`` here, the same way."""
    # The root's posed matrix is (its parents) @ T(location) @ R(rotation) @ S(scale): drop R and S (S is
    # 1 but for a stretched root), its own matrix_basis (read on every frame where the chain is animated).
    basis = matrices(bases)
    root_frames = matrices(world) @ matrices(root_pose)
    root_frames[:, :3, :3] = root_frames[:, :3, :3] @ inverse(basis[:, 0, :3, :3])
    goals = matrices(targets)
    heads = None
    if tips is not None:  # the tip bone's matrix, head and tail in armature space: into world space
        goals = matrices(world) @ goals
        heads = transformed(world, np.ascontiguousarray(tips[:, 0]))
        goals[:, :3, 3] = transformed(world, np.ascontiguousarray(tips[:, 1]))
    rotations = None
    if use_rotation:
        linear = goals[:, :3, :3]
        rotations = linear / np.linalg.norm(linear, axis=1, keepdims=True)
    return Inputs(
        targets=np.ascontiguousarray(goals[:, :3, 3]),
        root_frames=root_frames,
        bone_bases=basis,
        first_channels=first_channels,
        poles=None if poles is None else np.ascontiguousarray(matrices(poles)[:, :3, 3]),
        target_rotations=rotations,
        tip_heads=heads,
    )


def inverse(m: FloatArray) -> FloatArray:
    """The inverses of 3 x 3 matrices (..., 3, 3), by their adjugates: the rows of the inverse are the cross
    products of the columns over the determinant. (numpy's batched inverse calls multithreaded LAPACK once
    per matrix, which costs milliseconds for a few hundred frames; the cross products are written out, as
    ``np.cross`` computes them, without its cost per call.)"""
    c0, c1, c2 = m[..., :, 0], m[..., :, 1], m[..., :, 2]
    rows = np.stack([cross(c1, c2), cross(c2, c0), cross(c0, c1)], axis=-2)
    determinant = np.einsum("...i,...i->...", c0, rows[..., 0, :])
    return np.asarray(rows / determinant[..., None, None], dtype=np.float64)


def affine_inverse(m: FloatArray) -> FloatArray:
    """The inverses of affine 4 x 4 matrices (..., 4, 4), last row (0, 0, 0, 1): the linear part's by
    ``inverse``, the translation taken back through it (numpy's batched inverse took 2 to 20 ms for a few
    hundred frames, a chain hanging below another, most of a motion-capture bake's solve)."""
    result = np.zeros(m.shape)
    linear = result[..., :3, :3] = inverse(m[..., :3, :3])
    result[..., :3, 3] = -np.einsum("...ij,...j->...i", linear, m[..., :3, 3])
    result[..., 3, 3] = 1.0
    return result


def matrices(rows: NDArray[np.float32]) -> FloatArray:
    """Matrices (..., 4, 4) from rows (..., 16) filled column after column."""
    return np.swapaxes(rows.reshape(*rows.shape[:-1], 4, 4), -1, -2).astype(np.float64)


def transformed(world: NDArray[np.float32], points: NDArray[np.float32]) -> FloatArray:
    """``Matrix @ Vector`` of ``mathutils`` for rows of world matrices (F, 16) and points (F, 3), to the bit:
    each product of an element and a coordinate rounded to float32, the products summed in double precision,
    the sum rounded to float32."""
    columns = world.reshape(-1, 4, 4)  # [frame, column, row]
    products = columns[:, :3, :3] * points[:, :, None]  # float32, as mathutils multiplies
    total = products[:, 0].astype(np.float64) + products[:, 1] + products[:, 2] + columns[:, 3, :3]
    return np.asarray(total.astype(np.float32), dtype=np.float64)


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

    @property
    def matrices(self) -> FloatArray:
        """The root frame as world matrices (F, 4, 4)."""
        matrices = np.zeros((len(self.linear), 4, 4))
        matrices[:, :3, :3], matrices[:, :3, 3], matrices[:, 3, 3] = self.linear, self.origin, 1.0
        return matrices


@dataclass(frozen=True)
class Motion:
    """How a solved unit moves its bones, on every frame: what hangs below one of them (another chain's root
    frame) moves with it.

    Attributes
    ----------
    base : ndarray, shape (F, 4, 4)
        The unit's root frame in world space, where the poses below are.
    bones : tuple of str
    before, after : ndarray, shape (F or 1, b, 4, 4) and (F, b, 4, 4)
        Each bone's posed matrix in the root frame, as read and as solved (without a stretched bone's scale:
        nothing hangs below one, see ``order``).
    """

    base: FloatArray
    bones: tuple[str, ...]
    before: FloatArray
    after: FloatArray

    @classmethod
    def of_chain(cls, root: ChainFrame, rest: ChainRest, bones: tuple[str, ...], solved: FloatArray) -> Motion:
        """A chain solved to local rotations ``solved`` (F, m, 4) from ``root.rotations``."""
        return cls(
            root.matrices,
            bones,
            _posed(*forward_kinematics(rest, root.rotations)),
            _posed(*forward_kinematics(rest, solved)),
        )

    @classmethod
    def of_tree(
        cls, root: ChainFrame, rest: TreeRest, bones: tuple[str, ...], start: FloatArray, solved: FloatArray
    ) -> Motion:
        """A tree solved to local rotations ``solved`` (F, b, 4) from ``start`` (F or 1, b, 4)."""
        heads, _, before = tree_forward_kinematics(rest, start)
        solved_heads, _, after = tree_forward_kinematics(rest, solved)
        return cls(root.matrices, bones, _posed(heads, before), _posed(solved_heads, after))

    def moved(self, bone: str) -> FloatArray:
        """The world transform (F, 4, 4) that takes what hung below ``bone`` as read to where it hangs once
        the unit is solved: ``base @ after @ before^-1 @ base^-1``."""
        k = self.bones.index(bone)
        change = self.after[:, k] @ affine_inverse(self.before[:, k])
        return np.asarray(self.base @ change @ affine_inverse(self.base), dtype=np.float64)


def _posed(heads: FloatArray, orientations: FloatArray) -> FloatArray:
    """Bones' posed matrices (F, b, 4, 4) from their heads (F, b(+1), 3) and orientations (F, b, 3, 3)."""
    frames, bones = orientations.shape[:2]
    matrices = np.zeros((frames, bones, 4, 4))
    matrices[..., :3, :3], matrices[..., :3, 3], matrices[..., 3, 3] = orientations, heads[:, :bones], 1.0
    return matrices


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
    linear, origin = inputs.root_frames[:, :3, :3], inputs.root_frames[:, :3, 3]
    found = _one_frame(inputs, stretch) if len(inputs.root_frames) == len(inputs.bone_bases) == 1 else None
    if found is not None:
        scale, rotations = found
    else:
        _check_bone_bases(chain, inputs.bone_bases, frames, stretch)
        scale = _root_scales(inputs.root_frames, frames, chain.bone_names[0])
        bases = inputs.bone_bases[..., :3, :3]
        rotations = matrix_to_quat(bases / np.linalg.norm(bases, axis=-2, keepdims=True))  # (F or 1, m, 4)
    # Blender keeps keys and evaluates poses in float32: aim inside the tolerance by what that can cost,
    # a rounding of each bone's rotation moving the tip by up to the chain's reach (capped at half).
    reach = float(chain.rest.lengths.sum() * scale.max())
    margin = min(0.5 * tolerance, _FLOAT32_ROUNDING * len(chain.bone_names) * reach)
    return ChainFrame(scale, linear, origin, rotations, (tolerance - margin) / float(scale.max()))


def _one_frame(inputs: Inputs, stretch: bool) -> tuple[FloatArray, FloatArray] | None:
    """``chain_frame``'s root scale (1,) and bone rotations (1, m, 4) for one frame, on plain floats with the
    arrays' arithmetic (the same numbers to the bit; the live preview's frames), where every check clearly
    passes; None where a bone is scaled (to zero along Y, with stretch, too) or moved, or the root frame is near
    the bounds of a rotation times a uniform scale: the arrays check those, and name the problem."""
    normalized = []
    for k, rows in enumerate(inputs.bone_bases[0].tolist()):
        (a, b, c, x), (d, e, f, y), (g, h, i, z) = rows[:3]
        if k > 0 and (x or y or z):
            return None
        sizes = (math.sqrt(a * a + d * d + g * g), math.sqrt(b * b + e * e + h * h), math.sqrt(c * c + f * f + i * i))
        if not min(sizes) > 0.0 or any(
            abs(size - 1.0) > 0.5 * _MATRIX_TOLERANCE for j, size in enumerate(sizes) if not (stretch and j == 1)
        ):
            return None
        sa, sb, sc = sizes
        normalized.append(((a / sa, b / sb, c / sc), (d / sa, e / sb, f / sc), (g / sa, h / sb, i / sc)))
    (a, b, c, _), (d, e, f, _), (g, h, i, _) = inputs.root_frames[0].tolist()[:3]
    determinant = a * (e * i - h * f) + d * (h * c - b * i) + g * (b * f - e * c)  # as _root_scales
    if not determinant > 0.0:
        return None
    scale = float(np.cbrt(determinant))  # numpy's, which may round otherwise than math.cbrt
    r = [[a / scale, b / scale, c / scale], [d / scale, e / scale, f / scale], [g / scale, h / scale, i / scale]]
    deviation = max(
        abs(r[0][m] * r[0][n] + r[1][m] * r[1][n] + r[2][m] * r[2][n] - (m == n)) for m in range(3) for n in range(3)
    )
    if not deviation <= 0.5 * _MATRIX_TOLERANCE:
        return None
    return np.array([scale]), matrix_to_quat(np.array([normalized]))


def _check_finite(chain: ArmatureChain, inputs: Inputs, frames: NDArray[np.int64]) -> None:
    """Every number read from the scene is finite (NaN or infinity would pass the other checks, unnoticed, and
    be keyed); else a ValueError naming what and on which frame."""
    checks = [inputs.bone_bases, inputs.root_frames, inputs.targets]
    if inputs.poles is not None:
        checks.append(inputs.poles)
    if all(np.isfinite(values).all() for values in checks):  # as nearly always: one call each, then nothing to name
        return

    def first_bad(values: FloatArray) -> int | None:
        bad = np.flatnonzero(~np.isfinite(values.reshape(len(values), -1)).all(axis=1))
        return int(frames[bad[0]]) if bad.size else None

    for k, name in enumerate(chain.bone_names):
        frame = first_bad(inputs.bone_bases[:, k])
        if frame is not None:
            raise ValueError(f"bone '{name}' has a location, rotation or scale that is not a number on frame {frame}")
    root = f"the transform above the chain's root bone '{chain.bone_names[0]}' (armature object or parent bones)"
    named = [(inputs.root_frames, root), (inputs.targets, "the target's location")]
    if inputs.poles is not None:
        named.append((inputs.poles, "the pole target's location"))
    for values, what in named:
        frame = first_bad(values)
        if frame is not None:
            raise ValueError(f"{what} is not a number on frame {frame}")


def _root_scales(root_frames: FloatArray, frames: NDArray[np.int64], root_bone: str) -> FloatArray:
    """The uniform scale (F,) of the chain's root frames, their linear part checked to be a rotation times it,
    to within what float32 allows."""
    linear = root_frames[:, :3, :3]
    c0, c12 = linear[:, :, 0], cross(linear[:, :, 1], linear[:, :, 2])
    determinant = c0[:, 0] * c12[:, 0] + c0[:, 1] * c12[:, 1] + c0[:, 2] * c12[:, 2]
    scale: FloatArray = np.cbrt(np.abs(determinant))
    rotation = linear / np.where(scale > 0, scale, 1.0)[:, None, None]
    deviation = np.abs(np.swapaxes(rotation, 1, 2) @ rotation - np.eye(3)).max(axis=(1, 2))
    bad = np.flatnonzero((determinant <= 0) | (deviation > _MATRIX_TOLERANCE))
    if bad.size:
        raise ValueError(
            f"the chain's root bone '{root_bone}' is scaled non-uniformly, mirrored or to zero on frame "
            f"{frames[bad[0]]} (by the armature object or a parent bone): FABRIK needs a uniform scale"
        )
    return scale


def _check_bone_bases(chain: ArmatureChain, bases: FloatArray, frames: NDArray[np.int64], stretch: bool) -> None:
    """Chain bones must have unit scale (but along Y when stretching, which replaces it), and (but for the
    root) no location: the offsets between bones are rigid."""
    scales = np.linalg.norm(bases[..., :3, :3], axis=-2)  # (F, m, 3): length of each basis column
    if stretch:
        scales[..., 1] = 1.0
    locations = np.linalg.norm(bases[..., :3, 3], axis=-1)  # (F, m)
    scaled = ~(np.abs(scales - 1.0).max(axis=-1) <= _MATRIX_TOLERANCE)  # (F, m); NaN is bad too
    # As nearly always: no bone scaled, none but the root with a location; then there is nothing to look up
    # bone by bone (the root's location moves the whole chain; a location under the tolerance is checked below).
    if not (scaled.any() or (locations[:, 1:] > 0.0).any()):
        return
    for k, pose_bone in enumerate(chain.pose_bones):
        bad = np.flatnonzero(scaled[:, k])
        if bad.size:
            raise ValueError(
                f"bone '{pose_bone.name}' is scaled ({np.round(scales[bad[0], k], 4).tolist()}) on frame "
                f"{frames[bad[0]]}: bones of the chain must keep a scale of 1 (but along Y with {named('use_stretch')})"
            )
        if k == 0 or pose_bone.bone.use_connect:
            continue  # the root's location moves the whole chain; a connected bone ignores its location
        bad = np.flatnonzero(locations[:, k] > _MATRIX_TOLERANCE * pose_bone.bone.length)
        if bad.size and f"{bone_path(pose_bone.name)}.location" in animated_paths(chain.armature):
            raise ValueError(
                f"bone '{pose_bone.name}' moves by its animated Location on frame {frames[bad[0]]} (root motion, "
                f"as motion capture has): the chain can start at it but not run through it; shorten the chain to "
                f"{named('chain_length')} {len(chain.bone_names) - k} so that it starts at '{pose_bone.name}', or to "
                f"{len(chain.bone_names) - k - 1} to start below it"
            )
        if bad.size:
            raise ValueError(
                f"bone '{pose_bone.name}' is moved from its rest position by its Location on frame "
                f"{frames[bad[0]]}: the offsets between the chain's bones must stay rigid, clear it first"
            )
