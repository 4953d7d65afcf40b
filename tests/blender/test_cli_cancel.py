"""Ctrl+C and SIGTERM stop the command line's bake, serial or ``-j N``, at the moment a file is being saved:
no process is left running, no output or temporary file is left, and the inputs are as they were.

The moment is hit without timing: every process the test starts imports a ``sitecustomize`` that holds each
save of the command inside Blender's ``save_post`` handlers (the save operator has written the temporary
file and not returned yet), and writes a file named by its process id to say so; the test signals once each
process is held there."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from .cli_scenes import CHAIN, cli_command, digest, save_scene

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")

HOLD = """
import os
import time
from pathlib import Path

import bpy


@bpy.app.handlers.persistent
def hold(filepath, *_):
    if ".tmp.blend" in filepath:  # the command's own save, under the temporary name
        Path(os.environ["FABRIK_TEST_HELD"], str(os.getpid())).write_text(filepath)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            time.sleep(0.02)


bpy.app.handlers.save_post.append(hold)
"""


@dataclass
class Run:
    process: subprocess.Popen[bytes]
    held: Path
    temporary: Path
    log: Path

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_held(self, count: int) -> dict[int, Path]:
        """Wait until ``count`` processes hold a save; their ids and the temporary files they are saving."""
        end = time.monotonic() + 180
        while len(list(self.held.iterdir())) < count:
            assert self.process.poll() is None, f"the command ended first:\n{self.stderr()}"
            assert time.monotonic() < end, f"no save began:\n{self.stderr()}"
            time.sleep(0.05)
        return {int(path.name): Path(path.read_text()) for path in self.held.iterdir()}


@contextmanager
def started(tmp_path: Path, *args: object) -> Iterator[Run]:
    """The command started in a session of its own, its saves held; whatever is left of it is killed after."""
    site, held, temporary = tmp_path / "site", tmp_path / "held", tmp_path / "tmp"
    for folder in (site, held, temporary):
        folder.mkdir()
    (site / "sitecustomize.py").write_text(HOLD)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        "FABRIK_TEST_HELD": str(held),
        "TMPDIR": str(temporary),
    }
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            cli_command(*args),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=_as_from_a_terminal,
        )
    run = Run(process, held, temporary, log)
    try:
        yield run
    finally:
        with suppress(ProcessLookupError):  # the command and its children, whatever is left of them
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _as_from_a_terminal() -> None:
    """Ctrl+C reaches the command as from a terminal: a pytest-xdist worker ignores SIGINT, and a command
    started with it ignored keeps ignoring it (as one started with "&" by a script)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(parent: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent_id = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent_id == parent:
            found.add(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended and not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def shots(folder: Path, count: int) -> dict[Path, str]:
    paths = [save_scene(folder / f"shot_{i}.blend") for i in range(1, count + 1)]
    return {path: digest(path) for path in paths}


@pytest.mark.parametrize("where", [[], ["--in-place"]], ids=["output", "in-place"])
def test_sigterm_while_the_output_is_saved_leaves_no_file(tmp_path: Path, where: list[str]) -> None:
    inputs = shots(tmp_path / "shots", 1)
    with started(tmp_path, *inputs, *CHAIN, *where) as run:
        ((pid, temporary),) = run.wait_held(1).items()
        assert pid == run.process.pid
        assert temporary.exists(), "the save is under way: the temporary file is written"
        run.process.send_signal(signal.SIGTERM)
        status = run.process.wait(timeout=120)
    assert status == 128 + signal.SIGTERM, run.stderr()
    assert "fabrik_bake: stopped by SIGTERM" in run.stderr()
    assert sorted(path.name for path in (tmp_path / "shots").iterdir()) == ["shot_1.blend"]
    assert {path: digest(path) for path in inputs} == inputs
    assert list(run.temporary.iterdir()) == []


@pytest.mark.parametrize(
    "how", ["SIGTERM to the command", "Ctrl+C (SIGINT to its process group)"], ids=["sigterm", "ctrl-c"]
)
def test_stopping_a_parallel_bake_ends_its_children_and_their_files(tmp_path: Path, how: str) -> None:
    inputs = shots(tmp_path / "shots", 3)
    with started(tmp_path, tmp_path / "shots", *CHAIN, "-j", 2, "--in-place") as run:
        held = run.wait_held(2)  # both children are saving their first file
        assert set(held) == children(run.process.pid)
        assert all(temporary.exists() for temporary in held.values())
        if how.startswith("SIGTERM"):
            run.process.send_signal(signal.SIGTERM)
        else:
            os.killpg(run.process.pid, signal.SIGINT)
        status = run.process.wait(timeout=120)
        left = [pid for pid in held if alive(pid)]
    signum = signal.SIGTERM if how.startswith("SIGTERM") else signal.SIGINT
    assert status == 128 + signum, run.stderr()
    assert left == [], "the children still run after the command ended"
    assert f"fabrik_bake: stopped by {signum.name}" in run.stderr()
    assert sorted(path.name for path in (tmp_path / "shots").iterdir()) == [path.name for path in inputs]
    assert {path: digest(path) for path in inputs} == inputs, "no input was replaced"
    assert list(run.temporary.iterdir()) == [], "no temporary folder is left (fabrik-bake-*, Blender's own)"


SIGNAL_WHILE_LEAVING = """
import os
import shutil
import signal
import time

_remove = shutil.rmtree


def rmtree(path, *args, **kwargs):
    if os.path.basename(os.path.normpath(path)).startswith("blender_"):  # the command leaving: Blender's folder
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)
    return _remove(path, *args, **kwargs)


shutil.rmtree = rmtree
"""


def test_a_signal_while_the_command_leaves_does_not_cut_its_clean_up_short(tmp_path: Path) -> None:
    """A ``-j`` child stopped by Ctrl+C gets its parent's SIGTERM a moment later, while it removes Blender's
    folder for its temporary files: here the signal comes at that moment in a bake that went well."""
    (shot,) = shots(tmp_path / "shots", 1)
    site, temporary = tmp_path / "site", tmp_path / "tmp"
    site.mkdir()
    temporary.mkdir()
    (site / "sitecustomize.py").write_text(SIGNAL_WHILE_LEAVING)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        "TMPDIR": str(temporary),
    }
    done = subprocess.run(cli_command(shot, *CHAIN, "--in-place"), env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout
    assert list(temporary.iterdir()) == [], "Blender's folder for temporary files is removed"
