"""The arguments and config files of the ``fabrik_bake`` command, checked before any .blend file is opened.

Every mistake found here is a usage error (exit status 2): an unknown option, a missing required option, a
reversed frame range, options that exclude each other, a config file that does not parse or names an unknown
key. Each chain to bake becomes a ``fabrik_addon.settings.BakeSettings`` naming its objects, and feet to plant
a ``fabrik_addon.planting.PlantSettings``, checked by that value's own rules (the same as the API's and the
panel's); the objects are looked up once the file is open.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..setting_names import in_words
from ..settings import IK_AFTER
from ..solver import METHODS
from .config import config_jobs
from .jobs import AnyJob, UsageError, chain_job, check_defaults, ik_job, plant_job

#: The command's name, as Blender knows it (``blender -c fabrik_bake``) and as messages name it.
PROGRAM = "fabrik_bake"

_FRAMES = re.compile(r"^\s*(-?\d+)\s*(?:(?:-|\.\.)\s*(-?\d+)\s*)?$")


@dataclass(frozen=True)
class Request:
    """What the command line asks for.

    ``chain`` is the job given by ``--armature/--tip/--chain-length/--target`` (or ``--armature
    --from-ik-constraints``, or ``--armature --plant-feet``), or None when ``config`` lists the jobs;
    ``defaults`` holds the bake settings given as options, under ``api.bake``'s keyword names (already
    checked: a config job's keys may still replace them).
    """

    inputs: tuple[Path, ...]
    chain: AnyJob | None
    config: Path | None
    defaults: Mapping[str, Any]
    output: Path | None
    in_place: bool
    overwrite: bool
    report: Path | None
    processes: int
    strict: bool = False
    child: bool = False


def in_blender_binary() -> bool:
    """Whether this Python runs inside a Blender binary (``blender -b --python``) rather than with the ``bpy``
    module: there Blender has imported ``bpy`` before any script, and knows its own executable (the module,
    imported by anything, knows none)."""
    bpy = sys.modules.get("bpy")
    return bool(getattr(getattr(bpy, "app", None), "binary_path", ""))


def script_args(argv: Sequence[str], *, inside_blender: bool) -> list[str]:
    """The arguments meant for the script.

    Inside a Blender binary (``blender -b --python fabrik_bake.py -- ARGS``) the command line is Blender's and
    the script's arguments are those after the first ``--`` (none without one); with the ``bpy`` module
    (``python fabrik_bake.py ARGS``) they are all the arguments after the script's name.
    """
    if not inside_blender:
        return list(argv[1:])
    if "--" not in argv:
        return []
    return list(argv[list(argv).index("--") + 1 :])


def parse_args(args: Sequence[str], *, open_file: Path | None = None) -> Request:
    """Check the script's arguments.

    Parameters
    ----------
    args : sequence of str
        The script's arguments (see ``script_args``).
    open_file : Path, optional
        The file a Blender binary was started with, baked when no input is given.

    Raises
    ------
    UsageError
        Naming what is wrong.
    """
    ns = _parser().parse_args(_negative_values(args))
    inputs = tuple(Path(p) for p in ns.inputs) or ((open_file,) if open_file is not None else ())
    if not inputs:
        raise UsageError("no input: give .blend files or folders of them")
    _check_kind_of_job(ns)
    defaults: dict[str, Any] = {}
    if ns.frames is not None:
        defaults["frame_start"], defaults["frame_end"] = ns.frames
    for key, value in (
        ("frame_step", ns.step),
        ("tolerance", ns.tolerance),
        ("max_iterations", ns.max_iterations),
        ("method", ns.method),
    ):
        if value is not None:
            defaults[key] = value
    chain: AnyJob | None = None
    try:  # the jobs' words are the config's keys
        check_defaults(defaults)
        if ns.plant_feet is not None:
            legs = {"hips_bone": ns.hips, "chain_length": ns.leg_bones}
            given = {key: value for key, value in legs.items() if value is not None}
            chain = plant_job({"armature": ns.armature, "plant_feet": ns.plant_feet, **given}, "", defaults)
        elif ns.from_ik_constraints:
            chain = ik_job({"armature": ns.armature, **({"after": ns.after} if ns.after else {})}, "", defaults)
        elif ns.config is None:
            options = {"chain_length": ns.chain_length} if ns.chain_length is not None else {}
            chain = chain_job(
                {"armature": ns.armature, "target": ns.target, "tip_bone": ns.tip, **options}, "", defaults
            )
    except UsageError as error:
        raise UsageError(_option_names(str(error), planting=ns.plant_feet is not None)) from None
    return Request(
        inputs,
        chain,
        ns.config,
        defaults,
        ns.output,
        ns.in_place,
        ns.overwrite,
        ns.report,
        ns.processes,
        ns.strict,
        ns.child,
    )


def _check_kind_of_job(ns: argparse.Namespace) -> None:
    """The command line names one kind of job (a chain, IK constraints or feet to plant) with all it needs, or
    a config file.

    Raises
    ------
    UsageError
        Naming the options to leave out or to give.
    """
    values = {flag: getattr(ns, flag.removeprefix("--").replace("-", "_")) for flag in _JOB_FLAGS}
    given = [flag for flag, value in values.items() if value is not None and value is not False]

    def alone(option: str, does: str, *allowed: str) -> None:
        """``option`` does what it does to ``--armature`` with only the ``allowed`` options."""
        others = [flag for flag in given if flag not in ("--armature", option, *allowed)]
        hint = (
            " (--leg-bones N: the bones in each leg)" if option == "--plant-feet" and "--chain-length" in others else ""
        )
        if others or ns.armature is None:
            todo = f"leave out {', '.join(others)}{hint}" if others else "give --armature"
            raise UsageError(f"{option} {does} of --armature NAME: {todo}")

    planting = [flag for flag in ("--hips", "--leg-bones") if flag in given]
    if ns.plant_feet is not None:
        alone("--plant-feet", "plants the feet", *planting)
    elif planting:
        raise UsageError(f"{' and '.join(planting)} appl{'y' if len(planting) > 1 else 'ies'} to --plant-feet")
    elif ns.from_ik_constraints:
        alone("--from-ik-constraints", "bakes the IK constraints", "--after")
    elif ns.after is not None:
        raise UsageError("--after applies to --from-ik-constraints")
    elif ns.config is not None:
        others = [flag for flag in ("--armature", "--tip", "--target", "--chain-length") if flag in given]
        if others:
            raise UsageError(f"--config lists the chains to bake: leave out {', '.join(others)}")
    else:
        missing = [flag for flag in ("--armature", "--tip", "--target") if flag not in given]
        if missing:
            raise UsageError(f"missing {', '.join(missing)} (or give --config FILE to list the chains)")


#: The options that say what to bake, in the order messages name them.
_JOB_FLAGS = (
    "--armature",
    "--tip",
    "--target",
    "--chain-length",
    "--config",
    "--from-ik-constraints",
    "--after",
    "--plant-feet",
    "--hips",
    "--leg-bones",
)


def load_jobs(request: Request) -> tuple[AnyJob, ...]:
    """The jobs to run on every file: the command line's chain, or the config file's jobs.

    Raises
    ------
    UsageError
        If the config file cannot be read or a job in it is wrong.
    """
    if request.chain is not None:
        return (request.chain,)
    assert request.config is not None
    return config_jobs(request.config, request.defaults)


def _negative_values(args: Sequence[str]) -> list[str]:
    """The arguments with a negative value joined to its option, ``--frames -5--1`` as ``--frames=-5--1``:
    argparse takes an argument starting with a dash for an option, unless it reads as a plain negative number
    (``-5``, but not ``-5--1`` or ``-1e-3``)."""
    joined: list[str] = []
    for arg in args:
        if joined and joined[-1] in _NUMBER_OPTIONS and _NEGATIVE.match(arg) and "--" not in joined:
            joined[-1] = f"{joined[-1]}={arg}"
        else:
            joined.append(arg)
    return joined


#: The options whose value is a number or a frame range, which may start with a dash (``_NEGATIVE``).
_NUMBER_OPTIONS = ("--frames", "--step", "--tolerance", "--max-iterations", "--chain-length", "--leg-bones")
_NEGATIVE = re.compile(r"^-[\d.]")


def _option_names(message: str, *, planting: bool = False) -> str:
    """A job's error in the command line's words: the key ``frame_step`` (or ``'frame_step'``, or the setting
    named ``Step (frame_step)``) is ``--step`` there, and ``chain_length`` is ``--leg-bones`` when ``planting``
    feet."""
    options = _PLANT_OPTIONS if planting else _OPTIONS
    keys = in_words(message, lambda _label, keyword: keyword)
    return _KEYS.sub(lambda found: options[found[1]], keys)


#: The command line's words for each job key it sets.
_OPTIONS = {
    "armature": "--armature",
    "target": "--target",
    "tip_bone": "--tip",
    "chain_length": "--chain-length",
    "frame_start": "the start of --frames",
    "frame_end": "the end of --frames",
    "frame_step": "--step",
    "max_iterations": "--max-iterations",
    "tolerance": "--tolerance",
    "method": "--method",
    "after": "--after",
    "plant_feet": "--plant-feet",
    "hips_bone": "--hips",
}
_PLANT_OPTIONS = {**_OPTIONS, "chain_length": "--leg-bones"}
_KEYS = re.compile(rf"'?(?<!-)\b({'|'.join(_OPTIONS)})\b'?")  # not an option's name already (--method)


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


def _feet(text: str) -> list[str]:
    """Foot bones' names separated by commas (spaces around each name ignored)."""
    feet = [name.strip() for name in text.split(",")]
    if not all(feet):
        raise argparse.ArgumentTypeError(
            f"expected foot bones' names separated by commas (LeftFoot,RightFoot), got {text!r}"
        )
    return feet


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


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
            "With the extension installed: blender -c fabrik_bake ARGS; from the repository: python "
            "scripts/fabrik_bake.py ARGS, or blender -b --python scripts/fabrik_bake.py -- ARGS."
        ),
    )
    parser.add_argument("inputs", nargs="*", metavar="INPUT", help=".blend files, or folders of them")
    chain = parser.add_argument_group("one chain (or --config)")
    chain.add_argument("--armature", metavar="NAME", help="the armature object")
    chain.add_argument("--tip", metavar="BONE", help="the chain's last bone, whose tail follows the target")
    chain.add_argument(
        "--chain-length", type=_whole(), metavar="N", help="bones up from the tip, as Blender's IK counts; 0: all"
    )
    chain.add_argument("--target", metavar="NAME", help="the object the tip follows")
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a TOML or JSON file listing the chains to bake (and feet to plant) in each file",
    )
    ik = parser.add_argument_group("Blender's IK constraints (instead of a chain)")
    ik.add_argument(
        "--from-ik-constraints",
        action="store_true",
        help="bake every IK constraint of --armature that is on, then mute them (see --after)",
    )
    ik.add_argument("--after", choices=IK_AFTER, help="what becomes of the constraints: mute (default), remove, keep")
    feet = parser.add_argument_group("feet to plant on the animation (instead of a chain)")
    feet.add_argument(
        "--plant-feet",
        type=_feet,
        metavar="FOOT[,FOOT...]",
        help="hold each foot's ball (the bone's tail) still through its contacts with the floor, on --armature",
    )
    feet.add_argument("--hips", metavar="BONE", help="lower this bone where a pin is out of the legs' reach")
    feet.add_argument(
        "--leg-bones", type=_whole(), metavar="N", help="bones in each leg from the foot up, as Blender's IK counts (3)"
    )
    bake = parser.add_argument_group("bake settings (for every job; a config job's own keys win)")
    bake.add_argument(
        "--frames", type=_frames, metavar="A-B", help="frames to bake (1-250, -5--1); default: the scene's range"
    )
    bake.add_argument("--step", type=_whole(), metavar="N", help="key every N-th frame, and the last")
    bake.add_argument(
        "--tolerance",
        type=_number,
        metavar="T",
        help=(
            "tip distance allowed, world units (for feet to plant, --plant-feet or a config's plant_feet jobs, "
            "in leg lengths: default 2e-4)"
        ),
    )
    bake.add_argument("--max-iterations", type=_whole(), metavar="N")
    bake.add_argument("--method", choices=sorted(METHODS))
    out = parser.add_argument_group("output")
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
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser
