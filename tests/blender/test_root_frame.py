"""One frame's inputs are set in the chain's root frame on plain floats (the live preview's updates): the same
scale, rotations and tolerance to the bit as the arrays give that frame among others, and the same error where
a check fails (a scaled or moved bone, a root scaled non-uniformly or mirrored), which the arrays name."""

from __future__ import annotations

import numpy as np
from rigs import make_chain

from fabrik_addon.blender.bake import Inputs
from fabrik_addon.blender.bake.inputs import affine_inverse, chain_frame
from fabrik_addon.blender.rig import read_chain
from fabrik_addon.solver import FloatArray
from fabrik_addon.solver.core import quat_normalize, quat_to_matrix


def _matrix(rng: np.random.Generator, scale: float) -> FloatArray:
    matrix = np.eye(4)
    matrix[:3, :3] = quat_to_matrix(quat_normalize(rng.normal(size=4))) * scale
    matrix[:3, 3] = rng.normal(size=3)
    return matrix.astype(np.float32).astype(np.float64)  # as Blender keeps it


def _solved(*args: object) -> object:
    try:
        return chain_frame(*args)
    except ValueError as error:
        return str(error)


def test_one_frame_is_set_in_its_root_frame_as_among_many() -> None:
    armature, names = make_chain(4, connected=False)
    chain = read_chain(armature, names[-1], 4)
    rng = np.random.default_rng(21)
    kinds = {"passed": 0, "refused": 0}
    for case in range(400):
        root = _matrix(rng, float(rng.uniform(0.1, 10.0)))
        bases = np.stack([_matrix(rng, 1.0) for _ in names])
        bases[1:, :3, 3] = 0.0  # only the root bone has a location, as a valid chain
        flaw = case % 8
        if flaw == 1:  # a bone scaled (along Y: allowed with stretch)
            bases[int(rng.integers(4)), :3, int(rng.integers(3))] *= rng.choice([1.00004, 1.0002, 1.5])
        elif flaw == 2:  # a bone moved from its rest
            bases[int(rng.integers(1, 4)), :3, 3] = rng.normal(size=3) * rng.choice([1e-7, 1e-3])
        elif flaw == 3:  # the root frame scaled non-uniformly, or mirrored
            root[:3, int(rng.integers(3))] *= rng.choice([1.00004, 1.0003, -1.0])
        elif flaw == 4:  # a bone scaled to nothing along Y: with stretch, not a number to solve from
            bases[int(rng.integers(4)), :3, 1] = 0.0
        targets = rng.normal(size=(1, 3))
        for stretch in (False, True):
            with np.errstate(invalid="ignore", divide="ignore"):
                one = _solved(chain, stretch, Inputs(targets, root[None], bases[None], []), np.array([7]), 1e-3)
                two = _solved(
                    chain, stretch, Inputs(np.repeat(targets, 2, 0), np.stack([root] * 2), np.stack([bases] * 2), []),
                    np.array([7, 7]), 1e-3,
                )  # fmt: skip
            if isinstance(two, str):
                assert one == two
                kinds["refused"] += 1
                continue
            assert not isinstance(one, str)
            for field in ("scale", "linear", "origin", "rotations"):
                assert np.array_equal(getattr(one, field)[0], getattr(two, field)[0], equal_nan=True), field
            assert one.tolerance == two.tolerance
            kinds["passed"] += 1
    assert kinds["passed"] > 300
    assert kinds["refused"] > 50


def test_affine_inverse_undoes_the_matrices() -> None:
    """What takes a chain below another along (``Motion.moved``) inverts its matrices without LAPACK: each
    affine matrix (a rotation times a scale, sheared as float32 leaves it, and a translation) times its inverse
    is the identity, to rounding."""
    rng = np.random.default_rng(22)
    matrices = np.stack([_matrix(rng, float(rng.uniform(0.01, 100.0))) for _ in range(200)])
    matrices[:, :3, :3] += rng.normal(size=(200, 3, 3)) * 1e-6
    np.testing.assert_allclose(affine_inverse(matrices) @ matrices, np.broadcast_to(np.eye(4), (200, 4, 4)), atol=1e-12)
