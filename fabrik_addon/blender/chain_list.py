"""An armature's chain list baked as the sidebar's Bake button bakes it (``bake_chains``): its enabled chains
in the list's order, with the frames, solver and output saved on the armature (or given instead), each chain's
summary of its last bake written for the panel; and those summaries (``summarise``, ``frame_runs``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from itertools import pairwise
from typing import Any

import bpy

from ..settings import CHAIN_LIST_KEYWORDS, BakeSettings, FrameRange, check_keywords
from .bake import BakeReport, RigBakeReport, bake, current_scene
from .bake_summary import FABRIK_PG_bake_summary
from .properties import CLASSES as PROPERTY_CLASSES
from .properties import bake_settings, chain_label, enabled_chains, settings_pointer
from .versioning import migrate_file

_SOLVER_KEYWORDS = ("tolerance", "max_iterations", "method", "warm_start")
#: The properties of a chain's summary (each of which ``summarise`` writes).
_SUMMARY_FIELDS = tuple(FABRIK_PG_bake_summary.__annotations__)
#: How many runs of frames a summary names before it stops with "...".
_MOST_RUNS = 6


def bake_chains(
    armature: bpy.types.Object,
    overrides: Mapping[str, Any] | None = None,
    progress: Callable[[float], None] | None = None,
) -> RigBakeReport:
    """Bake the armature's chain list as the sidebar's Bake button does: its enabled chains, in the list's order,
    over the frames, with the solver and output its settings hold (any of them given in ``overrides``, by the
    keyword of ``api.bake``: ``CHAIN_LIST_KEYWORDS``), and write each chain's summary of the bake.

    Raises
    ------
    TypeError, ValueError
        For an armature without the add-on's settings or without enabled chains, a chain without a target, an
        unknown or bad override, or anything a bake refuses; nothing is written then.
    """
    if not isinstance(armature, bpy.types.Object):
        raise TypeError(f"armature must be a Blender Object, got {type(armature).__name__}")
    chain_lists_read()
    given = dict(overrides or {})
    check_keywords(given, CHAIN_LIST_KEYWORDS, "bake_chains")
    scene = current_scene()
    saved = bake_settings(armature, scene)
    for index, chain in enabled_chains(armature):
        if chain.target is None:
            raise ValueError(
                f"chain '{chain_label(chain, index)}' of armature '{armature.name}' has no target: pick one in the "
                "FABRIK panel, or make them with Targets from Animation"
            )
    frames = FrameRange(
        given.get("frame_start", saved.frames.start),
        given.get("frame_end", saved.frames.end),
        given.get("frame_step", saved.frames.step),
    )
    solver = replace(saved.solver, **{name: given[name] for name in _SOLVER_KEYWORDS if name in given})
    settings = BakeSettings(
        saved.chains,
        frames,
        solver,
        given.get("action_name"),
        given.get("output", saved.output),
        given.get("key_error", saved.key_error),
    )
    keyed = settings.frames.resolved(scene.frame_start, scene.frame_end)
    return bake(settings, progress, finish=partial(_summarise_all, armature, keyed))


def _summarise_all(
    armature: bpy.types.Object,
    frames: range,
    report: RigBakeReport,
    on_undo: Callable[[Callable[[], None]], None],
) -> None:
    """Write each enabled chain's summary of the bake (``summarise``), each put back (``on_undo``) if the bake
    fails. (Reading a summary before the bake would change the file: Blender makes its data when first read.)"""
    summaries = [chain.last_bake for _, chain in enabled_chains(armature)]
    for summary, chain_report in zip(summaries, report.chains, strict=True):
        on_undo(partial(_put, summary, {name: getattr(summary, name) for name in _SUMMARY_FIELDS}))
        summarise(summary, chain_report, frames)


def _put(summary: FABRIK_PG_bake_summary, values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        setattr(summary, name, value)


def chain_lists_read() -> None:
    """Make the chain lists saved in the open file readable where the add-on is not enabled (a script with the
    ``bpy`` module): its settings registered and older files' brought up to date, as enabling it does. Enabling
    the add-on afterwards takes them over (``release_chain_lists``)."""
    global _registered_here
    if not hasattr(bpy.types.Object, "fabrik"):
        for cls in PROPERTY_CLASSES:
            bpy.utils.register_class(cls)
        bpy.types.Object.fabrik = settings_pointer()  # type: ignore[attr-defined]
        _registered_here = True
        migrate_file()


def release_chain_lists() -> None:
    """Unregister the settings ``chain_lists_read`` registered, if it did: the add-on, being enabled, registers
    them itself (the saved values stay on each object, read again once registered)."""
    global _registered_here
    if _registered_here:
        del bpy.types.Object.fabrik  # type: ignore[attr-defined]
        for cls in reversed(PROPERTY_CLASSES):
            bpy.utils.unregister_class(cls)
        _registered_here = False


#: Whether ``chain_lists_read`` registered the settings (the add-on not enabled).
_registered_here = False


def armatures_with_chains() -> list[bpy.types.Object]:
    """The armatures of the open file with an enabled chain in their chain list."""
    chain_lists_read()
    return [obj for obj in bpy.data.objects if obj.type == "ARMATURE" and enabled_chains(obj)]


def summarise(summary: FABRIK_PG_bake_summary, report: BakeReport, frames: range) -> None:
    """Write what a bake did to one chain (``report``, over ``frames``) into the chain's summary."""
    summary.frames = len(report.frames)
    summary.frame_start, summary.frame_end = frames.start, frames.stop - 1
    summary.bones = len(report.bones)
    summary.max_error = report.max_error
    summary.unreachable = len(report.unreachable_frames)
    keyed = report.frames.tolist()
    summary.unreachable_frames = frame_runs(report.unreachable_frames, keyed)
    summary.off_target = len(report.off_target_frames)
    summary.off_target_frames = frame_runs(report.off_target_frames, keyed)
    summary.off_target_causes = "; ".join(f"{why} on {frame_runs(on, keyed)}" for why, on in report.off_target.items())
    summary.seconds = report.seconds


def frame_runs(frames: Sequence[int], keyed: Sequence[int] | None = None) -> str:
    """Frames as runs, e.g. ``"12-15, 30"``: a run goes on through frames that follow each other in ``keyed``
    (the frames a bake keyed: every step-th, and the end; by default every frame). Long lists end with
    ``"..."``."""
    following = None if keyed is None else dict(pairwise(keyed))
    runs: list[list[int]] = []
    for frame in frames:
        last = runs[-1][1] if runs else None
        if last is not None and frame == (last + 1 if following is None else following.get(last)):
            runs[-1][1] = frame
        else:
            runs.append([frame, frame])
    text = ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in runs[:_MOST_RUNS])
    return text + (", ..." if len(runs) > _MOST_RUNS else "")
