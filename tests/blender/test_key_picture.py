"""The README's picture of fewer keys is made by ``scripts/key_picture.py`` with Blender's own render: it runs and
writes a picture with both curves on it (orange and green pixels on white)."""

from __future__ import annotations

from pathlib import Path

import bpy
import key_picture
import numpy as np


def test_the_picture_script_renders_the_curve_before_and_after(tmp_path: Path) -> None:
    output = tmp_path / "keys.png"
    key_picture.main(["--quick", "--output", str(output)])
    assert output.is_file()
    image = bpy.data.images.load(str(output))
    pixels = np.empty(image.size[0] * image.size[1] * 4, dtype=np.float32)
    image.pixels.foreach_get(pixels)
    rgb = pixels.reshape(-1, 4)[:, :3]
    orange = ((rgb[:, 0] > 0.8) & (rgb[:, 1] > 0.4) & (rgb[:, 1] < 0.8) & (rgb[:, 2] < 0.5)).sum()
    green = ((rgb[:, 1] > 0.5) & (rgb[:, 0] < 0.5) & (rgb[:, 2] < 0.6)).sum()
    assert (rgb > 0.95).all(axis=1).mean() > 0.7
    assert orange > 50
    assert green > 20
