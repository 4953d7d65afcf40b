"""Bake one .blend file inside Blender: open it without running its scripts, run its jobs (bake chains, plant
feet), save atomically."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import bpy

from .. import api
from .files import FilePlan, quiet_stdout, temporary_path, write_atomically
from .jobs import AnyJob, ChainListJob, IKJob, Job, PlantJob, ReduceJob, TargetsJob, baked_together
from .report import (
    ChainResult,
    FileResult,
    FootResult,
    KeysResult,
    PlantResult,
    ReduceResult,
    TargetsResult,
    say,
)


class FileError(Exception):
    """Why a file cannot be baked, in words for the person who runs the bake."""


def open_safely(path: Path) -> None:
    """Open a .blend file with its embedded Python turned off: no registered text blocks or Python drivers run.

    Raises
    ------
    FileError
        If Blender cannot read the file.
    """
    preferences = bpy.context.preferences
    assert preferences is not None
    preferences.filepaths.use_scripts_auto_execute = False
    try:
        with quiet_stdout():
            bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False, use_scripts=False)
    except RuntimeError as error:
        raise FileError(f"Blender cannot open it: {str(error).strip()}") from None
    if bpy.app.autoexec_fail:
        say(f"{path.name}: its scripts were not run ({bpy.app.autoexec_fail_message}); Python drivers stay still")


def bake_file(plan: FilePlan, jobs: Sequence[AnyJob]) -> FileResult:
    """Bake every job that applies to the file and save the output; on any failure write nothing. Each job's
    start and quarters are printed as it goes.

    Returns
    -------
    FileResult
        "ok" with a result per chain and per planting, or "error" with a message that names what is wrong.
    """
    try:
        if plan.problem is not None:
            raise FileError(plan.problem)
        assert plan.output is not None
        applicable = [job for job in jobs if job.applies_to(plan.input)]
        if not applicable:
            raise FileError("no job of the config applies to this file (see the jobs' 'files' patterns)")
        open_safely(plan.input)
        chains: list[ChainResult] = []
        plantings: list[PlantResult] = []
        made: list[TargetsResult] = []
        reduced: list[ReduceResult] = []
        for job in baked_together(applicable):
            if isinstance(job, PlantJob):
                plantings.append(_plant_job(job, plan.input.name))
            elif isinstance(job, TargetsJob):
                made.extend(_targets_job(job, plan.input.name))
            elif isinstance(job, ReduceJob):
                reduced.append(_reduce_job(job, plan.input.name))
            else:
                chains.extend(_bake_job(job, plan.input.name))
        output = plan.output
        try:
            write_atomically(output, _save_copy)
        except (OSError, RuntimeError) as error:
            raise FileError(f"cannot save {output}: {_save_failure(error, output)}") from None
    except FileError as error:
        return FileResult.failed(plan.input, str(error))
    except Exception as error:  # a bug must not stop the other files; the traceback says where
        say(traceback.format_exc().rstrip())
        return FileResult.failed(plan.input, f"unexpected {type(error).__name__}: {error}")
    return FileResult(
        str(plan.input), str(output), "ok", None, tuple(chains), tuple(plantings), tuple(made), tuple(reduced)
    )


def _bake_job(job: Job | IKJob | ChainListJob, file_name: str) -> tuple[ChainResult, ...]:
    """Bake one job in the open file: its chain, its armature's IK constraints, or the chain lists saved on its
    armatures (a result per chain)."""
    label = f"{file_name}: {job.label}"
    say(f"{label}: baking")
    try:
        if isinstance(job, IKJob):
            armature = _find_object(job.armature, "armature")
            reports = [api.bake_ik_constraints(armature, progress=_progress(label), **job.keywords)]
        elif isinstance(job, ChainListJob):
            reports = [
                api.bake_chains(
                    armature, progress=_progress(f"{file_name}: {armature.name}/chain list"), **job.keywords
                )
                for armature in _with_chains(job.armature)
            ]
        else:
            reports = [api.bake_settings(job.settings.with_objects(_find_object), _progress(label))]
    except (ValueError, TypeError) as error:
        raise FileError(f"{job.label}: {error}") from None
    return tuple(
        ChainResult(
            armature=result.armature,
            tip_bone=result.tip_bone,
            frames=(int(result.frames[0]), int(result.frames[-1])),
            max_error=float(result.max_error),
            unreachable_frames=tuple(int(f) for f in result.unreachable_frames),
            off_target_frames=tuple(int(f) for f in result.off_target_frames),
            seconds=float(result.seconds),
            why=tuple(result.off_target.items()),
            keys=KeysResult.of(result.keys),
            length_unit=result.length_unit,
        )
        for report in reports
        for result in report.chains
    )


def _targets_job(job: TargetsJob, file_name: str) -> tuple[TargetsResult, ...]:
    """Make targets from the animation for the chain list of the job's armature (or of each with one)."""
    results = []
    for armature in _with_chains(job.armature):
        label = f"{file_name}: {armature.name}/targets from animation"
        say(f"{label}: making")
        try:
            made = api.targets_from_animation(armature, progress=_progress(label), **job.keywords)
        except (ValueError, TypeError) as error:
            raise FileError(f"{job.label}: {error}") from None
        results.append(
            TargetsResult(
                armature=armature.name,
                targets={chain: obj.name for chain, obj in made.targets.items()},
                poles={chain: obj.name for chain, obj in made.poles.items()},
                frames=made.frames,
                seconds=made.seconds,
                keys=KeysResult.of(made.keys),
            )
        )
    return tuple(results)


def _reduce_job(job: ReduceJob, file_name: str) -> ReduceResult:
    """Reduce the keys of the job's armature's bones in the open file."""
    label = f"{file_name}: {job.label}"
    say(f"{label}: reducing")
    started = time.perf_counter()
    try:
        armature = _find_object(job.armature, "armature")
        keywords = dict(job.keywords)
        report = api.reduce_keys(armature, keywords.pop("bones", None), progress=_progress(label), **keywords)
    except (ValueError, TypeError) as error:
        raise FileError(f"{job.label}: {error}") from None
    keys = KeysResult.of(report)
    assert keys is not None
    frames = (int(report.frames[0]), int(report.frames[-1]))
    return ReduceResult(job.armature, frames, time.perf_counter() - started, keys)


def _with_chains(name: str | None) -> list[bpy.types.Object]:
    """The armature named, or every armature of the file with an enabled chain in its list."""
    if name is not None:
        return [_find_object(name, "armature")]
    found = api.armatures_with_chains()
    if not found:
        raise FileError(
            "no armature of the file has an enabled chain in its FABRIK chain list: set the chains up in the "
            "sidebar, or name them (--armature, --tip, --target, or --config)"
        )
    return found


def _plant_job(job: PlantJob, file_name: str) -> PlantResult:
    """Plant the job's feet in the open file."""
    label = f"{file_name}: {job.label}"
    say(f"{label}: planting")
    try:
        armature = _find_object(job.armature, "armature")
        report = api.plant_feet(armature, job.feet, progress=_progress(label), **job.keywords)
    except (ValueError, TypeError) as error:
        raise FileError(f"{job.label}: {error}") from None
    legs = report.bake.chains
    feet = tuple(
        FootResult(
            foot=foot.foot,
            contacts=tuple((int(first), int(last)) for first, last in foot.contacts),
            skate_before=tuple(float(s) for s in foot.skate_before),
            skate_after=tuple(float(s) for s in foot.skate_after),
            out_of_reach_frames=tuple(int(f) for f in foot.out_of_reach_frames),
            off_target_frames=foot.off_target_frames,
            why=tuple(foot.off_target.items()),
        )
        for foot in report.feet
    )
    scene = bpy.context.scene
    assert scene is not None
    return PlantResult(
        armature=job.armature,
        feet=feet,
        frames=(int(legs[0].frames[0]), int(legs[0].frames[-1])),
        max_error=float(report.max_error),
        max_hips_drop=report.max_hips_drop,
        metres_per_unit=float(scene.unit_settings.scale_length),
        seconds=float(report.seconds),
        length_unit=report.length_unit,
        warnings=report.warnings,
        keys=KeysResult.of(report.keys),
    )


def _find_object(name: str, role: str) -> bpy.types.Object:
    obj: bpy.types.Object | None = bpy.data.objects.get(name)
    if obj is None:
        kind = "ARMATURE" if role == "armature" else None
        names = sorted(o.name for o in bpy.data.objects if kind is None or o.type == kind)
        listed = ", ".join(f"'{n}'" for n in names[:12]) + (", ..." if len(names) > 12 else "")
        where = f"{'armatures' if kind else 'objects'} in the file: {listed}" if names else "the file has none"
        raise FileError(f"{role} '{name}' not found ({where})")
    return obj  # api.bake checks that Blender evaluates it (in the view layer, enabled)


def _progress(label: str) -> Callable[[float], None]:
    """Report a bake's progress at every quarter."""
    printed = [0]

    def progress(fraction: float) -> None:
        quarter = int(fraction * 4 + 1e-9)
        if quarter > printed[0]:
            printed[0] = quarter
            say(f"{label}: {25 * quarter}%")

    return progress


def _save_failure(error: OSError | RuntimeError, output: Path) -> str:
    """Why saving ``output`` failed, naming the output where Blender names the temporary file it wrote first."""
    if isinstance(error, FileExistsError | NotADirectoryError):  # making the output's folder
        return f"{error.filename} is not a folder"
    if isinstance(error, OSError):
        return f"{error.strerror or error} ({error.filename})" if error.filename else str(error.strerror or error)
    temporary = str(temporary_path(output))
    message = str(error).strip().removeprefix("Error: ")
    return message.replace(f"{temporary}@", str(output)).replace(temporary, str(output))  # Blender writes NAME@


def _save_copy(path: Path) -> None:
    """Save the open file as ``path``, leaving the open file's own path alone; relative paths are remapped."""
    with quiet_stdout():
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, check_existing=False)
