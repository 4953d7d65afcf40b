"""Which .blend files the inputs name, where each one's baked copy goes, and writing files atomically."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import cancel
from .jobs import UsageError

#: Suffix of the default output's name: ``shot.blend`` bakes into ``shot_baked.blend`` beside it.
BAKED_SUFFIX = "_baked"

#: The suffixes of the backups Blender keeps of earlier saves (``shot.blend1``, ``shot.blend2``...).
_BACKUP = re.compile(r"\.blend\d+")
_BACKUP_PROBLEM = (
    "a backup Blender keeps of an earlier save, not a .blend file: to bake it, copy it to a name ending in .blend"
)


@dataclass(frozen=True)
class FilePlan:
    """One input file and where its bake is saved.

    ``problem`` says why the input cannot be baked (it is missing, not a .blend file, or its output exists or
    cannot be written); nothing is written for it then, and ``output`` is where it would have gone (None if
    the input itself is the problem).
    """

    input: Path
    output: Path | None
    problem: str | None = None


def plan_files(
    inputs: Sequence[Path], output: Path | None, *, in_place: bool, overwrite: bool = False
) -> list[FilePlan]:
    """Expand folders into their .blend files and give each file its output path (absolute).

    A folder stands for the .blend files directly in it, in name order, leaving out earlier outputs
    (``*_baked.blend``). With ``output`` ending in ``.blend`` the one input is saved there; any other
    ``output`` is a folder that receives each file under its own name; without it, each file is saved as
    ``<name>_baked.blend`` beside it; ``in_place`` replaces the input. A file whose output exists already
    (unless ``overwrite``), or cannot be written there, is planned as a failure: found here, before any file
    is opened.

    Raises
    ------
    UsageError
        When outputs would overwrite an input (without ``in_place``) or each other, or a ``.blend`` output is
        given for several inputs.
    """
    plans: list[FilePlan] = []
    seen: set[Path] = set()
    for path, problem in _expand(inputs):
        if path in seen:
            continue
        seen.add(path)
        plans.append(FilePlan(path, None, problem))
    bakeable = [plan for plan in plans if plan.problem is None]
    if output is not None and output.suffix.lower() == ".blend" and len(bakeable) > 1:
        raise UsageError(f"--output {output} names one file but {len(bakeable)} files are to be baked: give a folder")
    planned = [FilePlan(p.input, _output(p.input, output, in_place), None) if p.problem is None else p for p in plans]
    by_output: dict[Path, Path] = {}
    for plan in planned:
        if plan.output is None:
            continue
        where = plan.output.resolve()  # the file itself, through any link
        if where == plan.input.resolve() and not in_place:
            raise UsageError(f"the output for {plan.input} would overwrite it: give another --output, or --in-place")
        if where in by_output:
            raise UsageError(f"{by_output[where]} and {plan.input} would both be saved as {plan.output}")
        by_output[where] = plan.input
    return [_saveable(plan, in_place, overwrite) for plan in planned]


def check_report(report: Path | None, plans: Sequence[FilePlan], config: Path | None) -> None:
    """The report must not land on a file the bake reads or writes: an input, an output or the config file.

    Raises
    ------
    UsageError
        Naming the file the report would overwrite.
    """
    if report is None:
        return
    where = report.resolve()
    for plan in plans:
        if where == plan.input.resolve():
            raise UsageError(f"--report {report} is the input {plan.input}: the report would overwrite it")
        if plan.output is not None and where == plan.output.resolve():
            raise UsageError(f"--report {report} is where {plan.input} is saved: give the report another path")
    if config is not None and where == config.resolve():
        raise UsageError(f"--report {report} is the config file: the report would overwrite it")


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Write ``path`` through a temporary file beside it (``temporary_path``), renamed into place only once
    complete.

    ``write`` is called with the temporary path. If it fails, or the command is stopped meanwhile
    (``cancel.Cancelled``), whatever was at ``path`` stays as it was and the temporary file is removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_path(path)
    try:
        write(temporary)
        cancel.check()  # a stop that came while Blender saved, and ran Python of its own (a handler)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def temporary_path(path: Path) -> Path:
    """The hidden file beside ``path`` that this process writes first (``write_atomically``)."""
    return path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")


def _saveable(plan: FilePlan, in_place: bool, overwrite: bool) -> FilePlan:
    """The plan, or a failed one if its output exists (and neither ``in_place`` nor ``overwrite`` say to replace
    it) or its folder is a file or cannot be written, as far as can be told before the file is baked (folders
    that are missing are made)."""
    output = plan.output
    if output is None:
        return plan
    folder = output.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    cannot = f"cannot save {output}:"
    problem = None
    if output.is_dir():
        problem = f"{cannot} it is a folder"
    elif os.path.lexists(output) and not (in_place or overwrite):
        problem = f"its output {output} exists: pass --overwrite to replace it"
    elif not folder.is_dir():
        problem = f"{cannot} {folder} is a file, not a folder (give --output a folder, or FILE.blend for one input)"
    elif not os.access(folder, os.W_OK | os.X_OK):
        remedy = (
            "bake to --output FOLDER instead of --in-place" if in_place else "give --output a folder you can write to"
        )
        problem = f"{cannot} the folder {folder} is read-only ({remedy})"
    return plan if problem is None else FilePlan(plan.input, output, problem)


def _expand(inputs: Sequence[Path]) -> list[tuple[Path, str | None]]:
    found: list[tuple[Path, str | None]] = []
    for given in inputs:
        path = Path(os.path.abspath(given))  # absolute, but a symbolic link stays the link: outputs go beside it
        if path.is_dir():
            files = sorted(p for p in path.glob("*.blend") if p.is_file() and not p.stem.endswith(BAKED_SUFFIX))
            found.extend((p, None) for p in files)
            if not files:
                found.append((path, "the folder holds no .blend file to bake"))
        elif not path.exists():
            found.append((path, "no such file or folder"))
        elif _BACKUP.fullmatch(path.suffix.lower()):
            restored = path.with_name(f"{path.stem}_restored.blend").name
            found.append((path, f"{_BACKUP_PROBLEM} (e.g. {restored})"))
        elif path.suffix.lower() != ".blend":
            found.append((path, "not a .blend file"))
        else:
            found.append((path, None))
    return found


def _output(path: Path, output: Path | None, in_place: bool) -> Path:
    if in_place:
        return path.resolve()  # a linked file is replaced where it lives, and the link kept
    if output is None:
        return path.with_name(f"{path.stem}{BAKED_SUFFIX}{path.suffix}")
    if output.suffix.lower() == ".blend":
        return Path(os.path.abspath(output))
    return Path(os.path.abspath(output)) / path.name


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """Silence what Blender's C code prints on stdout meanwhile ("Read blend", "Saved copy as ..."): this
    command's own lines go to stderr."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
