"""F-curves with a Cycles modifier (a looped clip): keys written into one would be repeated by the cycle, changing
frames far outside those written (a bake of frames 300-500 of the looped walk moved its bones up to 0.75 m on
every frame after 500, Reduce Keys up to 2.9 m), so a bake, a planting or Reduce Keys into the Action is refused
naming the F-curve and what to do, with nothing changed; a bake as a layer leaves the loop playing as it did
outside its frames."""

from __future__ import annotations

import re
from collections.abc import Callable

import bpy
import edit_scenes
import numpy as np
import pytest

from fabrik_addon import api
from fabrik_addon.blender import compat

from .oracle import FloatArray, file_digest

#: The frames baked: over the end of the clip's keys (1-360) and into its first repeat.
BAKED = range(300, 501)
#: Frames outside the bake that the loop plays: before it, and the repeats after it.
OUTSIDE = [*range(1, 300), *range(501, 721, 3)]


@pytest.fixture(autouse=True)
def registered() -> None:
    api.armatures_with_chains()  # the chain list's settings, where the add-on is not enabled


def _looped_walk() -> bpy.types.Object:
    """The committed walk with its chains and targets made from its animation, every F-curve cycled."""
    armature = edit_scenes.clip_with_chains("walk")
    for fcurve in compat.assigned_fcurves(armature):
        fcurve.modifiers.new("CYCLES")
    bpy.context.scene.frame_end = OUTSIDE[-1]
    api.targets_from_animation(armature, replace=True, frame_end=OUTSIDE[-1])
    return armature


def _points(armature: bpy.types.Object, frames: list[int]) -> FloatArray:
    bones = [bone.name for bone in armature.data.bones]
    return edit_scenes.bone_points(armature, bones, frames)


_CYCLED = r"the F-curve pose\.bones\[\"\w+\"\]\.\w+\[\d\] of 'cmu_131_01_walk' has a Cycles modifier, which repeats"


@pytest.mark.parametrize(
    ("write", "remedy"),
    [
        ("bake", "set Output (output) to 'layer' to key a layer over the Action"),
        ("plant", "set Output (output) to 'layer' to key a layer over the Action"),
        ("reduce", "remove the modifier first, or reduce the keys of a clip that does not repeat"),
    ],
)
def test_keys_into_a_looped_action_are_refused_naming_the_f_curve_and_nothing_is_written(
    write: str, remedy: str
) -> None:
    armature = _looped_walk()
    writes: dict[str, Callable[[], object]] = {
        "bake": lambda: api.bake_chains(armature, output="action", frame_start=BAKED.start, frame_end=BAKED[-1]),
        "plant": lambda: api.plant_feet(armature, output="action", frame_start=BAKED.start, frame_end=BAKED[-1]),
        "reduce": lambda: api.reduce_keys(armature, key_error=0.1, frame_start=BAKED.start, frame_end=BAKED[-1]),
    }
    before = file_digest()
    with pytest.raises(ValueError, match=_CYCLED + ".*" + re.escape(remedy)):
        writes[write]()
    assert file_digest() == before


def test_a_layer_over_a_looped_action_leaves_the_loop_playing_as_it_did_outside_its_frames() -> None:
    armature = _looped_walk()
    before = _points(armature, OUTSIDE)
    report = api.bake_chains(armature, output="layer", frame_start=BAKED.start, frame_end=BAKED[-1])
    assert report.max_error < 2e-3
    np.testing.assert_allclose(_points(armature, OUTSIDE), before, rtol=0, atol=1e-6)


def test_a_cycles_modifier_that_repeats_nothing_or_is_muted_takes_the_keys() -> None:
    armature = _looped_walk()
    for fcurve in compat.assigned_fcurves(armature):
        cycles = fcurve.modifiers[0]
        if "Left" in fcurve.data_path:
            cycles.mute = True
        else:
            cycles.mode_before = cycles.mode_after = "NONE"
    assert (
        api.bake_chains(armature, output="action", frame_start=100, frame_end=300).max_error < 2e-3
    )  # where the keys play
