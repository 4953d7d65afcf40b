"""Chains that share bones, solved as one tree (several end effectors): IK constraints sharing a trunk, a hand
of five fingers, a Rigify torso reaching with both arms; conflicting targets and weights. Blender's
evaluation of the keys is the oracle; targets come from poses the rig itself takes, so all can be reached."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from rigs import hand_rig, keyed_empty, posed_targets, rigify_metarig, y_rig

from fabrik_addon import api
from fabrik_addon.settings import BakeSettings, ChainSettings, FrameRange

from .oracle import FloatArray, fcurve_keys, file_digest

FRAMES = range(1, 31)
TOLERANCE = 1e-3


def with_ik(armature: bpy.types.Object, tips: list[str], targets: list[bpy.types.Object], count: int) -> None:
    for tip, target in zip(tips, targets, strict=True):
        ik = armature.pose.bones[tip].constraints.new("IK")
        ik.target, ik.chain_count = target, count


def tips_on_targets(armature: bpy.types.Object, tips: list[str], targets: list[bpy.types.Object]) -> FloatArray:
    """Per frame and tip, the distance from the tip's tail to its target, as Blender evaluates the scene."""
    scene = bpy.context.scene
    errors = np.empty((len(FRAMES), len(tips)))
    for i, frame in enumerate(FRAMES):
        scene.frame_set(frame)
        for k, (tip, target) in enumerate(zip(tips, targets, strict=True)):
            tail = armature.matrix_world @ armature.pose.bones[tip].tail
            errors[i, k] = (tail - target.matrix_world.translation).length
    return errors


@pytest.mark.parametrize(("build", "count"), [(y_rig, 10), (hand_rig, 6)], ids=["Y", "hand"])
def test_ik_constraints_sharing_bones_bake_as_one_tree(build: object, count: int) -> None:
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    armature, tips, bones = build()
    targets = posed_targets(armature, tips, bones, FRAMES)
    with_ik(armature, tips, targets, count)
    report = api.bake_ik_constraints(armature)
    errors = tips_on_targets(armature, tips, targets)
    np.testing.assert_allclose(errors, np.array([c.error for c in report.chains]).T, atol=1e-6)
    assert (errors <= TOLERANCE).all(axis=1).mean() >= 0.99  # every tip on target together
    assert report.evaluation == "sandbox"


def conflicting(weights: tuple[float, float]) -> tuple[FloatArray, dict[tuple[str, int], list[tuple[float, float]]]]:
    """A Y in a fresh file whose two tips pull toward targets farther apart than the branches allow: each
    chain's errors (2, F) and the keys."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature, tips, _ = y_rig()
    far = [keyed_empty("FarL", [(1, (4.0, 0.0, 3.0))]), keyed_empty("FarR", [(1, (-4.0, 0.0, 3.0))])]
    chains = tuple(
        ChainSettings(armature, target, tip, 10, weight=weight)
        for tip, target, weight in zip(tips, far, weights, strict=True)
    )
    report = api.bake_settings(BakeSettings(chains, FrameRange(1, 3)))
    return np.array([chain.error for chain in report.chains]), fcurve_keys(armature)


def test_conflicting_targets_give_a_deterministic_compromise_shifted_by_the_weights() -> None:
    even, keys = conflicting((1.0, 1.0))
    again, keys_again = conflicting((1.0, 1.0))
    assert keys_again == keys  # deterministic, to the bit
    assert np.array_equal(again, even)
    assert np.isfinite(even).all()
    assert (even > 0.5).all()  # both miss: no pose reaches both
    np.testing.assert_allclose(even[0], even[1], rtol=1e-3)  # a mirrored Y misses both alike
    heavy, _ = conflicting((4.0, 1.0))
    assert heavy[0].max() < even[0].min()  # the heavier misses less
    assert heavy[1].min() > even[1].max()


def test_a_rigify_torso_reaches_with_both_arms() -> None:
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    rig = rigify_metarig("human")
    bpy.ops.object.mode_set(mode="OBJECT")
    arms = [f"forearm.{side}" for side in ("L", "R")]
    torso = ["spine", "spine.001", "spine.002", "spine.003"]
    bones = [*torso, *(f"{part}.{side}" for side in ("L", "R") for part in ("shoulder", "upper_arm", "forearm"))]
    targets = posed_targets(rig, arms, bones, FRAMES, spread=0.3)
    chains = tuple(ChainSettings(rig, target, tip, 7) for tip, target in zip(arms, targets, strict=True))
    report = api.bake_settings(BakeSettings(chains))
    errors = tips_on_targets(rig, arms, targets)
    assert (errors <= TOLERANCE).all(axis=1).mean() >= 0.99
    assert set(report.chains[0].bones) & set(report.chains[1].bones) == set(torso)


def test_a_tree_with_limits_is_refused_for_now() -> None:
    armature, tips, bones = y_rig()
    targets = posed_targets(armature, tips, bones, range(1, 3))
    armature.pose.bones[tips[0]].use_ik_limit_x = True
    chains = tuple(ChainSettings(armature, t, tip, 10) for tip, t in zip(tips, targets, strict=True))
    before = file_digest()
    with pytest.raises(ValueError, match=r"share bones and are solved as one tree, which does not honour IK limits"):
        api.bake_settings(BakeSettings(chains, FrameRange(1, 2)))
    assert file_digest() == before
