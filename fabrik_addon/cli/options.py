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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..setting_names import in_words
from .arguments import PROGRAM, parser
from .config import config_jobs
from .job_entries import chain_job, chain_list_job, check_defaults, ik_job, plant_job, reduce_job, targets_job
from .jobs import AnyJob, UsageError

__all__ = ["PROGRAM", "Request", "in_blender_binary", "load_jobs", "parse_args", "script_args"]


@dataclass(frozen=True)
class Request:
    """What the command line asks for.

    ``chain`` is the job given by ``--armature/--tip/--chain-length/--target`` (or ``--armature
    --from-ik-constraints``, ``--armature --plant-feet``, ``--targets-from-animation``, or the chain lists saved
    in the files when none of these is given), or None when ``config`` lists the jobs;
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
    ns = parser().parse_args(_negative_values(args))
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
        ("output", "layer" if ns.layer else None),
        ("key_error", ns.key_error),
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
        elif ns.reduce_keys:
            reducing = {"armature": ns.armature, **({"bones": ns.bones} if ns.bones else {})}
            chain = reduce_job(reducing, "", defaults)
        elif ns.from_ik_constraints:
            chain = ik_job({"armature": ns.armature, **({"after": ns.after} if ns.after else {})}, "", defaults)
        elif ns.targets_from_animation:
            making = {"armature": ns.armature, "replace": ns.replace or None, "poles": False if ns.no_poles else None}
            chain = targets_job({k: v for k, v in making.items() if v is not None}, "", defaults)
        elif ns.config is None and (ns.tip, ns.target, ns.chain_length) == (None, None, None):
            chain = chain_list_job({"armature": ns.armature} if ns.armature else {}, "", defaults)
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
    solving = [flag for flag, value in _SOLVING.items() if getattr(ns, value) not in (None, False)]
    if solving and (ns.reduce_keys or ns.targets_from_animation):
        option = "--reduce-keys" if ns.reduce_keys else "--targets-from-animation"
        raise UsageError(f"{option} solves nothing and keys into the Action: leave out {', '.join(solving)}")
    if "--bones" in given and not ns.reduce_keys:
        raise UsageError("--bones applies to --reduce-keys")
    if ns.reduce_keys:
        alone("--reduce-keys", "thins the keys", "--bones")
        return
    making = [flag for flag in ("--replace", "--no-poles") if flag in given]
    if making and not ns.targets_from_animation:
        raise UsageError(f"{' and '.join(making)} appl{'y' if len(making) > 1 else 'ies'} to --targets-from-animation")
    if ns.targets_from_animation:
        others = [flag for flag in given if flag not in ("--armature", "--targets-from-animation", *making)]
        if others:
            raise UsageError(
                f"--targets-from-animation makes targets for the chain lists saved in the files: leave out "
                f"{', '.join(others)} (run the command again to bake them)"
            )
    elif ns.plant_feet is not None:
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
    elif any(flag in given for flag in ("--tip", "--target", "--chain-length")):
        missing = [flag for flag in ("--armature", "--tip", "--target") if flag not in given]
        if missing:
            raise UsageError(
                f"missing {', '.join(missing)} (or give --config FILE to list the chains, or only --armature, or "
                "nothing, to bake the chain lists saved in the files)"
            )


#: The options that say what to bake, in the order messages name them.
#: The options of a solve, by the namespace's names: nothing that makes targets or reduces keys takes them.
_SOLVING = {
    "--step": "step",
    "--tolerance": "tolerance",
    "--max-iterations": "max_iterations",
    "--method": "method",
    "--layer": "layer",
}

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
    "--targets-from-animation",
    "--replace",
    "--no-poles",
    "--reduce-keys",
    "--bones",
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
_NUMBER_OPTIONS = (
    "--frames",
    "--step",
    "--tolerance",
    "--max-iterations",
    "--chain-length",
    "--leg-bones",
    "--key-error",
)
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
    "output": "--layer",
    "replace": "--replace",
    "key_error": "--key-error",
}
_PLANT_OPTIONS = {**_OPTIONS, "chain_length": "--leg-bones"}
_KEYS = re.compile(rf"'?(?<!-)\b({'|'.join(_OPTIONS)})\b'?")  # not an option's name already (--method)
