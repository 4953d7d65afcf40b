"""The README's pictures are made with Blender's own render: ``scripts/pictures/plant_picture.py`` (Plant Feet),
``scripts/pictures/edit_picture.py`` (editing through IK) and ``scripts/pictures/key_picture.py`` (fewer keys) run
and write a picture with their paths or curves on it (orange and green pixels on white, and the edit's red target)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import edit_picture
import key_picture
import plant_picture
import pytest

from .oracle import picture_colours

#: Each picture script, and the least it must show: the share of white, and how many orange, green and red pixels.
PICTURES: dict[str, tuple[Callable[[list[str]], None], dict[str, float]]] = {
    "plant feet: the balls' paths in each contact": (
        plant_picture.main,
        {"white": 0.8, "orange": 50, "green": 20, "red": 0},
    ),
    "editing: both hand paths and the moved target": (
        edit_picture.main,
        {"white": 0.8, "orange": 50, "green": 50, "red": 10},
    ),
    "fewer keys: the curve before and after": (key_picture.main, {"white": 0.7, "orange": 50, "green": 20, "red": 0}),
}


@pytest.mark.parametrize("picture", PICTURES)
def test_the_picture_script_renders_what_it_shows(picture: str, tmp_path: Path) -> None:
    main, least = PICTURES[picture]
    output = tmp_path / "picture.png"
    main(["--quick", "--output", str(output)])
    seen = picture_colours(output)
    assert {colour: seen[colour] >= low for colour, low in least.items()} == dict.fromkeys(least, True), seen
