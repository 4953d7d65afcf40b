"""Tests of the Blender layer run inside the real Blender: the ``bpy`` module from PyPI, headless.

Every test starts from Blender's factory settings with an empty scene, so no test sees another's data.
"""

from __future__ import annotations

from collections.abc import Iterator

import bpy
import pytest


@pytest.fixture(autouse=True)
def clean_blender() -> Iterator[None]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield
    # Rigify left enabled through a factory reset or until exit crashes bpy 4.2 (a segfault at exit).
    if "rigify" in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_disable(module="rigify")
