"""The README runs as written: every fenced block is run or parsed here, each Python block as it stands, from a
fresh process (the bpy module starts with its default scene: a block opens or builds the scene it needs).

- Python blocks that import ``fabrik_addon`` run with the venv's Python from a folder outside the repository
  (the package is found because scripts/test installs it into the venv), in the README's order: the first
  makes the ``shot.blend`` the others open.
- The shell lines that install the extension and run ``blender -c fabrik_bake`` run in a fresh Blender (bpy)
  process through Blender's own ``extension`` command and the command the extension registers; the Python
  blocks that use the installed extension run there too, after the README's block that enables it in a new
  process. No Blender binary is at hand, so ``blender ...`` lines are run through those functions. The
  README's way to install the extension with the bpy module alone runs in a fresh process too, and a new
  process finds the add-on off until it runs that block.
- The command lines bake the ``shot.blend`` the first Python block makes; the TOML block is the config they
  bake with, saved as ``chains.toml`` as the README says; the JSON block must have the keys of the report
  they write. ``scripts/...`` lines must name scripts that exist and options they take.
- The ``Object.fabrik`` tables of ``docs/sidebar.md`` must be the ones ``scripts/tools/property_table.py``
  generates now.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import property_table
import pytest

from tests.readme_blocks import README, Block, blocks, command_lines

REPO = README.parent
RUNNER = Path(__file__).with_name("readme_run.py")
#: Programs of the README's shell lines, and what checks them here.
BLENDER_COMMANDS = {"fabrik_bake", "extension"}
CHECKED_LANGUAGES = {"python", "toml", "json", "sh", "text"}


def shot_and_config(folder: Path) -> None:
    """What the README's command lines bake, in ``folder``: the ``shot.blend`` its first Python block makes, and
    its TOML block saved as ``chains.toml``, as the README says to."""
    run_with_the_package(next(block for block in of_language("python") if with_the_package(block)), folder)
    (toml,) = of_language("toml")
    (folder / "chains.toml").write_text(toml.text, encoding="utf-8")


def of_language(language: str) -> list[Block]:
    return [block for block in blocks() if block.language == language]


def installs(block: Block) -> bool:
    """The Python block that installs the extension with the bpy module."""
    return "package_install_files" in block.text


def starts(block: Block) -> bool:
    """The Python block that enables the installed extension in a new bpy process."""
    return "read_userpref" in block.text


def needs_blender(block: Block) -> bool:
    """A Python block for inside Blender: it imports the installed extension or uses the add-on's operators."""
    if installs(block) or starts(block):
        return False
    return "bl_ext." in block.text or "bpy.ops.fabrik" in block.text


def with_the_package(block: Block) -> bool:
    """A Python block for the venv's Python (the ``fabrik_addon`` package, or the scene the others open)."""
    return not (installs(block) or starts(block) or needs_blender(block))


def the_one(test: Callable[[Block], bool]) -> Block:
    (block,) = [block for block in of_language("python") if test(block)]
    return block


def run_with_the_package(block: Block, folder: Path) -> None:
    """``block`` as written, with the venv's Python in a fresh process, in ``folder``."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environment["PWD"] = str(folder)  # as a shell in the folder has it: Blender 4.2 takes its folder from PWD
    leaving = "\nimport os, sys\nsys.stdout.flush()\nos._exit(0)  # bpy's teardown may crash\n"
    done = subprocess.run(
        [sys.executable, "-c", block.text + leaving],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{block}:\n{done.stderr[-3000:]}"


def blender_lines() -> list[list[str]]:
    """The README's ``blender -c COMMAND ARGS`` lines."""
    lines = [words for block in of_language("sh") for words in command_lines(block) if words[0] == "blender"]
    return [words for words in lines if words[1] == "-c"]


def test_every_block_is_one_these_tests_run_or_parse() -> None:
    found = blocks()
    assert len(found) >= 10
    for block in found:
        assert block.language in CHECKED_LANGUAGES, f"{block}: give it a language these tests check"
    for block in of_language("sh"):
        for words in command_lines(block):
            assert words[0] in {"blender", ".venv/bin/python"} or words[0].startswith("scripts/"), f"{block}: {words}"
            if words[0] == "blender":
                blender_command = words[2] if words[1] == "-c" else None
                script = words[words.index("--python") + 1] if "--python" in words else None
                known = blender_command in BLENDER_COMMANDS or script == "scripts/tools/fabrik_bake.py"
                assert known, f"{block}: {words}"


def test_the_object_fabrik_tables_are_current() -> None:
    page = property_table.PAGE.read_text(encoding="utf-8")
    assert property_table.current(page) == property_table.tables(), "run scripts/tools/property_table.py --write"
    assert "`chains[i].tip_bone`" in page
    assert "`Object.fabrik.tolerance` | float (scene units) | ≥ 1e-06 | `0.001`" in page


def test_the_scripts_named_exist_and_take_the_options_shown() -> None:
    for block in of_language("sh"):
        for words in command_lines(block):
            script = next((w for w in words if w.startswith("scripts/")), None)
            if script is None:
                continue
            assert (REPO / script).is_file(), f"{block}: {script} does not exist"
            if words[0].startswith("scripts/"):  # a shell script: its --help lists every option used
                assert os.access(REPO / script, os.X_OK), f"{block}: {script} is not executable"
                done = subprocess.run([REPO / script, "--help"], capture_output=True, text=True, timeout=60)
                assert done.returncode == 0, done.stderr
                assert "set -" not in done.stdout, f"{script} --help prints its own shell lines"
                for option in (w.split("=")[0] for w in words[1:] if w.startswith("--")):
                    assert option in done.stdout, f"{block}: {script} --help does not mention {option}"


def test_the_python_blocks_run_with_the_venvs_python_from_any_folder(tmp_path: Path) -> None:
    found = [block for block in of_language("python") if with_the_package(block)]
    assert len(found) >= 4
    assert "save_as_mainfile" in found[0].text, "the first block makes the shot the others open"
    on_the_shot = [block for block in found[1:] if 'objects["Armature"]' in block.text]
    assert on_the_shot, "blocks bake the shot's armature"
    assert all('open_mainfile(filepath="shot.blend")' in block.text for block in on_the_shot)
    for block in found:
        run_with_the_package(block, tmp_path)
    assert (tmp_path / "shot.blend").is_file()


def blender_run(tmp_path: Path, *args: str) -> dict[str, Any]:
    """``readme_run.py ARGS`` in a fresh Blender process with the test's user folder, in ``tmp_path``."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environment["BLENDER_USER_RESOURCES"] = str(tmp_path / "user")
    environment["PWD"] = str(tmp_path)  # as a shell there has it (see ``run_with_the_package``)
    done = subprocess.run(
        [sys.executable, str(RUNNER), *args],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    seen["stderr"] = done.stderr
    return seen


def test_install_then_the_command_line_and_the_blocks_inside_blender(package: Path, tmp_path: Path) -> None:
    (tmp_path / "dist").mkdir()
    shutil.copy(package, tmp_path / "dist")
    shot_and_config(tmp_path)  # the README's shot.blend, which its command lines and blocks inside Blender open

    (install,) = [words[3:] for words in blender_lines() if words[2] == "extension"]
    install = [match for word in install for match in (sorted(glob.glob(word, root_dir=tmp_path)) or [word])]
    installed = blender_run(tmp_path, "install", *install)
    assert installed["status"] == 0, installed["stderr"][-3000:]
    assert installed["enabled"]

    commands = [words[3:] for words in blender_lines() if words[2] == "fabrik_bake"]
    inside = [block.text for block in of_language("python") if needs_blender(block)]
    spec = {"start": the_one(starts).text, "commands": commands, "blocks": inside}
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    seen = blender_run(tmp_path, "run", "spec.json")
    assert seen["enabled"]
    assert seen["command_registered"]
    assert seen["commands"] == [0] * len(commands), seen["stderr"][-3000:]
    assert len(commands) >= 2
    assert seen["blocks"] == [None] * len(inside), "\n".join(filter(None, seen["blocks"]))
    assert len(inside) >= 1

    # What the config's line wrote: the shot baked, its arm on target to the config's tolerance.
    report = json.loads((tmp_path / "bake.json").read_text(encoding="utf-8"))
    assert [Path(f["output"]).name for f in report["files"]] == ["shot_baked.blend"]
    assert [(c["armature"], c["tip_bone"]) for f in report["files"] for c in f["chains"]] == [("Armature", "hand.L")]
    assert all(c["max_error"] <= 1e-4 * 1.001 and not c["off_target_frames"] for c in report["files"][0]["chains"])
    # The README's sample report has the keys the real one has.
    (sample,) = [json.loads(block.text) for block in of_language("json")]
    assert set(sample) == set(report)
    assert set(sample["files"][0]) == set(report["files"][0])
    assert set(sample["files"][0]["chains"][0]) == set(report["files"][0]["chains"][0])


def test_the_bpy_module_installs_the_extension_and_a_new_process_enables_it(package: Path, tmp_path: Path) -> None:
    (tmp_path / "dist").mkdir()
    shutil.copy(package, tmp_path / "dist")
    spec = tmp_path / "spec.json"
    probe = "import bpy\nbpy.data.objects.new('probe', None).fabrik.chains.add()"

    spec.write_text(json.dumps({"blocks": [the_one(installs).text, probe]}), encoding="utf-8")
    installed = blender_run(tmp_path, "blocks", spec.name)
    assert installed["blocks"] == [None, None], "\n".join(filter(None, installed["blocks"]))
    assert installed["enabled"]

    # A new process: the add-on is off, with the error the README quotes, until the README's block enables it.
    spec.write_text(json.dumps({"blocks": [probe]}), encoding="utf-8")
    fresh = blender_run(tmp_path, "blocks", spec.name)
    assert not fresh["enabled"]
    assert "AttributeError: 'Object' object has no attribute 'fabrik'" in fresh["blocks"][0]
    assert "`'Object' object has no attribute 'fabrik'`" in " ".join(README.read_text(encoding="utf-8").split())
    spec.write_text(json.dumps({"blocks": [the_one(starts).text, probe]}), encoding="utf-8")
    started = blender_run(tmp_path, "blocks", spec.name)
    assert started["blocks"] == [None, None], "\n".join(filter(None, started["blocks"]))
    assert started["enabled"]


@pytest.mark.parametrize("runner", ["scripts/tools/fabrik_bake.py"])
def test_the_repository_copy_of_the_command_runs_the_readme_lines(runner: str, tmp_path: Path) -> None:
    shot_and_config(tmp_path)
    lines = [words for block in of_language("sh") for words in command_lines(block) if runner in words]
    assert len(lines) >= 2
    for words in lines:
        # ".venv/bin/python scripts/tools/fabrik_bake.py ARGS", or "blender -b --python scripts/tools/fabrik_bake.py --
        # ARGS" (Blender hands the script only what follows "--"): the same arguments, with the bpy module here.
        args = words[words.index("--") + 1 :] if "--" in words else words[words.index(runner) + 1 :]
        done = subprocess.run(
            [sys.executable, str(REPO / runner), *args], cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{words}:\n{done.stderr[-3000:]}"
        assert "[1/1] shot.blend: ok" in done.stderr
