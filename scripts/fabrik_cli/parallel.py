"""Bake files in parallel child processes: each child is ``fabrik_bake.py`` run on one file.

The parent writes the jobs into a JSON config that every child reads, gives each child its file, output and a
report path, and reads the child's report back. A child that dies without a report fails its file only; its
output is never half-written, since children save through a temporary file too.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from .files import FilePlan
from .options import Job
from .report import FileResult, read_report


def child_command(script: Path, *, blender_binary: str | None, python: str) -> list[str]:
    """How to start the script again: with the same Python (``bpy`` module), or inside the same Blender
    binary, empty and with script auto-execution off; the child's own arguments follow."""
    if blender_binary:
        return [
            blender_binary,
            "--background",
            "--factory-startup",
            "--disable-autoexec",
            "--python-exit-code",
            "1",
            "--python",
            str(script),
            "--",
        ]
    return [python, str(script)]


def bake_in_children(
    plans: Sequence[FilePlan],
    jobs: Sequence[Job],
    processes: int,
    command: Sequence[str],
    on_done: Callable[[FileResult, float], None],
) -> list[FileResult]:
    """Bake each planned file in a child process, at most ``processes`` at a time.

    ``on_done`` is called with each file's result and seconds as it finishes; the results are returned in
    the order of ``plans``.
    """
    with tempfile.TemporaryDirectory(prefix="fabrik-bake-") as folder:
        work = Path(folder)
        config = work / "jobs.json"
        config.write_text(json.dumps({"jobs": [job.to_config() for job in jobs]}), encoding="utf-8")

        def run(index: int, plan: FilePlan) -> tuple[FileResult, float]:
            start = time.perf_counter()
            if plan.problem is not None or plan.output is None:
                return FileResult.failed(plan.input, plan.problem or "nothing to bake"), 0.0
            report = work / f"{index}.json"
            where = ["--in-place"] if plan.output == plan.input else ["--output", str(plan.output)]
            args = [*command, str(plan.input), "--config", str(config), "--report", str(report), "--child", *where]
            status = subprocess.run(args, stdin=subprocess.DEVNULL, check=False).returncode
            try:
                (result,) = read_report(report)
            except (OSError, ValueError, KeyError):
                result = FileResult.failed(
                    plan.input, f"the baking process stopped (exit status {status}) before reporting on the file"
                )
            return result, time.perf_counter() - start

        results: dict[int, FileResult] = {}
        with ThreadPoolExecutor(max_workers=processes) as pool:
            futures = {pool.submit(run, i, plan): i for i, plan in enumerate(plans)}
            for future in as_completed(futures):
                result, seconds = future.result()
                results[futures[future]] = result
                on_done(result, seconds)
        return [results[i] for i in range(len(plans))]
