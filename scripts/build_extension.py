"""Build the add-on's extension zip with Blender's own extension builder.

Stages ``blender_manifest.toml`` with the contents of ``fabrik_addon/`` (no tests, caches or dev files) in a
temporary folder, then runs the ``bl_pkg`` command-line tool that ships inside the ``bpy`` wheel
(``blender_ext.py build``, then ``validate`` on the zip, with Blender's own list of valid tags), so the zip is
what the Blender Extensions platform accepts.

Run with the development venv's Python (it has the ``bpy`` wheel; the tool itself needs only Python 3.11)::

    .venv/bin/python scripts/build_extension.py [--output-dir dist]

Prints the path of ``dist/fabrik_addon-<version>.zip``.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Left out of the package: Python caches and hidden files (editor and tool state).
_LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.py[cod]", ".*")


def blender_ext() -> tuple[Path, Path]:
    """The ``blender_ext.py`` tool of the installed ``bpy`` wheel and Blender's list of valid tags."""
    spec = importlib.util.find_spec("bpy")  # finds the wheel without importing (starting) Blender
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("error: no bpy module in this Python: run scripts/test once, then use .venv/bin/python")
    root = Path(next(iter(spec.submodule_search_locations)))
    tools = sorted(root.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    tags = sorted(root.glob("*/scripts/modules/_bpy_internal/extensions/tags.py"))
    if not tools or not tags:
        raise SystemExit(f"error: Blender's extension builder (bl_pkg/cli/blender_ext.py) is not under {root}")
    return tools[-1], tags[-1]


def _run(tool: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: blender_ext.py {args[0]} failed:\n{done.stdout}{done.stderr}")


def build(output_dir: Path) -> Path:
    """Build and validate the extension zip in ``output_dir``; returns its path."""
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
    package = output_dir.resolve() / f"{manifest['id']}-{manifest['version']}.zip"
    tool, tags = blender_ext()
    output_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fabrik-extension-") as staging:
        source = Path(staging) / manifest["id"]
        shutil.copytree(REPO / "fabrik_addon", source, ignore=_LEFT_OUT)
        shutil.copy2(REPO / "blender_manifest.toml", source)
        _run(tool, "build", f"--source-dir={source}", f"--output-filepath={package}", f"--valid-tags={tags}")
    _run(tool, "validate", f"--valid-tags={tags}", str(package))
    return package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=REPO / "dist", help="where the zip goes (default: dist)")
    args = parser.parse_args()
    print(build(args.output_dir))


if __name__ == "__main__":
    main()
