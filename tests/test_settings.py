"""The settings value every entry point builds: checks once, defaults once, keywords both ways."""

from __future__ import annotations

import inspect
import math
from typing import Any

import pytest

from fabrik_addon.setting_checks import keywords_checked
from fabrik_addon.setting_names import LABELS, in_words, named
from fabrik_addon.settings import (
    DEFAULTS,
    KEYWORDS,
    OBJECT_KEYWORDS,
    BakeSettings,
    ChainSettings,
    FrameRange,
    SolverSettings,
    keyed_frames,
)
from fabrik_addon.solver import DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE


def test_defaults_are_the_solvers_and_the_keywords_cover_every_field() -> None:
    settings = BakeSettings.from_keywords("Rig", "Target", tip_bone="hand.L")
    assert settings.solver == SolverSettings(DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS, "fabrik", True)
    assert settings.frames == FrameRange(None, None, 1)
    assert settings.chains == (ChainSettings("Rig", "Target", "hand.L"),)
    assert set(DEFAULTS) == set(KEYWORDS) - {"tip_bone"}
    assert OBJECT_KEYWORDS == ("pole_target",)


def test_keywords_round_trip_and_leave_defaults_out() -> None:
    keywords: dict[str, Any] = {
        "tip_bone": "hand.L",
        "chain_length": 3,
        "pole_target": "Pole",
        "pole_angle": -1.5,
        "use_stretch": True,
        "frame_start": -4,
        "frame_end": 40,
        "frame_step": 2,
        "tolerance": 1e-4,
        "max_iterations": 30,
        "method": "ccd",
        "warm_start": False,
        "action_name": "Baked",
    }
    settings = BakeSettings.from_keywords("Rig", "Target", **keywords)
    assert settings.keywords() == keywords
    assert BakeSettings.from_keywords("Rig", "Target", **settings.keywords()) == settings
    assert BakeSettings.from_keywords("R", "T", tip_bone="b", chain_length=0).keywords() == {"tip_bone": "b"}


def test_with_objects_replaces_every_object_and_nothing_else() -> None:
    settings = BakeSettings.from_keywords("Rig", "Target", tip_bone="b", pole_target="Pole", tolerance=0.01)
    found = settings.with_objects(lambda name, role: f"{role}={name}")
    chain = found.chains[0]
    assert (chain.armature, chain.target, chain.pole_target) == ("armature=Rig", "target=Target", "pole_target=Pole")
    assert found.solver == settings.solver
    assert found.frames == settings.frames
    assert BakeSettings.from_keywords("R", None, tip_bone="b").with_objects(lambda n, r: 1).chains[0].target is None


def test_frames_fall_back_on_the_scenes_range() -> None:
    assert FrameRange().resolved(1, 250) == range(1, 251)
    assert FrameRange(start=10, step=5).resolved(1, 30) == range(10, 31, 5)
    assert FrameRange(end=12).resolved(1, 250) == range(1, 13)
    with pytest.raises(
        ValueError, match=r"the frames end before they start: End \(frame_end\) 5, Start \(frame_start\) 20"
    ):
        FrameRange(start=20).resolved(1, 5)


def test_a_stepped_range_keys_its_end_frame_too() -> None:
    assert FrameRange(1, 50, 5).keyed(1, 250) == (*range(1, 50, 5), 50)  # 1, 6, ..., 46, 50
    assert FrameRange(1, 21, 5).keyed(1, 250) == (1, 6, 11, 16, 21)  # the step lands on it: once
    assert FrameRange(step=3).keyed(-4, 0) == (-4, -1, 0)
    assert FrameRange(7, 7, 4).keyed(1, 250) == (7,)
    assert FrameRange().keyed(1, 5) == (1, 2, 3, 4, 5)
    assert keyed_frames(range(10, 31, 7)) == (10, 17, 24, 30)


def test_whole_numbers_may_come_as_integral_floats_or_numpy_integers() -> None:
    import numpy as np

    settings = BakeSettings.from_keywords("R", "T", tip_bone="b", chain_length=3.0, frame_start=np.int64(7))
    assert settings.chains[0].chain_length == 3
    assert type(settings.chains[0].chain_length) is int
    assert settings.frames.start == 7
    assert type(settings.frames.start) is int


BAD: list[tuple[dict[str, Any], type[Exception], str]] = [
    (
        {"chain_length": -1},
        ValueError,
        r"Chain Length \(chain_length\) must be a whole number >= 0 \(0 = up to the root\), got -1",
    ),
    ({"chain_length": math.inf}, ValueError, r"Chain Length \(chain_length\) must be a whole number >= 0"),
    ({"chain_length": 2.5}, ValueError, r"Chain Length \(chain_length\) must be a whole number"),
    ({"chain_length": True}, ValueError, r"Chain Length \(chain_length\) must be a whole number"),
    ({"chain_length": "3"}, ValueError, r"Chain Length \(chain_length\) must be a whole number"),
    ({"tip_bone": 3}, TypeError, r"Tip Bone \(tip_bone\) must be a bone's name"),
    ({"pole_angle": math.nan}, ValueError, r"Pole Angle \(pole_angle\) must be a finite number of radians"),
    ({"pole_angle": "1"}, ValueError, r"Pole Angle \(pole_angle\) must be a finite number of radians"),
    ({"use_stretch": 1}, TypeError, r"Stretch \(use_stretch\) must be True or False"),
    ({"frame_start": 1.5}, ValueError, r"Start \(frame_start\) must be a whole number, got 1.5"),
    ({"frame_end": None, "frame_step": 0}, ValueError, r"Step \(frame_step\) must be a whole number >= 1"),
    (
        {"frame_start": 9, "frame_end": 2},
        ValueError,
        r"end before they start: End \(frame_end\) 2, Start \(frame_start\) 9",
    ),
    ({"tolerance": 0}, ValueError, r"Tolerance \(tolerance\) must be a positive finite number, got 0"),
    ({"tolerance": math.inf}, ValueError, r"Tolerance \(tolerance\) must be a positive finite number, got inf"),
    ({"tolerance": "0.1"}, ValueError, r"Tolerance \(tolerance\) must be a positive finite number"),
    ({"max_iterations": 0}, ValueError, r"Max Iterations \(max_iterations\) must be a whole number >= 1, got 0"),
    ({"method": "jacobian"}, ValueError, r"Method \(method\) must be one of \['ccd', 'fabrik'\], got 'jacobian'"),
    ({"warm_start": "yes"}, TypeError, r"Warm Start \(warm_start\) must be True or False"),
    ({"action_name": 3}, TypeError, "action_name must be a string, got int"),
    ({"tolerence": 0.1}, TypeError, r"unexpected keyword argument 'tolerence' \(did you mean 'tolerance'\?\)"),
    (
        {"key_error": -1e-3},
        ValueError,
        r"Key Error \(key_error\) must be a distance in world units, a finite number >= 0",
    ),
    ({"key_error": math.nan}, ValueError, r"Key Error \(key_error\) must be a distance"),
    ({"key_error": math.inf}, ValueError, r"Key Error \(key_error\) must be a distance"),
    ({"key_error": "1e-3"}, ValueError, r"Key Error \(key_error\) must be a distance"),
    ({"key_error": True}, ValueError, r"Key Error \(key_error\) must be a distance"),
]


@pytest.mark.parametrize(("keywords", "error", "message"), BAD, ids=[str(k) for k, _, _ in BAD])
def test_bad_values_are_named(keywords: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        BakeSettings.from_keywords("Rig", "Target", **{"tip_bone": "b", **keywords})


def test_messages_name_a_setting_by_its_label_and_keyword_and_each_entry_point_keeps_its_words() -> None:
    assert set(LABELS) <= set(KEYWORDS)
    assert named("chain_length") == "Chain Length (chain_length)"
    assert named("action_name") == "action_name"  # the panel does not show it
    message = "the frames end before they start: End (frame_end) 5, Start (frame_start) 9; Step (frame_step)"
    assert in_words(message, lambda label, _: label) == "the frames end before they start: End 5, Start 9; Step"
    assert in_words(message, lambda _, keyword: f"--{keyword}").endswith("--frame_end 5, --frame_start 9; --frame_step")
    assert in_words("Chain Length 3 (chain_length)", lambda label, _: label) == "Chain Length 3 (chain_length)"


def test_a_bake_needs_a_chain() -> None:
    with pytest.raises(ValueError, match="at least one chain"):
        BakeSettings(())
    two = BakeSettings((ChainSettings("A", "T", "a"), ChainSettings("B", "T", "b")))
    with pytest.raises(ValueError, match="keywords stand for one chain"):
        two.keywords()


def test_key_error_is_kept_by_every_settings_value_and_zero_keys_every_frame() -> None:
    from fabrik_addon.planting import PlantSettings

    settings = BakeSettings.from_keywords("Rig", "Target", tip_bone="b", key_error=5e-4)
    assert settings.key_error == 5e-4
    assert settings.keywords()["key_error"] == 5e-4
    assert "key_error" not in BakeSettings.from_keywords("Rig", "Target", tip_bone="b").keywords()  # 0: the default
    assert PlantSettings.from_keywords("Walk", ["LeftFoot"], key_error=1e-3).key_error == 1e-3
    with pytest.raises(ValueError, match=r"Key Error \(key_error\)"):
        PlantSettings.from_keywords("Walk", ["LeftFoot"], key_error=-1.0)


def test_a_checked_functions_unknown_keyword_is_named_with_the_one_it_is_closest_to() -> None:
    calls = []

    @keywords_checked
    def bake(armature: object, *, chain_length: int = 0, tolerance: float = 1e-4) -> int:
        calls.append((armature, chain_length, tolerance))
        return chain_length

    with pytest.raises(TypeError, match=r"bake\(\) got an unexpected keyword argument 'chain_lenght' \(did you mean "):
        bake("Rig", chain_lenght=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"'colour'; known: armature, chain_length, tolerance$"):
        bake("Rig", colour=2)  # type: ignore[call-arg]
    assert calls == []  # refused before it ran
    assert bake("Rig", chain_length=2) == 2
    assert bake(armature="Rig") == 0
    assert calls == [("Rig", 2, 1e-4), ("Rig", 0, 1e-4)]
    assert bake.__name__ == "bake"
    assert "chain_length" in str(inspect.signature(bake))


def test_a_function_taking_any_keywords_is_left_to_check_them_itself() -> None:
    def overrides(**given: object) -> dict[str, object]:
        return given

    assert keywords_checked(overrides) is overrides
