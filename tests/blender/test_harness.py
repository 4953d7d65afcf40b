"""The harness is real: bpy is Blender itself, a supported version, evaluating scenes."""

from __future__ import annotations

import bpy
import pytest


def test_bpy_is_a_supported_blender() -> None:
    assert bpy.app.version >= (4, 2, 0)
    assert bpy.app.background


def test_each_test_starts_from_an_empty_file() -> None:
    assert len(bpy.data.objects) == 0
    assert len(bpy.data.actions) == 0


def test_blender_evaluates_an_animated_object() -> None:
    bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"
    empty = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(empty)
    empty.location = (0.0, 0.0, 0.0)
    empty.keyframe_insert("location", frame=1)
    empty.location = (2.0, 0.0, 0.0)
    empty.keyframe_insert("location", frame=11)
    bpy.context.scene.frame_set(6)
    assert empty.matrix_world.translation.x == pytest.approx(1.0)
