"""The ``fabrik_bake`` command: bake FABRIK into bone rotation keys in .blend files (or plant animated feet),
without a screen.

Blender runs it as ``blender -c fabrik_bake ARGS`` once the extension is installed (it registers the command);
``scripts/tools/fabrik_bake.py`` runs the same code with the ``bpy`` module or inside ``blender -b --python``.
Exit status: 0 when every file baked, 1 when any failed, 2 for a usage error (then nothing is opened), 3 with
``--strict`` when every file baked but a frame of a chain is off target (or a planted foot's pin out of reach);
128 + the signal's number when stopped by one (130 for Ctrl+C, 143 for SIGTERM), the file being baked left
unwritten.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from . import cancel
from .files import FilePlan, check_report, plan_files
from .jobs import AnyJob, UsageError
from .options import PROGRAM, Request, in_blender_binary, load_jobs, parse_args, script_args
from .report import STRICT_STATUS, FileResult, child_line, file_done, off_target, say, summary, write_report

__all__ = ["PROGRAM", "execute", "main", "run_script"]

USAGE_STATUS = 2
#: The script a ``-j N`` child runs: it imports this package, whatever its name, from the folder it lies in.
CHILD = Path(__file__).with_name("child.py")


def execute(args: list[str]) -> int:
    """``blender -c fabrik_bake ARGS``: Blender's entry for the command (``bpy.utils.register_cli_command``)."""
    return main(args)


def run_script(argv: Sequence[str]) -> NoReturn:
    """Run the command from a script (``scripts/tools/fabrik_bake.py``, or ``child.py`` in a ``-j N`` child) with the
    script's command line ``argv``, with the ``bpy`` module or inside a Blender binary (see
    ``options.script_args``; there, with no input, the file Blender was started with is baked), and leave.

    The process leaves at once with the command's status: Blender's teardown at interpreter exit can crash
    (bpy 4.2 after Rigify), and inside a Blender binary a script's status would otherwise be lost. What that
    teardown would remove, Blender's folder for the session's temporary files, is removed first.
    """
    inside_blender = in_blender_binary()
    open_file = None
    if inside_blender:
        path: str = sys.modules["bpy"].data.filepath
        open_file = Path(path) if path else None
    status = main(script_args(argv, inside_blender=inside_blender), open_file=open_file, leaving=True)
    cancel.ignore_from_now()
    sys.stdout.flush()
    sys.stderr.flush()
    bpy = sys.modules.get("bpy")
    if bpy is not None and Path(bpy.app.tempdir).name.startswith("blender_"):
        shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
    os._exit(status)


def main(args: Sequence[str], *, open_file: Path | None = None, leaving: bool = False) -> int:
    """Run the command with its arguments ``args``; returns the exit status.

    Parameters
    ----------
    args : sequence of str
        The command's own arguments (see ``options.parse_args``).
    open_file : Path, optional
        The file Blender was started with, baked when no input is given.
    leaving : bool
        The process leaves once this returns: Ctrl+C and SIGTERM stay ignored after the bake, so that none
        cuts short what is left to do (``cancel.stop_on_signals``).
    """
    try:
        request = parse_args(args, open_file=open_file)
        jobs = load_jobs(request)
        plans = plan_files(request.inputs, request.output, in_place=request.in_place, overwrite=request.overwrite)
        check_report(request.report, plans, request.config)
    except UsageError as error:
        say(f"{PROGRAM}: error: {error}\n(run {PROGRAM} --help for the options)")
        return USAGE_STATUS
    except SystemExit as done:  # --help
        return done.code if isinstance(done.code, int) else 0

    start = time.perf_counter()
    try:
        with cancel.stop_on_signals(leaving=leaving):
            return _bake_and_report(plans, jobs, request, start)
    except cancel.Cancelled as stop:
        if not request.child:  # a child's parent says it
            say(
                f"{PROGRAM}: stopped by {stop} after {time.perf_counter() - start:.1f} s: the files reported ok "
                "above are saved; nothing else was written (no report either)"
            )
        return stop.status


def _bake_and_report(plans: Sequence[FilePlan], jobs: Sequence[AnyJob], request: Request, start: float) -> int:
    """Bake the files, write the report and say how it went; the exit status."""
    results = _bake(plans, jobs, request)
    if any(r.status != "ok" for r in results):
        status = 1
    else:
        status = STRICT_STATUS if request.strict and off_target(results) else 0
    if request.report is not None:
        try:
            write_report(request.report, results)
        except OSError as error:
            say(f"{PROGRAM}: error: cannot write the report {request.report}: {error.strerror or error}")
            status = 1
    if not request.child:
        say(summary(results, time.perf_counter() - start, strict=request.strict))
    return status


def _bake(plans: Sequence[FilePlan], jobs: Sequence[AnyJob], request: Request) -> list[FileResult]:
    """Bake the files one after the other in this process, or shared out to ``-j N`` child processes."""
    bakeable = [plan for plan in plans if plan.problem is None]
    if request.processes > 1 and len(bakeable) > 1:
        import bpy

        from .parallel import bake_in_children, child_command

        command = child_command(CHILD, blender_binary=bpy.app.binary_path or None, python=sys.executable)
        where = ["--in-place"] if request.in_place else ["--output", str(request.output)] if request.output else []
        where += ["--overwrite"] if request.overwrite else []
        return bake_in_children(plans, jobs, request.processes, command, where)

    from .bake_file import bake_file  # imports bpy: after the arguments are known to be right

    results = []
    for index, plan in enumerate(plans, start=1):
        cancel.check()
        start = time.perf_counter()
        results.append(bake_file(plan, jobs))
        seconds = time.perf_counter() - start
        if request.child:  # the parent prints the file's line, numbered among all the files
            say(child_line(results[-1], seconds))
        else:
            say(file_done(results[-1], seconds, f"[{index}/{len(plans)}] "))
        if request.child and request.report is not None:
            write_report(request.report, results)  # after every file: a crash then loses only the file in hand
    return results
