"""``api.bake``'s keywords are the settings value's: the same names and the same defaults, so the command
line's config keys and the API cannot drift apart."""

from __future__ import annotations

import inspect

import bpy
import pytest

from fabrik_addon import api
from fabrik_addon.settings import DEFAULTS, KEYWORDS


def test_api_bake_takes_exactly_the_settings_keywords_with_their_defaults() -> None:
    parameters = inspect.signature(api.bake).parameters
    keyword_only = {name: p.default for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    keyword_only.pop("progress")
    assert set(keyword_only) == set(KEYWORDS)
    assert keyword_only.pop("tip_bone") is inspect.Parameter.empty
    assert keyword_only == DEFAULTS


def test_api_clear_takes_the_chain_frame_and_output_keywords_with_their_defaults() -> None:
    parameters = inspect.signature(api.clear).parameters
    defaults = {name: p.default for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert defaults.pop("tip_bone") is inspect.Parameter.empty
    assert defaults == {name: DEFAULTS[name] for name in ("chain_length", "frame_start", "frame_end", "output")}


#: Per public function of the API, a keyword misspelt as a user might and the keyword meant.
TYPOS = {
    "apply_layer": ("armatrue", "armature"),
    "armatures_with_chains": ("armature", None),
    "bake": ("chain_lenght", "chain_length"),
    "bake_chains": ("key_eror", "key_error"),
    "bake_ik_constraints": ("afterr", "after"),
    "bake_settings": ("sandbax", "sandbox"),
    "clear_settings": ("setting", "settings"),
    "clear": ("frame_strat", "frame_start"),
    "detect_contacts": ("contact_hieght", "contact_height"),
    "plant_feet": ("hips", "hips_bone"),
    "reduce_keys": ("keyerror", "key_error"),
    "targets_from_animation": ("pole", "poles"),
}


def test_every_public_function_of_the_api_has_a_typo_tested() -> None:
    assert set(TYPOS) == {name for name in api.__all__ if inspect.isfunction(getattr(api, name))}


@pytest.mark.parametrize(("name", "typo", "meant"), [(name, *typo) for name, typo in TYPOS.items()])
def test_a_misspelt_api_keyword_is_refused_with_the_one_meant_before_anything_is_written(
    name: str, typo: str, meant: str | None
) -> None:
    function = getattr(api, name)
    armature = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    required = [p for p in inspect.signature(function).parameters.values() if p.default is inspect.Parameter.empty]
    given = {p.name: "hand.L" for p in required if p.kind is p.KEYWORD_ONLY}
    first = [armature] if any(p.kind is p.POSITIONAL_OR_KEYWORD for p in required) else []
    hint = "" if meant is None else rf" \(did you mean '{meant}'\?\)"
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument '{typo}'{hint}"):
        function(*first, **given, **{typo: 1})
    assert [o.name for o in bpy.data.objects] == ["Rig"]
    assert not bpy.data.actions
