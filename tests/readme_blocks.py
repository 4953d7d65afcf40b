"""The README's fenced code blocks and the command lines of its shell blocks, for the tests that run them
(``tests/blender/addon/test_readme.py``). Pure Python."""

from __future__ import annotations

import re
import shlex
import textwrap
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"

#: A fence: its indent, its language (may be empty) and its text up to the closing fence at the same indent.
_FENCE = re.compile(r"^(?P<indent> *)```(?P<language>\S*)\n(?P<text>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    """One fenced block: its language tag (``""`` without one), its text (dedented) and its first line."""

    language: str
    text: str
    line: int

    def __str__(self) -> str:
        return f"README.md line {self.line} ({self.language or 'no language'})"


def blocks(readme: str | None = None) -> list[Block]:
    text = README.read_text(encoding="utf-8") if readme is None else readme
    return [
        Block(match["language"], textwrap.dedent(match["text"]), text.count("\n", 0, match.start()) + 1)
        for match in _FENCE.finditer(text)
    ]


def command_lines(block: Block) -> list[list[str]]:
    """A shell block's commands, split as the shell splits them, comments dropped (no line continuations)."""
    return [words for line in block.text.splitlines() if (words := shlex.split(line, comments=True))]
