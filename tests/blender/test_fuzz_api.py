"""``api.bake`` with random types and values for every argument: a ``TypeError`` or ``ValueError`` that leaves
the file as it was, or a bake that is correct by Blender's evaluation; never another exception, never a
partial write."""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st
from rigs import keyed_empty, make_chain, world_location

from fabrik_addon import api
from fabrik_addon.settings import DEFAULTS

from .oracle import data_snapshot, evaluated

#: Stand-ins for Blender data, made real in each example's fresh file.
OBJECTS = ("the armature", "the target", "the pole", "the armature's data", "a camera")

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=3),
    st.sampled_from(OBJECTS),
)
#: Values each keyword takes in a correct call, so that examples also reach the bake.
GOOD: dict[str, st.SearchStrategy[Any]] = {
    "tip_bone": st.sampled_from(["bone.002", "bone.001"]),
    "chain_length": st.integers(min_value=0, max_value=3),
    "frame_start": st.integers(min_value=1, max_value=3),
    "frame_end": st.integers(min_value=3, max_value=5),
    "frame_step": st.integers(min_value=1, max_value=3),
    "tolerance": st.floats(min_value=1e-3, max_value=0.1),
    "max_iterations": st.integers(min_value=1, max_value=300),
    "method": st.sampled_from(["fabrik", "ccd"]),
    "warm_start": st.booleans(),
    "action_name": st.sampled_from([None, "Baked"]),
    "pole_target": st.sampled_from([None, "the pole"]),
    "pole_angle": st.floats(min_value=-3.0, max_value=3.0),
    "use_stretch": st.booleans(),
}


def mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A good value four times in five, junk otherwise: enough examples reach the bake itself."""
    return st.integers(min_value=0, max_value=4).flatmap(lambda draw: JUNK if draw == 0 else good)


ARGUMENTS = st.fixed_dictionaries(
    {"armature": mostly(st.just("the armature")), "target": mostly(st.just("the target"))},
    optional={name: mostly(good) for name, good in GOOD.items()},
)


def fresh_file() -> dict[str, Any]:
    """A 3-bone chain, a target and a pole within its reach, on frames 1-5: the objects the names stand for."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 5
    armature, _ = make_chain(3)
    target = keyed_empty("Target", [(1, (0.6, 0.2, 1.8)), (5, (-0.4, 0.5, 2.2))])
    pole = keyed_empty("Pole", [(1, (0.0, -2.0, 1.0))])
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    bpy.context.scene.collection.objects.link(camera)
    return dict(zip(OBJECTS, (armature, target, pole, armature.data, camera), strict=True))


@settings(max_examples=120)
@given(arguments=ARGUMENTS)
def test_any_arguments_give_a_named_error_or_a_correct_bake(arguments: dict[str, Any]) -> None:
    objects = fresh_file()
    real = {name: objects.get(value, value) if isinstance(value, str) else value for name, value in arguments.items()}
    armature, target = real.pop("armature"), real.pop("target")
    real.setdefault("tip_bone", "bone.002")
    before = data_snapshot()
    refused: Exception | None = None
    try:
        report = api.bake(armature, target, **real)
    except (TypeError, ValueError) as error:
        refused = error
    event(f"refused ({type(refused).__name__})" if refused else "baked")
    if refused is not None:
        assert str(refused), "an error must say what is wrong"
        assert data_snapshot() == before, f"{refused!r} left a partial write"
        return
    # A bake went through: Blender's evaluation of the keys is what the report says, frame by frame.
    frames = report.frames.tolist()
    tips = evaluated(armature, frames, report.bones)["tails"][:, -1]
    np.testing.assert_allclose(np.linalg.norm(tips - world_location(target, frames), axis=1), report.error, atol=1e-6)
    tolerance = real.get("tolerance", DEFAULTS["tolerance"])
    assert set(report.off_target_frames) == {int(f) for f in report.frames[report.error > tolerance]}
    assert report.bones[-1] == real["tip_bone"]
