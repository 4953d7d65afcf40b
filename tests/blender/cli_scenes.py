"""Saved .blend files for the command-line tests, the command line run as a subprocess, and Blender's own
evaluation of what it wrote."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import bpy
import mocap
import rigs

from .oracle import FloatArray

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "tools" / "fabrik_bake.py"
FRAMES = range(1, 13)
TOLERANCE = 1e-3
CHAIN = ("--armature", "Rig", "--tip", "bone.002", "--target", "Target")


def save_scene(
    path: Path, *, armature: str = "Rig", second_chain: bool = False, ik: bool = False, far: bool = False
) -> Path:
    """A file with a 3-bone chain ``armature`` and an Empty "Target" looping within its reach (12 frames; with
    ``far``, out of it on some frames); with ``second_chain`` also a 2-bone "Arm" and its "Target2"; with
    ``ik`` the chain's tip has an IK constraint toward "Target"."""
    rigs.new_file(FRAMES)
    rig, names = rigs.make_chain(3, name=armature)
    target = rigs.keyed_empty("Target", rigs.loop_path(FRAMES, (0.5, 0.3, 3.2 if far else 2.0), (0.6, 0.5, 0.4)))
    if ik:
        constraint = rig.pose.bones[names[-1]].constraints.new("IK")
        constraint.target, constraint.chain_count = target, 3
    if second_chain:
        rigs.make_chain(2, name="Arm")
        rigs.keyed_empty("Target2", rigs.loop_path(FRAMES, (0.3, 0.2, 1.2), (0.3, 0.3, 0.3)))
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def save_walk(path: Path) -> str:
    """A file with the committed CMU walk (``mocap.import_clip("walk")``) in metres, 360 frames at 120 fps;
    its armature's name. Its feet are "LeftAnkle" and "RightAnkle", its hips "Hips"."""
    rigs.new_file(range(1, 2))
    armature = mocap.import_clip("walk", scale=mocap.CMU_UNIT)
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return armature.name


def run_cli(
    *args: object, wrapper: Sequence[str] = (), env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python scripts/tools/fabrik_bake.py ARGS`` with the bpy module, as a user runs it (after ``wrapper``, a
    command that runs the rest; ``env`` over this process's environment)."""
    return subprocess.run(
        cli_command(*args, wrapper=wrapper),
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def cli_command(*args: object, wrapper: Sequence[str] = ()) -> list[str]:
    return [*wrapper, sys.executable, str(SCRIPT), *map(str, args)]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tip_errors(path: Path, armature: str = "Rig", tip: str = "bone.002", target: str = "Target") -> FloatArray:
    """Open a baked file (scripts off) and let Blender evaluate it: the tip-to-target distance per frame."""
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False, use_scripts=False)
    return rigs.tip_errors(bpy.data.objects[armature], tip, bpy.data.objects[target], FRAMES)
