"""Tests of the Blender layer run inside the real Blender: the ``bpy`` module from PyPI, headless.

Every test starts from Blender's factory settings with an empty scene, so no test sees another's data.
"""

from __future__ import annotations

import bpy
import pytest


@pytest.fixture(autouse=True)
def clean_blender() -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
