"""Make ``single_chain_4ab2888.blend``: a file saved by the add-on as it was at commit 4ab2888, whose settings held
one chain on ``Object.fabrik`` itself, for ``test_versioning``. Run it with the oldest Blender the add-on supports
(every later one opens its files), from anywhere in the repository:

    .venv-4.2/bin/python tests/blender/addon/data/make_single_chain_file.py

The add-on of that commit is taken from git (``git archive``) into a temporary folder and registered; the file
holds an armature "Rig" (3 bones up +Z) whose chain "bone.002", 2 bones long, follows the Empty "Target" with the
pole "Pole", baked there over frames 1-10, and an armature "Bare" never set up: the scene and what it uses,
without the user interface.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

COMMIT = "4ab2888"
HERE = Path(__file__).resolve().parent
OUTPUT = HERE / f"single_chain_{COMMIT}.blend"


def main() -> None:
    repo = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(["git", "-C", repo, "archive", COMMIT, "fabrik_addon"], capture_output=True, check=True)
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(folder, filter="data")
        sys.path.insert(0, folder)
        import bpy

        import fabrik_addon  # the add-on as it was at COMMIT

        assert Path(fabrik_addon.__file__).is_relative_to(folder), fabrik_addon.__file__
        build(bpy, fabrik_addon)


def build(bpy: Any, fabrik_addon: Any) -> None:
    """Build and save the file with the modules of the old add-on's run (handed in: imported from the archive)."""
    from mathutils import Vector

    bpy.ops.wm.read_factory_settings(use_empty=True)
    fabrik_addon.register()
    data = bpy.data
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 10
    objects = {}
    for name in ("Rig", "Bare"):
        objects[name] = data.objects.new(name, data.armatures.new(name))
        scene.collection.objects.link(objects[name])
    for name, location in (("Target", (1.0, 0.5, 1.5)), ("Pole", (0.0, -2.0, 1.0))):
        objects[name] = data.objects.new(name, None)
        objects[name].location = location
        scene.collection.objects.link(objects[name])
    rig = objects["Rig"]
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for i in range(3):
        bone = rig.data.edit_bones.new(f"bone.{i:03d}")
        bone.head, bone.tail = Vector((0.0, 0.0, float(i))), Vector((0.0, 0.0, i + 1.0))
        bone.parent, bone.use_connect = parent, parent is not None
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    settings = rig.fabrik
    settings.target, settings.tip_bone, settings.chain_length = objects["Target"], "bone.002", 2
    settings.pole_target, settings.pole_angle, settings.use_stretch = objects["Pole"], 0.5, True
    settings.tolerance, settings.max_iterations = 1e-4, 150
    assert bpy.ops.fabrik.bake() == {"FINISHED"}
    assert settings.last_bake.frames == 10
    # The scene and what it uses, without the screens and workspaces of a whole file: a few kB.
    data.libraries.write(str(OUTPUT), {scene}, compress=True)


if __name__ == "__main__":
    main()
