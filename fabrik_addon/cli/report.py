"""What happened to each file: results, the JSON report and the lines printed on stderr.

The report's schema::

    {"files": [{"input": path, "output": path or null, "status": "ok" | "error", "error": message or null,
                "chains": [{"armature": name, "tip_bone": name, "frames": [first, last], "max_error": number,
                            "unreachable_frames": [frame, ...], "off_target_frames": [frame, ...],
                            "seconds": number}]}]}

``output`` is null when nothing was written for the file; a failed file lists no chains, since none of them
was saved. ``off_target_frames`` are the frames where Blender's evaluation of the keys puts the tip farther
from the target than the tolerance, whatever the cause (``unreachable_frames`` among them).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .files import write_atomically


@dataclass(frozen=True)
class ChainResult:
    """One baked chain; ``frames`` are the first and last keyed frames, errors in world units."""

    armature: str
    tip_bone: str
    frames: tuple[int, int]
    max_error: float
    unreachable_frames: tuple[int, ...]
    off_target_frames: tuple[int, ...]
    seconds: float


@dataclass(frozen=True)
class FileResult:
    """One input file: ``status`` is "ok" (its output was saved) or "error" (nothing was written)."""

    input: str
    output: str | None
    status: str
    error: str | None = None
    chains: tuple[ChainResult, ...] = field(default=())

    @classmethod
    def failed(cls, path: Path | str, message: str) -> FileResult:
        return cls(str(path), None, "error", message)


def to_json(results: Sequence[FileResult]) -> dict[str, Any]:
    return {
        "files": [
            {
                "input": r.input,
                "output": r.output,
                "status": r.status,
                "error": r.error,
                "chains": [
                    {
                        "armature": c.armature,
                        "tip_bone": c.tip_bone,
                        "frames": list(c.frames),
                        "max_error": c.max_error,
                        "unreachable_frames": list(c.unreachable_frames),
                        "off_target_frames": list(c.off_target_frames),
                        "seconds": c.seconds,
                    }
                    for c in r.chains
                ],
            }
            for r in results
        ]
    }


def from_json(data: dict[str, Any]) -> list[FileResult]:
    """Read back what ``to_json`` wrote (a child process's report)."""
    return [
        FileResult(
            f["input"],
            f["output"],
            f["status"],
            f["error"],
            tuple(
                ChainResult(
                    c["armature"],
                    c["tip_bone"],
                    (int(c["frames"][0]), int(c["frames"][1])),
                    float(c["max_error"]),
                    tuple(int(x) for x in c["unreachable_frames"]),
                    tuple(int(x) for x in c["off_target_frames"]),
                    float(c["seconds"]),
                )
                for c in f["chains"]
            ),
        )
        for f in data["files"]
    ]


def write_report(path: Path, results: Sequence[FileResult]) -> None:
    text = json.dumps(to_json(results), indent=2, allow_nan=False) + "\n"  # NaN is not JSON: never written

    def write(temporary: Path) -> None:
        temporary.write_text(text, encoding="utf-8")

    write_atomically(path, write)


def read_report(path: Path) -> list[FileResult]:
    return from_json(json.loads(path.read_text(encoding="utf-8")))


def say(message: str, stream: TextIO | None = None) -> None:
    """Progress and results go to stderr (stdout belongs to Blender's own messages)."""
    out = stream or sys.stderr
    print(message, file=out, flush=True)


def file_done(result: FileResult, seconds: float, counter: str = "") -> str:
    """One line for a finished file: ``[3/8] shot_03.blend: ok (0.41 s): 2 chains, max error 3.1e-04 -> ...``."""
    head = f"{counter}{Path(result.input).name}"
    if result.status != "ok":
        return f"{head}: error ({seconds:.2f} s): {result.error}"
    worst = max((c.max_error for c in result.chains), default=0.0)
    off_target = sum(len(c.off_target_frames) for c in result.chains)
    unreachable = sum(len(c.unreachable_frames) for c in result.chains)
    missed = f", {unreachable} frames out of reach" if unreachable else ""
    missed += f", {off_target} frames off target" if off_target else ""
    chains = f"{len(result.chains)} chain{'s' if len(result.chains) != 1 else ''}"
    return f"{head}: ok ({seconds:.2f} s): {chains}, max error {worst:.1e}{missed} -> {result.output}"


#: How a ``-j N`` child tells its parent that it finished a file (the parent prints the line, numbered).
CHILD_LINE = "@fabrik-file "


def child_line(result: FileResult, seconds: float) -> str:
    """The line a child prints for a finished file, for its parent to read (``read_child_line``)."""
    return CHILD_LINE + json.dumps({"file": to_json([result])["files"][0], "seconds": seconds}, allow_nan=False)


def read_child_line(line: str) -> tuple[FileResult, float] | None:
    """The file and seconds a child's line reports, or None for any other line."""
    if not line.startswith(CHILD_LINE):
        return None
    data = json.loads(line[len(CHILD_LINE) :])
    return from_json({"files": [data["file"]]})[0], float(data["seconds"])


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


def off_target(results: Sequence[FileResult]) -> list[ChainResult]:
    """The baked chains with a frame off target (or out of reach), what ``--strict`` fails on."""
    return [c for r in results for c in r.chains if c.off_target_frames or c.unreachable_frames]


def summary(results: Sequence[FileResult], seconds: float, *, strict: bool = False) -> str:
    """The last line: files baked and failed, frames off target, and with ``strict`` that they make the exit
    status 3 (when no file failed: then it is 1)."""
    failed = [r for r in results if r.status != "ok"]
    line = f"baked {len(results) - len(failed)} of {len(results)} file(s) in {seconds:.1f} s"
    line += f"; {len(failed)} failed" if failed else ""
    missed = off_target(results)
    if missed:
        frames = sum(len(set(c.off_target_frames) | set(c.unreachable_frames)) for c in missed)
        unreachable = sum(len(c.unreachable_frames) for c in missed)
        chains = f"{len(missed)} chain{'s' if len(missed) != 1 else ''}"
        line += f"; {frames} frames off target ({unreachable} out of reach) in {chains}"
        line += f" (--strict: exit status {STRICT_STATUS})" if strict and not failed else ""
    return line


#: The exit status of ``--strict`` when every file baked but a frame is off target.
STRICT_STATUS = 3
