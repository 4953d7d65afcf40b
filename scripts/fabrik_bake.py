"""Bake FABRIK IK into bone rotation keys in .blend files, without a screen: on one machine or a render farm.

With the ``bpy`` module, or inside a Blender binary (the script reads only the arguments after ``--``)::

    python scripts/fabrik_bake.py shots/ --armature Rig --tip hand.L --chain-length 3 --target Hand.IK
    blender -b --python scripts/fabrik_bake.py -- shots/ --config chains.toml -j 4 --report bake.json

Each input is saved as ``<name>_baked.blend`` beside it unless ``--output`` or ``--in-place`` says otherwise;
a file whose bake fails gets no output. Files are opened with their embedded Python turned off.
Exit status: 0 when every file baked, 1 when any failed, 2 for a usage error (then nothing is opened).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# A Blender binary has imported bpy before it runs the script; the bpy module is imported only below.
INSIDE_BLENDER = "bpy" in sys.modules
SCRIPT = Path(__file__).resolve()
for _folder in (SCRIPT.parents[1], SCRIPT.parent):  # the repository (fabrik_addon) and scripts (fabrik_cli)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from fabrik_cli.files import FilePlan, check_report, plan_files  # noqa: E402
from fabrik_cli.options import AnyJob, Request, UsageError, load_jobs, parse_args, script_args  # noqa: E402
from fabrik_cli.report import FileResult, file_done, say, summary, write_report  # noqa: E402

USAGE_STATUS = 2


def main(argv: Sequence[str]) -> int:
    """Run the command line ``argv`` (``sys.argv``); returns the exit status."""
    try:
        request = parse_args(script_args(argv, inside_blender=INSIDE_BLENDER), open_file=_open_file())
        jobs = load_jobs(request)
        plans = plan_files(request.inputs, request.output, in_place=request.in_place)
        check_report(request.report, plans, request.config)
    except UsageError as error:
        return _usage_error(error)
    except SystemExit as done:  # --help
        return done.code if isinstance(done.code, int) else 0

    start = time.perf_counter()
    results = _bake(plans, jobs, request)
    status = 0 if all(r.status == "ok" for r in results) else 1
    if request.report is not None:
        try:
            write_report(request.report, results)
        except OSError as error:
            say(f"fabrik_bake.py: error: cannot write the report {request.report}: {error.strerror or error}")
            status = 1
    if not request.child:
        say(summary(results, time.perf_counter() - start))
    return status


def _bake(plans: Sequence[FilePlan], jobs: Sequence[AnyJob], request: Request) -> list[FileResult]:
    """Bake the files one after the other in this process, or shared out to ``-j N`` child processes."""
    bakeable = [plan for plan in plans if plan.problem is None]
    if request.processes > 1 and len(bakeable) > 1:
        import bpy
        from fabrik_cli.parallel import bake_in_children, child_command

        binary = bpy.app.binary_path if INSIDE_BLENDER else None
        command = child_command(SCRIPT, blender_binary=binary, python=sys.executable)
        where = ["--in-place"] if request.in_place else ["--output", str(request.output)] if request.output else []
        for plan in plans:  # the children report on the files they bake, not on these
            if plan.problem is not None:
                say(file_done(FileResult.failed(plan.input, plan.problem), 0.0))
        return bake_in_children(plans, jobs, request.processes, command, where)

    from fabrik_cli.bake_file import bake_file  # imports bpy: after the arguments are known to be right

    results = []
    for index, plan in enumerate(plans, start=1):
        start = time.perf_counter()
        results.append(bake_file(plan, jobs))
        counter = "" if request.child else f"[{index}/{len(plans)}] "
        say(file_done(results[-1], time.perf_counter() - start, counter))
        if request.child and request.report is not None:
            write_report(request.report, results)  # after every file: a crash then loses only the file in hand
    return results


def _open_file() -> Path | None:
    """The file a Blender binary was started with (``blender -b scene.blend --python ...``), if any."""
    if not INSIDE_BLENDER:
        return None
    path: str = sys.modules["bpy"].data.filepath
    return Path(path) if path else None


def _usage_error(error: UsageError) -> int:
    say(f"fabrik_bake.py: error: {error}\n(run fabrik_bake.py --help for the options)")
    return USAGE_STATUS


if __name__ == "__main__":
    exit_status = main(sys.argv)
    # Leave at once with the real status: Blender's teardown at interpreter exit can crash (bpy 4.2 after
    # Rigify), and inside a Blender binary a script's status would otherwise be lost.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_status)
