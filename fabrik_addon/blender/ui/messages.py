"""What the add-on's operators and panel say, in the panel's words: a bake's summary (one line per chain),
frames as runs, lengths in the scene's units (``length_text``), errors begun as sentences; counts and keys kept
in the words every report uses (``fabrik_addon.words``)."""

from __future__ import annotations

from collections.abc import Sequence

import bpy

from ...setting_names import in_words
from ...words import counted
from ..bake_summary import FABRIK_PG_bake_summary
from ..units import length_text


def sentence(message: object) -> str:
    """An error message in the panel's words, as a report or label starts: the settings it names by their
    labels alone (``Chain Length``, not ``Chain Length (chain_length)``), and with a capital letter (but for a
    name like ``action_name``, which the panel does not show, and stays as the Python API spells it)."""
    text = in_words(str(message), lambda label, _keyword: label)
    if "_" in text.split(" ", 1)[0]:
        return text
    return text[:1].upper() + text[1:]


def summary_text(summary: FABRIK_PG_bake_summary, scene: bpy.types.Scene) -> str:
    """One line saying what a bake did: "on target on every frame" only when Blender's evaluation of the keys
    puts the tip within tolerance on every frame."""
    text = (
        f"Baked frames {summary.frame_start}-{summary.frame_end} ({summary.frames} keyed) of "
        f"{counted(summary.bones, 'bone')} in {summary.seconds:.2f} s: "
        f"max error {length_text(scene, summary.max_error)}"
    )
    return f"{text}; {target_text(summary)}"


def target_text(summary: FABRIK_PG_bake_summary) -> str:
    """Whether the tip was on target, and where not, by cause (out of reach, soft reach, IK limits, not
    converged, the scene: ``fabrik_addon.off_target``)."""
    if summary.off_target:
        return f"off target on {counted(summary.off_target, 'frame')}: {summary.off_target_causes}"
    if summary.unreachable:
        return f"out of reach on {counted(summary.unreachable, 'frame')}: {summary.unreachable_frames}"
    return "on target on every frame"


def bake_text(summaries: Sequence[tuple[str, FABRIK_PG_bake_summary]], scene: bpy.types.Scene) -> str:
    """What a bake of the named chains did, from their summaries: for one chain its line; for several a first
    line on them all ("on target on every frame" only when every chain is), then a line per chain."""
    if len(summaries) == 1:
        return summary_text(summaries[0][1], scene)
    missed = [label for label, summary in summaries if summary.off_target or summary.unreachable]
    worst = max(summary.max_error for _, summary in summaries)
    verdict = f"off target in {len(missed)} of them ({', '.join(missed)})" if missed else "on target on every frame"
    head = (
        f"Baked {len(summaries)} chains in {summaries[0][1].seconds:.2f} s: max error {length_text(scene, worst)}; "
        f"{verdict}"
    )
    return "\n".join([head, *(f"{label}: {summary_text(summary, scene)}" for label, summary in summaries)])


def in_output(text: str, output: str) -> str:
    """A report's text, its first line saying where the keys went when they went into the FABRIK layer."""
    if output != "layer":
        return text
    first, _, rest = text.partition("\n")
    return f"{first} (into the FABRIK layer: mute it for the animation as it was)" + (f"\n{rest}" if rest else "")
