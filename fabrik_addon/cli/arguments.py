"""The arguments of the ``fabrik_bake`` command as ``argparse`` reads them (``parser``): each option, its help
and the conversion of its value (frames, feet, whole numbers, numbers), a mistake raised as a ``UsageError``.
Pure Python, no ``bpy``."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from ..settings import IK_AFTER
from ..solver import METHODS
from .jobs import UsageError

#: The command's name, as Blender knows it (``blender -c fabrik_bake``) and as messages name it.
PROGRAM = "fabrik_bake"

_FRAMES = re.compile(r"^\s*(-?\d+)\s*(?:(?:-|\.\.)\s*(-?\d+)\s*)?$")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # raise instead of printing and exiting
        raise UsageError(message)


def _frames(text: str) -> tuple[int, int]:
    match = _FRAMES.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected START-END (e.g. 1-250), got {text!r}")
    start = int(match[1])
    end = int(match[2]) if match[2] is not None else start
    if end < start:
        raise argparse.ArgumentTypeError(f"the range {text} is reversed: the end frame is before the start frame")
    return start, end


def _names(what: str) -> Callable[[str], list[str]]:
    """Names (of foot bones, of bones) separated by commas, spaces around each name ignored."""

    def names(text: str) -> list[str]:
        found = [name.strip() for name in text.split(",")]
        if not all(found):
            raise argparse.ArgumentTypeError(f"expected {what} separated by commas (LeftFoot,RightFoot), got {text!r}")
        return found

    return names


def _whole(low: int | None = None) -> Callable[[str], int]:
    """A whole number (at least ``low``, for the options that are not bake settings: those have their rules in
    the settings)."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, got {value}")
        return value

    return convert


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def parser() -> argparse.ArgumentParser:
    """The command's arguments, as ``argparse`` reads them and ``--help`` shows them."""
    command = _Parser(
        prog=PROGRAM,
        description=(
            "FABRIK IK: bake FABRIK inverse kinematics into bone rotation keys in .blend files, or plant the feet "
            "of animated legs (motion capture) so they do not slide."
        ),
        epilog=(
            "Exit status: 0 when every file baked, 1 when any file failed (the others are still baked and "
            "reported), 2 for a usage error (nothing is opened), 3 with --strict when every file baked but a frame "
            "is off target (or a planted foot's pin out of reach), 130 or 143 when stopped by Ctrl+C or SIGTERM "
            "(the file being baked is not written). "
            "With the extension installed: blender -c fabrik_bake ARGS; from the repository: blender -b --python "
            "scripts/tools/fabrik_bake.py -- ARGS, or a Python 3.11 with Blender's bpy module (.venv/bin/python) "
            "scripts/tools/fabrik_bake.py ARGS."
        ),
    )
    command.add_argument("inputs", nargs="*", metavar="INPUT", help=".blend files, or folders of them")
    chain = command.add_argument_group("one chain (or --config)")
    chain.add_argument("--armature", metavar="NAME", help="the armature object")
    chain.add_argument("--tip", metavar="BONE", help="the chain's last bone, whose tail follows the target")
    chain.add_argument(
        "--chain-length", type=_whole(), metavar="N", help="bones up from the tip, as Blender's IK counts; 0: all"
    )
    chain.add_argument("--target", metavar="NAME", help="the object the tip follows")
    command.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a TOML or JSON file listing the chains to bake (and feet to plant) in each file",
    )
    ik = command.add_argument_group("Blender's IK constraints (instead of a chain)")
    ik.add_argument(
        "--from-ik-constraints",
        action="store_true",
        help="bake every IK constraint of --armature that is on, then mute them (see --after)",
    )
    ik.add_argument("--after", choices=IK_AFTER, help="what becomes of the constraints: mute (default), remove, keep")
    edit = command.add_argument_group(
        "the chain lists saved in the files (set up in the sidebar): baked when no chain, --config, IK constraints "
        "or feet are given (only those of --armature, if given)"
    )
    edit.add_argument(
        "--targets-from-animation",
        action="store_true",
        help="instead of baking, key an Empty where each chain's tip is in the animation (a pole where it bends) "
        "and make them the chains' targets and poles",
    )
    edit.add_argument(
        "--replace", action="store_true", help="with --targets-from-animation: replace the targets chains have"
    )
    edit.add_argument(
        "--no-poles", action="store_true", help="with --targets-from-animation: leave the chains' poles as they are"
    )
    keys = command.add_argument_group("keys that exist, reduced (instead of a chain)")
    keys.add_argument(
        "--reduce-keys",
        action="store_true",
        help="thin the keys of --armature's bones to the fewest frames that keep every bone within --key-error of "
        "where they put it, as Blender plays them (keys outside --frames are left alone)",
    )
    keys.add_argument(
        "--bones",
        type=_names("bones' names"),
        metavar="BONE[,BONE...]",
        help="with --reduce-keys: these bones only (default: all)",
    )
    feet = command.add_argument_group("feet to plant on the animation (instead of a chain)")
    feet.add_argument(
        "--plant-feet",
        type=_names("foot bones' names"),
        metavar="FOOT[,FOOT...]",
        help="hold each foot's ball (the bone's tail) still through its contacts with the floor, on --armature",
    )
    feet.add_argument("--hips", metavar="BONE", help="lower this bone where a pin is out of the legs' reach")
    feet.add_argument(
        "--leg-bones", type=_whole(), metavar="N", help="bones in each leg from the foot up, as Blender's IK counts (3)"
    )
    bake = command.add_argument_group("bake settings (for every job; a config job's own keys win)")
    bake.add_argument(
        "--frames", type=_frames, metavar="A-B", help="frames to bake (1-250, -5--1); default: the scene's range"
    )
    bake.add_argument("--step", type=_whole(), metavar="N", help="key every N-th frame, and the last")
    bake.add_argument(
        "--tolerance",
        type=_number,
        metavar="T",
        help=(
            "tip distance allowed, in world units; for feet to plant (--plant-feet, or a config's plant_feet jobs) "
            "in leg lengths instead, hip to ankle of the shortest leg: default 2e-4, 0.2 mm on a 1 m leg"
        ),
    )
    bake.add_argument("--max-iterations", type=_whole(), metavar="N")
    bake.add_argument(
        "--key-error",
        type=_number,
        metavar="D",
        help="world units: keep keys on the fewest frames that keep every baked bone within D of the solved pose "
        "(and planted balls of their pins, and made targets of the animation); default 0, a key on every frame",
    )
    bake.add_argument("--method", choices=sorted(METHODS))
    bake.add_argument(
        "--layer",
        action="store_true",
        help="key a layer over the animation (an NLA track blended with Combine, which can be muted) instead of "
        "the Action; a chain list saved with Output Layer is baked as a layer without it",
    )
    out = command.add_argument_group("output")
    where = out.add_mutually_exclusive_group()
    where.add_argument(
        "--output",
        type=Path,
        metavar="FILE_OR_DIR",
        help="a .blend file (one input), else a folder; default: <name>_baked.blend beside each input",
    )
    where.add_argument(
        "--in-place", action="store_true", help="replace each input (atomically, only when its bake succeeds)"
    )
    out.add_argument(
        "--overwrite",
        action="store_true",
        help="replace outputs that exist already (without it, such a file is not baked: an error, found first)",
    )
    out.add_argument("--report", type=Path, metavar="FILE", help="write a JSON report of every file and chain")
    out.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 3 when a frame of any chain is off target or out of reach (once every file is saved)",
    )
    out.add_argument(
        "-j", "--processes", type=_whole(low=1), default=1, metavar="N", help="bake files in N parallel processes"
    )
    # A child process of -j N: its parent prints the results.
    command.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return command
