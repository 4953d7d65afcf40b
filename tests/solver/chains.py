"""Random chains and targets for the solver tests, and the invariants every solution must keep."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

from fabrik_addon.solver import ChainRest, JointLimits
from fabrik_addon.solver.core import inner_radius, quat_normalize, quat_to_matrix

FloatArray = NDArray[np.float64]
#: Joints of ``random_limited_chain``: a hinge about X; a cone (X and Z limited); a cone with a twist limit; free.
KINDS = ("hinge", "cone", "cone+twist", "free")


def random_chain(rng: np.random.Generator, segments: int) -> FloatArray:
    """A chain in a random pose: overall scale from 1e-3 to 1e3 (six orders of magnitude), segment lengths
    varying by up to 10x either way within the chain, root somewhere near the origin."""
    scale = 10 ** rng.uniform(-3, 3)
    lengths = scale * 10 ** rng.uniform(-1, 1, size=segments)
    directions = rng.normal(size=(segments, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    root = rng.normal(size=3) * scale
    chain: FloatArray = np.vstack([root, root + np.cumsum(lengths[:, None] * directions, axis=0)])
    return chain


def lengths_of(joints: FloatArray) -> FloatArray:
    return np.asarray(np.linalg.norm(np.diff(joints, axis=-2), axis=-1), dtype=np.float64)


def shell(joints: FloatArray) -> tuple[float, float]:
    """(inner radius, reach) of the chain around its root."""
    lengths = lengths_of(joints)
    return inner_radius(lengths), float(lengths.sum())


def points_at(rng: np.random.Generator, root: FloatArray, radii: FloatArray) -> FloatArray:
    """Points at the given distances from ``root`` in random directions, shape (len(radii), 3)."""
    directions = rng.normal(size=(len(radii), 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return root + directions * np.asarray(radii)[:, None]


@st.composite
def chain_and_targets(draw: st.DrawFn, min_joints: int = 2, max_joints: int = 128) -> tuple[FloatArray, FloatArray]:
    """A random chain of ``min_joints`` to ``max_joints`` joints and a few targets anywhere from the root out
    to twice its reach."""
    joints = draw(st.integers(min_joints, max_joints))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    chain = random_chain(rng, joints - 1)
    _, reach = shell(chain)
    targets = points_at(rng, chain[0], rng.uniform(0, 2 * reach, size=4))
    return chain, targets


def assert_chain_kept(result: FloatArray, start: FloatArray) -> None:
    """The solution keeps the root where it started and every segment length (1e-9 relative), with no NaN."""
    assert np.isfinite(result).all()
    np.testing.assert_array_equal(result[..., 0, :], np.broadcast_to(start[0], result[..., 0, :].shape))
    np.testing.assert_allclose(
        lengths_of(result),
        np.broadcast_to(lengths_of(start), (*result.shape[:-2], len(start) - 1)),
        rtol=1e-9,
    )


def random_limited_chain(rng: np.random.Generator, bones: int) -> tuple[ChainRest, JointLimits, list[str]]:
    """Random rest frames and lengths (some bones disconnected), each bone a random kind of joint."""
    rest_rotations = random_rest_rotations(rng, bones)
    offsets = np.zeros((bones, 3))
    offsets[:, 1] = rng.uniform(0.2, 2.0, bones)
    disconnected = rng.random(bones) < 0.2
    offsets[disconnected] += rng.normal(size=(int(disconnected.sum()), 3)) * 0.2
    limits, kinds = random_limits(rng, bones)
    return ChainRest(rest_rotations, offsets), limits, kinds


def random_rest_rotations(rng: np.random.Generator, bones: int) -> FloatArray:
    """Each bone's rest frame relative to its parent's, (bones, 3, 3): mostly small turns; the root's the
    identity."""
    rest_rotations = quat_to_matrix(quat_normalize(rng.normal(size=(bones, 4)) * [3, 1, 1, 1]))
    rest_rotations[0] = np.eye(3)
    return rest_rotations


def random_limits(rng: np.random.Generator, bones: int) -> tuple[JointLimits, list[str]]:
    """Each bone a random kind of joint (``KINDS``) with random ranges; the limits and the kinds."""
    kinds = [KINDS[i] for i in rng.integers(0, len(KINDS), bones)]
    lock = np.array([[False, k == "hinge", k == "hinge"] for k in kinds])
    use = np.array([[k != "free", k == "cone+twist", k in ("cone", "cone+twist")] for k in kinds])
    limits = JointLimits.of(
        bones,
        lock=lock,
        use_limit=use,
        minimum=-rng.uniform(0, np.pi, (bones, 3)),
        maximum=rng.uniform(0, np.pi, (bones, 3)),
    )
    return limits, kinds
