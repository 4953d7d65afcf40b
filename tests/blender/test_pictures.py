"""The README's pictures are made with Blender's own render: ``scripts/plant_picture.py`` (Plant Feet) and
``scripts/edit_picture.py`` (editing through IK) run and write a picture with their paths on it (orange and green
pixels on white, and the edit's red target)."""

from __future__ import annotations

from pathlib import Path

import bpy
import edit_picture
import numpy as np
import plant_picture


def _colours(output: Path) -> dict[str, float]:
    """The share of white pixels, and how many are orange, green and red."""
    image = bpy.data.images.load(str(output))
    pixels = np.empty(image.size[0] * image.size[1] * 4, dtype=np.float32)
    image.pixels.foreach_get(pixels)
    rgb = pixels.reshape(-1, 4)[:, :3]
    return {
        "white": float((rgb > 0.95).all(axis=1).mean()),
        "orange": float(((rgb[:, 0] > 0.8) & (rgb[:, 1] > 0.4) & (rgb[:, 1] < 0.8) & (rgb[:, 2] < 0.5)).sum()),
        "green": float(((rgb[:, 1] > 0.5) & (rgb[:, 0] < 0.5) & (rgb[:, 2] < 0.6)).sum()),
        "red": float(((rgb[:, 0] > 0.7) & (rgb[:, 1] < 0.35) & (rgb[:, 2] < 0.35)).sum()),
    }


def test_the_plant_feet_picture_renders_the_contacts(tmp_path: Path) -> None:
    output = tmp_path / "plant.png"
    plant_picture.main(["--quick", "--output", str(output)])
    seen = _colours(output)
    assert seen["white"] > 0.8
    assert seen["orange"] > 50
    assert seen["green"] > 20


def test_the_editing_picture_renders_both_hand_paths_and_the_moved_target(tmp_path: Path) -> None:
    output = tmp_path / "edit.png"
    edit_picture.main(["--quick", "--output", str(output)])
    seen = _colours(output)
    assert seen["white"] > 0.8
    assert seen["orange"] > 50
    assert seen["green"] > 50
    assert seen["red"] > 10
