"""Ctrl+C at any moment leaves the file as it was: a ``KeyboardInterrupt`` raised at a line of the add-on's code
chosen across a whole bake (an Action bake, a layer bake, Plant Feet, Targets from Animation, a layer bake
with fewer keys, Reduce Keys), the user's own muted F-curve included, every key, mute flag, NLA track, Action,
scene and object as before."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import bpy
import edit_scenes
import numpy as np
import pytest

from fabrik_addon import api
from fabrik_addon.blender import compat

from .oracle import data_snapshot

PACKAGE = str(Path(api.__file__).resolve().parents[1])


def _state() -> dict[str, object]:
    """What an interrupted bake must leave as it was: keys, every F-curve's mute flag (the add-on mutes some
    while it reads), NLA tracks and their strips, the datablocks, each chain setting."""
    state: dict[str, object] = {"keys": data_snapshot()}
    for kind in ("actions", "scenes", "objects", "collections"):
        state[kind] = sorted(datablock.name for datablock in getattr(bpy.data, kind))
    for action in bpy.data.actions:
        state[f"mutes {action.name}"] = [(f.data_path, f.array_index, f.mute) for f in compat.action_fcurves(action)]
    for obj in bpy.data.objects:
        anim = obj.animation_data
        if anim is not None:
            tracks = [
                (t.name, t.mute, [(_name(s.action), s.frame_start, s.frame_end) for s in t.strips])
                for t in anim.nla_tracks
            ]
            state[f"nla {obj.name}"] = (_name(anim.action), tracks, anim.action_extrapolation)
        if obj.type == "ARMATURE" and hasattr(obj, "fabrik"):
            chains = obj.fabrik.chains
            state[f"chains {obj.name}"] = [(_name(c.target), _name(c.pole_target), c.pole_angle) for c in chains]
    return state


def _name(datablock: bpy.types.ID | None) -> str | None:
    return None if datablock is None else datablock.name


def _interrupted_at(line: int, run: Callable[[], object]) -> bool:
    """Run ``run`` raising a KeyboardInterrupt at the ``line``-th line the add-on executes; whether it was raised
    (False: ``run`` finished first)."""
    count = [0]

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            count[0] += 1
            if count[0] == line:
                raise KeyboardInterrupt
        return local

    def global_(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    sys.settrace(global_)
    try:
        run()
    except KeyboardInterrupt:
        return True
    finally:
        sys.settrace(None)
    return False


def _lines(run: Callable[[], object]) -> int:
    """How many lines of the add-on ``run`` executes."""
    count = [0]

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            count[0] += 1
        return local

    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename.startswith(PACKAGE) else None)
    try:
        run()
    finally:
        sys.settrace(None)
    return count[0]


def _walk() -> bpy.types.Object:
    api.armatures_with_chains()
    armature = edit_scenes.clip_with_chains("walk_30fps_m")
    api.targets_from_animation(armature)
    # The user's own muted F-curve (a bake mutes others while it reads, and must leave this one muted).
    (muted,) = [
        f
        for f in compat.assigned_fcurves(armature)
        if f.data_path.endswith('"Head"].rotation_euler') and f.array_index == 0
    ]
    muted.mute = True
    armature.location.x = 0.5  # targets made again are keyed elsewhere
    return armature


BAKES: dict[str, Callable[[bpy.types.Object], object]] = {
    "action": lambda armature: api.bake_chains(armature, output="action"),
    "layer": lambda armature: api.bake_chains(armature, output="layer"),
    "plant feet": lambda armature: api.plant_feet(armature, ["LeftAnkle", "RightAnkle"], hips_bone="Hips"),
    "targets": lambda armature: api.targets_from_animation(armature, replace=True),
    "fewer keys": lambda armature: api.bake_chains(armature, output="layer", key_error=0.002),
    "reduce keys": lambda armature: api.reduce_keys(armature, edit_scenes.chain_bones(armature), key_error=0.05),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", BAKES)
def test_ctrl_c_at_any_moment_leaves_the_file_as_it_was_or_as_baked(kind: str) -> None:
    """Interrupted anywhere, a bake leaves the file as it was; interrupted once it has written and checked
    everything (on its way out), as baked."""
    bake = BAKES[kind]
    armature = _walk()
    before = _state()
    bake(armature)  # once to warm the caches a bake keeps between bakes (the chains' kept steps)
    after = _state()
    assert after != before, "the bake changes the file"

    def fresh() -> bpy.types.Object:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        armature = _walk()
        assert _state() == before
        return armature

    armature = fresh()
    total = _lines(lambda: bake(armature))
    armature = fresh()
    rng = np.random.default_rng(36)
    picks = sorted({*rng.integers(1, total, 60).tolist(), 1, total // 2, total - 1})
    for line in picks:
        interrupted = _interrupted_at(line, partial(bake, armature))
        now = _state()
        assert now in (before, after), f"interrupted at line {line} of {total}"
        if now == after or not interrupted:
            armature = fresh()
