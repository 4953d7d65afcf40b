"""Build the add-on's extension zip with Blender's own extension builder.

Stages ``blender_manifest.toml`` with the contents of ``fabrik_addon/`` (no tests, caches or dev files) in a
temporary folder, then builds it and validates the zip with Blender's list of valid tags, so the zip is what the
Blender Extensions platform accepts. The builder is the ``bl_pkg`` tool (``blender_ext.py``) that ships inside
the ``bpy`` module and inside Blender, run one of two ways:

    python3.11 scripts/tools/build_extension.py      # any Python 3.11 with the bpy module (pip install bpy)
    python3 scripts/tools/build_extension.py --blender /path/to/blender   # Blender 4.2+: blender --command extension

Without ``--blender``, a Python that has no ``bpy`` module uses the ``blender`` on the PATH, if there is one.
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

REPO = Path(__file__).resolve().parents[2]
#: Left out of the package: Python caches and hidden files (editor and tool state).
_LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.py[cod]", ".*")
_NO_BUILDER = (
    "error: no extension builder: this Python ({python}) has no bpy module and no blender is on the PATH. "
    "Run this script with a Python 3.11 that has the bpy module (python3.11 -m venv build-env && "
    "build-env/bin/pip install bpy, or the .venv that scripts/test makes), or pass --blender /path/to/blender "
    "(Blender 4.2 or later)"
)


def builder(blender: str | None = None) -> tuple[list[str], list[str]]:
    """The command that runs Blender's extension builder, and the arguments each of its actions (``build``,
    ``validate``) takes: ``blender --command extension`` with a Blender binary (``blender``; else, where this
    Python has no ``bpy`` module, the one on the PATH), or the ``bpy`` module's ``blender_ext.py`` run by this
    Python, given Blender's list of valid tags (which Blender's own command uses by itself)."""
    spec = importlib.util.find_spec("bpy") if blender is None else None  # finds it without starting Blender
    if spec is None or not spec.submodule_search_locations:
        binary = blender or shutil.which("blender")
        if binary is None:
            raise SystemExit(_NO_BUILDER.format(python=sys.executable))
        return [binary, "--command", "extension"], []
    root = Path(next(iter(spec.submodule_search_locations)))
    tools = sorted(root.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    tags = sorted(root.glob("*/scripts/modules/_bpy_internal/extensions/tags.py"))
    if not tools or not tags:
        raise SystemExit(f"error: Blender's extension builder (bl_pkg/cli/blender_ext.py) is not under {root}")
    return [sys.executable, str(tools[-1])], [f"--valid-tags={tags[-1]}"]


def _run(command: tuple[list[str], list[str]], action: str, *args: str) -> None:
    program, every_action = command
    try:
        done = subprocess.run([*program, action, *every_action, *args], capture_output=True, text=True, check=False)
    except OSError as error:
        raise SystemExit(f"error: cannot run {program[0]}: {error.strerror or error}") from None
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(program)} {action} failed:\n{done.stdout}{done.stderr}")


def build(output_dir: Path, blender: str | None = None) -> Path:
    """Build and validate the extension zip in ``output_dir`` (with the Blender binary ``blender``, else as
    ``builder`` finds one); returns its path."""
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
    package = output_dir.resolve() / f"{manifest['id']}-{manifest['version']}.zip"
    command = builder(blender)
    output_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fabrik-extension-") as staging:
        source = Path(staging) / manifest["id"]
        shutil.copytree(REPO / "fabrik_addon", source, ignore=_LEFT_OUT)
        shutil.copy2(REPO / "blender_manifest.toml", source)
        _run(command, "build", f"--source-dir={source}", f"--output-filepath={package}")
    _run(command, "validate", str(package))
    return package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=REPO / "dist", help="where the zip goes (default: dist)")
    parser.add_argument(
        "--blender", metavar="PATH", help="build with this Blender (4.2 or later): blender --command extension"
    )
    args = parser.parse_args()
    print(build(args.output_dir, args.blender))


if __name__ == "__main__":
    main()
