"""The layer check (``scripts/tools/check_layers.py``) passes on the package, and finds each kind of problem it is
for in a package made to have them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import check_layers


def test_the_package_keeps_its_layers() -> None:
    assert list(check_layers.problems(check_layers.read_modules())) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / "fabrik_addon" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))


def _problems(tmp_path: Path, files: dict[str, str]) -> list[str]:
    _write(tmp_path, files)
    return list(check_layers.problems(check_layers.read_modules(tmp_path), tmp_path))


def test_imports_past_a_face_private_names_and_names_not_listed_are_found(tmp_path: Path) -> None:
    found = _problems(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": 'from .maths import add\n__all__ = ["add"]\n',
            "low/maths.py": "def add(): ...\ndef _hidden(): ...\ndef other(): ...\n",
            "low/_inner.py": "X = 1\n",
            "high/__init__.py": "",
            "high/ok.py": "from ..low import add\n",
            "high/past_face.py": "from ..low.maths import add\n",
            "high/private.py": "from ..low._inner import X\n",
            "high/unlisted.py": "from ..low import other\n",
            "high/hidden.py": "from ..low.maths import _hidden\n",
        },
    )
    text = "\n".join(found)
    assert "high/past_face.py:1 imports add from fabrik_addon.low.maths, a module of another package" in text
    assert "high/private.py:1 imports from the private module fabrik_addon.low._inner" in text
    assert "high/unlisted.py:1 imports other from fabrik_addon.low, which does not list it in __all__" in text
    assert "high/hidden.py:1 imports the private name _hidden" in text
    assert not any("high/ok.py" in line for line in found)


def test_cycles_of_modules_and_of_packages_are_found(tmp_path: Path) -> None:
    found = _problems(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "from . import c\n",
            "c.py": "from . import a\n",
            "one/__init__.py": 'from .x import X\n__all__ = ["X"]\n',
            "one/x.py": "from ..two import Y\nX = 1\n",
            "two/__init__.py": 'from .y import Y\n__all__ = ["Y"]\n',
            "two/y.py": "from ..one import X\nY = 2\n",
        },
    )
    assert "module cycle: fabrik_addon.a -> fabrik_addon.b -> fabrik_addon.c -> fabrik_addon.a" in found
    assert "package cycle: fabrik_addon.one -> fabrik_addon.two -> fabrik_addon.one" in found


def test_long_modules_and_crowded_packages_are_found(tmp_path: Path) -> None:
    files = {"__init__.py": "", "long.py": "x = 1\n" * (check_layers.MAX_LINES + 1), "crowd/__init__.py": ""}
    files |= {f"crowd/m{i}.py": "" for i in range(check_layers.MAX_MODULES + 1)}
    found = _problems(tmp_path, files)
    assert any(line.startswith(f"fabrik_addon/long.py: {check_layers.MAX_LINES + 1} lines") for line in found)
    assert any(line.startswith(f"fabrik_addon/crowd/: {check_layers.MAX_MODULES + 1} modules") for line in found)
