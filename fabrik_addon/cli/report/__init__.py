"""What the command reports: each file's results, the JSON report and the lines a ``-j N`` child hands its parent
(``results``), and the lines printed on stderr as files finish and at the end (``lines``)."""

from .lines import STRICT_STATUS, file_done, off_target, say, summary
from .results import (
    CHILD_LINE,
    ChainResult,
    FileResult,
    FootResult,
    KeysResult,
    PlantResult,
    ReduceResult,
    TargetsResult,
    child_line,
    from_json,
    quiet_stdout,
    read_child_line,
    read_report,
    to_json,
    write_report,
)

__all__ = [
    "CHILD_LINE",
    "STRICT_STATUS",
    "ChainResult",
    "FileResult",
    "FootResult",
    "KeysResult",
    "PlantResult",
    "ReduceResult",
    "TargetsResult",
    "child_line",
    "file_done",
    "from_json",
    "off_target",
    "quiet_stdout",
    "read_child_line",
    "read_report",
    "say",
    "summary",
    "to_json",
    "write_report",
]
