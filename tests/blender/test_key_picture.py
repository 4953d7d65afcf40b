"""The README's picture of fewer keys is made by ``scripts/key_picture.py`` with Blender's own render: it runs and
writes a picture with both curves on it (orange and green pixels on white)."""

from __future__ import annotations

from pathlib import Path

import key_picture

from .oracle import picture_colours


def test_the_picture_script_renders_the_curve_before_and_after(tmp_path: Path) -> None:
    output = tmp_path / "keys.png"
    key_picture.main(["--quick", "--output", str(output)])
    assert output.is_file()
    white, orange, green = picture_colours(output)
    assert white > 0.7
    assert orange > 50
    assert green > 20
