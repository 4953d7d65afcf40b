"""Plant feet on an armature's animation, and detect (and mark) its contacts: one read walk through the frames,
the goals computed in numpy (``fabrik_addon.planting``), one solve, keys written all or nothing and checked by
Blender's evaluation, as every bake is (``bake.carry_out``, with this module's ``_Planter`` between reading
and solving).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import bpy
import numpy as np
from numpy.typing import NDArray

from ...off_target import off_target_causes
from ...planting import Contact, Foot, Planting, PlantSettings, check_foot, plant, skate, wrong_unit
from ...solver import FloatArray
from ..bake import Adjusted, BakePlan, BoneTrack, Inputs, carry_out, read_frames
from ..rig import KeyWriter, armature_data, bone_path
from ..units import length_text, named_unit
from .feet import plan_legs
from .find import with_feet
from .marks import read_hips_drop, read_marks, write_hips_drop, write_marks
from .report import FootReport, PlantReport
from .units import leg_warning


def plant_feet(
    settings: PlantSettings[bpy.types.Object], progress: Callable[[float], None] | None = None
) -> PlantReport:
    """Key each leg so its foot's ball stays on one point through each contact, the foot keeping its animated
    orientation, the leg its animation outside contacts and their blends; lower the hips where asked.

    Raises
    ------
    TypeError, ValueError
        For settings the scene cannot honour, naming what is wrong; nothing is written then.
    """
    started = time.perf_counter()
    settings, found_feet = with_feet(settings)
    legs = plan_legs(settings)
    frames = list(legs.frame_range)
    marks = [read_marks(settings.armature, foot, frames) if settings.use_marks else None for foot in settings.feet]
    planter = _Planter(settings, legs, _fps(legs.scene), marks)
    if settings.hips_bone:
        planter.tracks.append(BoneTrack.empty(settings.armature, settings.hips_bone, len(frames)))
        location = f"{bone_path(settings.hips_bone)}.location"
        planter.channels[settings.armature] = {(location, index) for index in range(3)}
        planter.earlier = read_hips_drop(settings.armature, settings.hips_bone, frames)
    baked = carry_out(legs, progress, adjust=planter)
    assert planter.planting is not None, "the bake calls the planter between reading and solving"
    planted, feet = planter.planting, planter.feet
    unit = named_unit(legs.scene)
    reports = []
    for k, (foot, chain) in enumerate(zip(feet, baked.chains, strict=True)):
        found = planted.contacts[k]
        reports.append(
            FootReport(
                foot=settings.feet[k],
                contacts=tuple(_pairs(frames, found)),
                marked=marks[k] is not None,
                skate_before=tuple(skate(foot.ball, contact) for contact in found),
                skate_after=tuple(skate(chain.tips, contact) for contact in found),
                out_of_reach_frames=tuple(frames[i] for i in np.flatnonzero(planted.out_of_reach[:, k]).tolist()),
                leg_length=foot.reach,
                off_target=off_target_causes(
                    frames,
                    chain.tips,
                    planted.pinned[:, k],
                    tolerance=legs.settings.solver.tolerance,
                    out_of_reach=planted.out_of_reach[:, k],
                    eased=(planted.goals[:, k] != planted.pinned[:, k]).any(axis=-1),
                    unsolved=np.isin(frames, chain.unreachable_frames),
                    limited=legs.chains[k].chain.limits.any,
                ),
                length_unit=unit,
            )
        )
    leg_length = float(np.mean([foot.reach for foot in feet]))
    warnings = [leg_warning(legs.scene, settings.armature, leg_length), *wrong_unit(settings.rules, leg_length, unit)]
    if planter.earlier is not None and planter.earlier.any():
        warnings.append(
            f"an earlier Plant Feet lowered hips '{settings.hips_bone}' by up to "
            f"{length_text(legs.scene, float(planter.earlier.max()))}: this one lowered them from where they were "
            "before it (the drops do not add up), but started from the legs as that one planted them, so the balls' "
            "blends into and out of contacts eased again (nearer their pins, the hips lower to reach them); to plant "
            "the animation as captured, undo the earlier planting first, or plant as a layer (Output 'layer'), "
            "which plants the animation below it every time"
        )
    return PlantReport(
        tuple(reports),
        baked.max_error,
        planted.drop,
        planted.floor,
        (planted.bob_before, planted.bob_after),
        time.perf_counter() - started,
        baked,
        tuple(warning for warning in warnings if warning is not None),
        unit,
        planted.pinned,
        found_feet,
    )


def detect_contacts(
    settings: PlantSettings[bpy.types.Object],
    *,
    mark: bool = True,
    progress: Callable[[float], None] | None = None,
) -> dict[str, list[tuple[int, int]]]:
    """Find each foot's contacts in its animation (as ``plant_feet`` does where a foot has no marks) and, with
    ``mark``, key them as the foot's contact marks over the frames (replacing the marks there).

    Returns
    -------
    dict of str to list of (first, last)
        Per foot, its contacts as frames, both included.
    """
    settings = with_feet(settings)[0]
    legs = plan_legs(settings)
    frames = list(legs.frame_range)
    inputs = read_frames(legs, progress)
    feet = [_foot(prepared_reach(legs, k, i), i, None) for k, i in enumerate(inputs)]
    found = plant(feet, settings.rules, fps=_fps(legs.scene), lower_hips=False).contacts
    if mark:
        with KeyWriter(settings.armature, settings.action_name) as writer:
            for foot, contacts in zip(settings.feet, found, strict=True):
                write_marks(writer, foot, frames, contacts)
    return {foot: _pairs(frames, contacts) for foot, contacts in zip(settings.feet, found, strict=True)}


@dataclass
class _Planter:
    """What ``plant_feet`` does between the bake's reading and solving (a ``bake.Adjust``): the goals of every
    leg, the lowered hips under every leg's root, and the hips' keys."""

    settings: PlantSettings[bpy.types.Object]
    legs: BakePlan
    fps: float
    marks: list[list[Contact] | None]
    tracks: list[BoneTrack] = field(default_factory=list)
    channels: dict[bpy.types.Object, set[tuple[str, int]]] = field(default_factory=dict)
    planting: Planting | None = None
    feet: list[Foot] = field(default_factory=list)
    #: How far an earlier planting lowered the hips on each frame: they start from where they were before it.
    earlier: FloatArray | None = None

    def __call__(self, inputs: list[Inputs], frames: NDArray[np.int64]) -> Adjusted:
        earlier = np.zeros(len(frames)) if self.earlier is None else self.earlier
        raised = []
        for leg in inputs:
            root_frames = leg.root_frames.copy()
            root_frames[:, 2, 3] += earlier  # every leg where it hung before an earlier planting lowered the hips
            raised.append(replace(leg, root_frames=root_frames))
        self.feet = [_foot(prepared_reach(self.legs, k, i), i, self.marks[k]) for k, i in enumerate(raised)]
        planted = plant(self.feet, self.settings.rules, fps=self.fps, lower_hips=bool(self.settings.hips_bone))
        for k, (name, foot) in enumerate(zip(self.settings.feet, self.feet, strict=True)):
            child, parent = _neighbours(self.settings.armature, name)
            above = self.legs.chains[k].chain.rest.lengths[:-1]
            above = above[above > 0] * (foot.reach / float(above.sum()))  # in world units, as the paths
            check_foot(name, foot.ball, foot.ankle, above, planted.floor, child=child, parent=parent)
        self.planting = planted
        adjusted = []
        for k, leg in enumerate(raised):
            root_frames = leg.root_frames.copy()
            root_frames[:, 2, 3] -= planted.drop  # the hips went down, and every leg with them
            adjusted.append(replace(leg, targets=np.ascontiguousarray(planted.goals[:, k]), root_frames=root_frames))
        # Where a ball is pinned (and its pin within reach), thinned keys keep it near its pin.
        pinned = (planted.weights >= 1.0) & ~planted.out_of_reach
        pins = {
            self.settings.armature: {f: (pinned[:, k], planted.goals[:, k]) for k, f in enumerate(self.settings.feet)}
        }
        if not self.tracks or not (planted.drop.any() or earlier.any()):
            return Adjusted(adjusted, pins=pins)
        hips = self.tracks[0]
        keys = _HipsKeys(hips, planted.drop, earlier)
        return Adjusted(adjusted, keys, {self.settings.armature: {hips.bone}}, pins)


@dataclass(frozen=True)
class _HipsKeys:
    """The hips' Location keys that lower them by ``drop`` (F,) in world space on every frame from where they
    were before an ``earlier`` planting lowered them (F,), and the keys that record the drop."""

    hips: BoneTrack
    drop: FloatArray
    earlier: FloatArray

    def __call__(
        self, writers: Mapping[bpy.types.Object, KeyWriter], frames: NDArray[np.int64], span: tuple[float, float]
    ) -> None:
        moves = np.zeros((len(frames), 3))
        moves[:, 2] = self.earlier - self.drop
        locations = self.hips.locations_moving(moves, _rest_turn(self.hips.armature, self.hips.bone))
        writer = writers[self.hips.armature]
        path = f"{bone_path(self.hips.bone)}.location"
        writer.replace_channels(path, range(3), self.hips.bone, frames, locations, span)
        write_hips_drop(writer, self.hips.bone, frames, self.drop, span)


def _neighbours(armature: bpy.types.Object, name: str) -> tuple[str | None, str | None]:
    """The bone below ``name`` (its child with the most bones below it) and the one above, by name, or None."""
    bone = armature_data(armature).bones[name]
    child = max(bone.children, key=lambda c: len(c.children_recursive), default=None)
    return (None if child is None else child.name), (None if bone.parent is None else bone.parent.name)


def _rest_turn(armature: bpy.types.Object, name: str) -> FloatArray | None:
    """For a bone whose Location is in its parent's space (Local Location off), its rest orientation in its
    parent's (3, 3); None for one whose Location is in its own (``BoneTrack.locations_moving``)."""
    bone = armature_data(armature).bones[name]
    if bone.use_local_location:
        return None
    rest = np.array(bone.matrix_local.to_3x3())
    return rest if bone.parent is None else np.linalg.inv(np.array(bone.parent.matrix_local.to_3x3())) @ rest


def prepared_reach(legs: BakePlan, k: int, inputs: Inputs) -> float:
    """How far leg ``k``'s bones above the foot reach, hip joint to ankle, in world units (its root frame's
    scale on the first frame: a leg is not scaled in its animation, which the bake refuses)."""
    chain = legs.chains[k].chain
    scale = float(np.cbrt(abs(np.linalg.det(inputs.root_frames[0, :3, :3]))))
    return float(chain.rest.lengths[:-1].sum()) * scale


def _foot(reach: float, inputs: Inputs, contacts: list[Contact] | None) -> Foot:
    """A leg as read: the ball (the foot's tail), the ankle (its head) and the hip joint (the leg's root)."""
    assert inputs.tip_heads is not None, "planting reads each foot as animated"
    return Foot(inputs.targets, inputs.tip_heads, inputs.root_frames[:, :3, 3].copy(), reach, contacts)


def _fps(scene: bpy.types.Scene) -> float:
    """The scene's frame rate, frames per second."""
    return float(scene.render.fps / scene.render.fps_base)


def _pairs(frames: Sequence[int], contacts: list[Contact]) -> list[tuple[int, int]]:
    return [(frames[a], frames[b]) for a, b in contacts]
