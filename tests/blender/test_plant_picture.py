"""The README's Plant Feet picture is made by ``scripts/plant_picture.py`` with Blender's own render: it runs
and writes a picture with the balls' paths on it (orange and green pixels on white)."""

from __future__ import annotations

from pathlib import Path

import plant_picture

from .oracle import picture_colours


def test_the_picture_script_renders_the_contacts(tmp_path: Path) -> None:
    output = tmp_path / "plant.png"
    plant_picture.main(["--quick", "--output", str(output)])
    assert output.is_file()
    white, orange, green = picture_colours(output)
    assert white > 0.8
    assert orange > 50
    assert green > 20
