"""``api.bake``'s keywords are the settings value's: the same names and the same defaults, so the command
line's config keys and the API cannot drift apart."""

from __future__ import annotations

import inspect

from fabrik_addon import api
from fabrik_addon.settings import DEFAULTS, KEYWORDS


def test_api_bake_takes_exactly_the_settings_keywords_with_their_defaults() -> None:
    parameters = inspect.signature(api.bake).parameters
    keyword_only = {name: p.default for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    keyword_only.pop("progress")
    assert set(keyword_only) == set(KEYWORDS)
    assert keyword_only.pop("tip_bone") is inspect.Parameter.empty
    assert keyword_only == DEFAULTS


def test_api_clear_takes_the_chain_and_frame_keywords_with_their_defaults() -> None:
    parameters = inspect.signature(api.clear).parameters
    defaults = {name: p.default for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert defaults.pop("tip_bone") is inspect.Parameter.empty
    assert defaults == {name: DEFAULTS[name] for name in ("chain_length", "frame_start", "frame_end")}
