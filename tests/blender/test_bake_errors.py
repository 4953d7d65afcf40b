"""Bad input to api.bake raises a message a user can act on, and writes nothing."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import bpy
import pytest
from rigs import keyed_empty, loop_path, make_chain

from fabrik_addon import api
from fabrik_addon.blender.rig import keys

from .oracle import data_snapshot


@pytest.fixture
def scene() -> tuple[bpy.types.Object, list[str], bpy.types.Object]:
    armature, names = make_chain(3)
    pb = armature.pose.bones[names[1]]
    pb.keyframe_insert("rotation_quaternion", frame=3)  # an existing Action with keys to keep intact
    target = keyed_empty("Target", loop_path(range(1, 21), (0.5, 0, 1.8), (1.0, 0.8, 0.6)))
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 20
    return armature, names, target


CASES: list[tuple[str, Callable[..., dict[str, Any]], type[Exception], str]] = [
    (
        "not an armature",
        lambda a, n, t: {"armature": t},
        TypeError,
        r"'Target' is not an armature \(it is an empty object\)",
    ),
    ("not an object", lambda a, n, t: {"armature": a.data}, TypeError, "armature must be a Blender Object"),
    (
        "tip missing",
        lambda a, n, t: {"tip_bone": "bone.0011"},
        ValueError,
        r"has no bone 'bone.0011' \(did you mean",
    ),
    (
        "chain too long",
        lambda a, n, t: {"chain_length": 5},
        ValueError,
        r"Chain Length \(chain_length\) 5 is longer .* \(3 bones\)",
    ),
    (
        "negative chain",
        lambda a, n, t: {"chain_length": -1},
        ValueError,
        r"Chain Length \(chain_length\) must be a whole number >= 0",
    ),
    ("target is armature", lambda a, n, t: {"target": a}, ValueError, "cannot be the armature 'Rig' itself"),
    (
        "target not object",
        lambda a, n, t: {"target": (1, 2, 3)},
        TypeError,
        "target must be a Blender Object",
    ),
    (
        "reversed range",
        lambda a, n, t: {"frame_start": 10, "frame_end": 5},
        ValueError,
        r"the frames end before they start: End \(frame_end\) 5, Start \(frame_start\) 10",
    ),
    ("zero step", lambda a, n, t: {"frame_step": 0}, ValueError, r"Step \(frame_step\) must be a whole number >= 1"),
    (
        "fractional frame",
        lambda a, n, t: {"frame_start": 1.5},
        ValueError,
        r"Start \(frame_start\) must be a whole number",
    ),
    ("bad tolerance", lambda a, n, t: {"tolerance": 0}, ValueError, r"Tolerance \(tolerance\) must be a positive"),
    (
        "bad iterations",
        lambda a, n, t: {"max_iterations": 0},
        ValueError,
        r"Max Iterations \(max_iterations\) must be a whole number >= 1",
    ),
    ("bad method", lambda a, n, t: {"method": "jacobian"}, ValueError, r"Method \(method\) must be one of"),
]


@pytest.mark.parametrize(("label", "change", "error", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_named_and_nothing_is_written(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object],
    label: str,
    change: Callable[..., dict[str, Any]],
    error: type[Exception],
    message: str,
) -> None:
    armature, names, target = scene
    arguments: dict[str, Any] = {"armature": armature, "target": target, "tip_bone": names[-1]}
    arguments |= change(armature, names, target)
    before = data_snapshot()
    with pytest.raises(error, match=message):
        api.bake(arguments.pop("armature"), arguments.pop("target"), **arguments)
    assert data_snapshot() == before


def test_nan_target_names_the_frame(scene: tuple[bpy.types.Object, list[str], bpy.types.Object]) -> None:
    armature, names, target = scene
    from fabrik_addon.blender import compat

    for fcurve in compat.assigned_fcurves(target):
        for key in fcurve.keyframe_points:
            if key.co[0] == 12:
                key.co = (12.0, float("nan"))
    before = data_snapshot()
    with pytest.raises(ValueError, match="not a number on frame 12"):
        api.bake(armature, target, tip_bone=names[-1])
    assert str(data_snapshot()) == str(before)  # str: NaN != NaN in the key values


@pytest.mark.parametrize("how", ["unlinked", "disabled", "disabled collection", "excluded collection"])
@pytest.mark.parametrize("role", ["armature", "target"])
def test_objects_blender_does_not_evaluate_are_refused(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object], how: str, role: str
) -> None:
    armature, names, target = scene
    obj = armature if role == "armature" else target
    if how == "unlinked":
        bpy.context.scene.collection.objects.unlink(obj)
    elif how == "disabled":
        obj.hide_viewport = True
    else:
        collection = bpy.data.collections.new("Hidden")
        bpy.context.scene.collection.children.link(collection)
        bpy.context.scene.collection.objects.unlink(obj)
        collection.objects.link(obj)
        if how == "disabled collection":
            collection.hide_viewport = True
        else:
            bpy.context.view_layer.layer_collection.children["Hidden"].exclude = True
    before = data_snapshot()
    with pytest.raises(ValueError, match=f"the {role} '{obj.name}' is not evaluated in the view layer"):
        api.bake(armature, target, tip_bone=names[-1])
    assert data_snapshot() == before


def test_objects_hidden_with_the_eye_are_still_baked(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object],
) -> None:
    armature, names, target = scene
    armature.hide_set(True)
    target.hide_set(True)
    report = api.bake(armature, target, tip_bone=names[-1])
    assert report.max_error <= 1e-3


def test_a_bone_whose_child_sits_on_its_head_is_baked_and_keeps_its_rotation() -> None:
    """As Blender's IK bakes such a chain (a BVH skeleton's spine): the bone turns nothing it carries, so the
    bones after it reach the target and it keeps the rotation it had."""
    armature, names = make_chain(3, connected=False, gap=(0.0, 0.0, -1.0))  # every bone's head on the root's
    target = keyed_empty("Target", [(1, (0.6, 0.0, 0.8)), (2, (0.48, 0.36, 0.8)), (3, (0.0, 0.6, 0.8))])  # its reach: 1
    report = api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=3)
    assert report.max_error <= 1e-3
    for frame in (1, 2, 3):
        bpy.context.scene.frame_set(frame)
        assert [armature.pose.bones[name].matrix_basis.to_quaternion().angle for name in names[:2]] == [0.0, 0.0]


def test_constraint_on_a_chain_bone_is_named(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object],
) -> None:
    armature, names, target = scene
    ik = armature.pose.bones[names[-1]].constraints.new("IK")
    ik.target = target
    before = data_snapshot()
    with pytest.raises(ValueError, match=f"bone '{names[-1]}' has constraints .* \\(IK\\)"):
        api.bake(armature, target, tip_bone=names[-1])
    assert data_snapshot() == before
    ik.mute = True
    api.bake(armature, target, tip_bone=names[-1])  # a muted constraint is fine


def test_non_uniform_scale_names_the_frame(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object],
) -> None:
    armature, names, target = scene
    armature.scale = (1.0, 1.0, 1.0)
    armature.keyframe_insert("scale", frame=1)
    armature.scale = (1.0, 2.0, 1.0)
    armature.keyframe_insert("scale", frame=20)
    before = data_snapshot()
    with pytest.raises(ValueError, match="scaled non-uniformly, mirrored or to zero on frame 2"):
        api.bake(armature, target, tip_bone=names[-1])
    assert data_snapshot() == before


def test_target_moving_with_the_chain_is_refused(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object],
) -> None:
    armature, names, target = scene
    target.parent = armature
    target.parent_type = "BONE"
    target.parent_bone = names[1]
    with pytest.raises(ValueError, match=f"parented to the bone '{names[1]}', which the chain moves"):
        api.bake(armature, target, tip_bone=names[-1])


def test_linked_armature_cannot_be_baked(tmp_path: Any) -> None:
    armature, names = make_chain(2, name="Linked")
    library = str(tmp_path / "library.blend")
    bpy.data.libraries.write(library, {armature})
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (_, destination):
        destination.objects = ["Linked"]
    linked = destination.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    target = keyed_empty("Target", [(1, (1.0, 0.0, 1.0))])
    before = data_snapshot()
    with pytest.raises(ValueError, match=r"is linked from the library .* make it local"):
        api.bake(linked, target, tip_bone=names[-1])
    assert data_snapshot() == before


def test_a_failure_while_writing_undoes_everything(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object], monkeypatch: pytest.MonkeyPatch
) -> None:
    armature, names, target = scene
    before = data_snapshot()
    original = keys.Keys.write
    calls = []

    def failing_write(self: keys.Keys, fcurve: bpy.types.FCurve, only: tuple[str, ...] | None = None) -> None:
        calls.append(fcurve.data_path)
        if len(calls) == 7:  # part-way: some F-curves written, some created, one half done
            raise RuntimeError("disk on fire")
        original(self, fcurve, only)

    monkeypatch.setattr(keys.Keys, "write", failing_write)
    with pytest.raises(RuntimeError, match="disk on fire"):
        api.bake(armature, target, tip_bone=names[-1])
    monkeypatch.setattr(keys.Keys, "write", original)
    assert data_snapshot() == before
    assert bpy.context.scene.frame_current == 1


def test_a_failure_rolls_back_a_new_action_too(monkeypatch: pytest.MonkeyPatch) -> None:
    armature, names = make_chain(2)
    target = keyed_empty("Target", [(1, (1.0, 0.0, 1.0))])
    before = data_snapshot()
    monkeypatch.setattr(keys.Keys, "write", lambda *args, **kwargs: (_ for _ in ()).throw(RuntimeError("no")))
    with pytest.raises(RuntimeError):
        api.bake(armature, target, tip_bone=names[-1], frame_start=1, frame_end=3)
    assert data_snapshot() == before
    assert armature.animation_data is None
    assert math.isfinite(bpy.context.scene.frame_current)


def test_a_failure_while_checking_the_keys_undoes_them(
    scene: tuple[bpy.types.Object, list[str], bpy.types.Object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabrik_addon.blender.bake import run as bake_module

    armature, names, target = scene
    before = data_snapshot()

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # the user pressed Ctrl+C while Blender checked the keys

    monkeypatch.setattr(bake_module, "sample_tips", interrupted)
    with pytest.raises(KeyboardInterrupt):
        api.bake(armature, target, tip_bone=names[-1])
    assert data_snapshot() == before
