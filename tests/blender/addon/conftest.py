"""The add-on as Blender runs it: registered in this process (after the parent conftest's clean file), and
unregistered after each test, so every test starts and ends without it."""

from __future__ import annotations

from collections.abc import Iterator

import bpy
import pytest

import fabrik_addon


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    fabrik_addon.register()
    yield
    if hasattr(bpy.types, "FABRIK_OT_bake"):  # a test may have unregistered it already
        fabrik_addon.unregister()
