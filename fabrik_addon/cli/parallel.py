"""Bake files in N parallel child processes, each the ``fabrik_bake`` command run on its share of the files.

Starting Blender costs about a second, more than baking a typical file, so each child bakes several files
one after the other rather than one child per file. The parent writes the jobs into a JSON config every
child reads, shares the files out by size, and reads each child's report back. A child rewrites its report
after every file, so a child that dies fails only the file it was baking (whose output is never
half-written: outputs are saved through a temporary file). Stopped (``cancel.Cancelled``), the parent stops
its children the same way (SIGTERM), and waits for them to remove their temporary files before it removes
its own folder.
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .files import FilePlan
from .jobs import AnyJob
from .report import FileResult, file_done, read_child_line, read_report, say


def child_command(script: Path, *, blender_binary: str | None, python: str) -> list[str]:
    """How to start a child running ``script`` (``command.CHILD``): with the same Python (``bpy`` module), or
    inside the same Blender binary, empty and with script auto-execution off; the child's own arguments
    follow."""
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


def share(plans: Sequence[FilePlan], processes: int) -> list[list[FilePlan]]:
    """Deal the files out to at most ``processes`` children, the largest first to the least loaded, so the
    children finish at about the same time; each child keeps its files in their original order."""
    order = {plan.input: i for i, plan in enumerate(plans)}
    groups: list[list[FilePlan]] = [[] for _ in range(min(processes, len(plans)))]
    loads = [0] * len(groups)
    for plan in sorted(plans, key=lambda p: p.input.stat().st_size, reverse=True):
        least = loads.index(min(loads))
        groups[least].append(plan)
        loads[least] += plan.input.stat().st_size
    return [sorted(group, key=lambda p: order[p.input]) for group in groups]


def bake_in_children(
    plans: Sequence[FilePlan],
    jobs: Sequence[AnyJob],
    processes: int,
    command: Sequence[str],
    output_args: Sequence[str],
) -> list[FileResult]:
    """Bake the planned files in at most ``processes`` child processes; the results follow ``plans``' order.

    ``output_args`` (``--output DIR``, ``--in-place`` or nothing) make each child plan the same outputs.
    """
    bakeable = [plan for plan in plans if plan.problem is None]
    finished = [0]
    lock = threading.Lock()

    def done_line(result: FileResult, seconds: float) -> None:
        """Print a finished file's line, numbered among all the files (children finish in any order)."""
        with lock:
            finished[0] += 1
            say(file_done(result, seconds, f"[{finished[0]}/{len(plans)}] "))

    def passed_on(line: str) -> None:
        """Print a child's line (its progress, a warning), whole among the other children's."""
        with lock:
            say(line)

    for plan in plans:  # the children bake only the files that can be baked
        if plan.problem is not None:
            done_line(FileResult.failed(plan.input, plan.problem), 0.0)
    with tempfile.TemporaryDirectory(prefix="fabrik-bake-") as folder:
        work = Path(folder)
        config = work / "jobs.json"
        config.write_text(json.dumps({"jobs": [job.to_config() for job in jobs]}), encoding="utf-8")

        def run(index: int, group: list[FilePlan]) -> dict[str, FileResult]:
            report = work / f"{index}.json"
            inputs = [str(plan.input) for plan in group]
            child = children.start(
                [*command, *inputs, "--config", str(config), "--report", str(report), "--child", *output_args]
            )
            if child is None:
                return {}
            assert child.stderr is not None
            for line in child.stderr:  # a finished file's line is numbered here; anything else passes through
                finished_file = read_child_line(line)
                if finished_file is not None:
                    done_line(*finished_file)
                elif line.strip():
                    passed_on(line.rstrip())
            status = child.wait()
            if children.stopping:  # the command stops: nothing more is said of the files
                return {}
            try:
                done = {result.input: result for result in read_report(report)}
            except (OSError, ValueError, KeyError):
                done = {}
            stopped = f"the baking process stopped (exit status {status}) before reporting on the file"
            for name in inputs:
                if name not in done:
                    done[name] = FileResult.failed(name, stopped)
                    done_line(done[name], 0.0)
            return done

        groups = share(bakeable, processes)
        results: dict[str, FileResult] = {}
        children = _Children()
        with ThreadPoolExecutor(max_workers=max(1, len(groups))) as pool:
            try:
                for done in pool.map(run, range(len(groups)), groups):
                    results.update(done)
            except BaseException:  # stopped (or a bug): the children first, or the pool waits for them
                children.stop()
                raise
    return [results.get(str(plan.input), FileResult.failed(plan.input, plan.problem or "")) for plan in plans]


class _Children:
    """The child processes started, and stopping them all: once stopping, no other starts."""

    #: Seconds a child has to finish the file it is saving and remove its temporary files, once told to stop.
    STOP_SECONDS = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: list[subprocess.Popen[str]] = []
        self.stopping = False

    def start(self, args: Sequence[str]) -> subprocess.Popen[str] | None:
        """A child running ``args``, its stderr piped; None once stopping."""
        with self._lock:
            if self.stopping:
                return None
            child = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            self._started.append(child)
            return child

    def stop(self) -> None:
        """Tell every child to stop (SIGTERM), and wait until they have: killed if they take too long."""
        with self._lock:
            self.stopping = True
            started = list(self._started)
        for child in started:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        end = time.monotonic() + self.STOP_SECONDS
        for child in started:
            try:
                child.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
