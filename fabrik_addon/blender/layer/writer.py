"""Keys into the FABRIK layer, all or nothing: ``LayerWriter`` takes the values a bake would key into an Action
and keys what makes the layer play them over the animation below (``fabrik_addon.layer.layer_values``), makes
the layer the first time (pushing the active Action down beneath it), and once every key is written has the
layer's strip span its keys and each of its channels play nothing outside its own keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import bpy
import numpy as np
from numpy.typing import NDArray

from ...layer import base_values, channel_kind, combined, layer_values, played_as_blender
from ...solver import FloatArray
from .. import compat
from ..interrupts import made
from ..rig import Held, Keys, KeyWriter, Values
from .stack import LAYER_NAME, MARK, PUSHED, Layer, find_layer, keyed_influence, push_down, span_strip


@dataclass
class LayerWriter(KeyWriter):
    """A ``KeyWriter`` into the armature's FABRIK layer (made if it has none), given what plays below the layer.

    Attributes
    ----------
    below : dict of str to ndarray, shape (F, n)
        Per data path the bake keys, its values below the layer on the bake's frames (every index of the
        property, each its base value where nothing below animates it: ``stack.animated_below``).
    """

    below: Mapping[str, FloatArray] = field(default_factory=dict)
    #: The bake's first and last frame: an Action pushed down plays over them too (``stack.push_down``).
    frames: tuple[float, float] | None = None
    layer: Layer | None = None

    def __enter__(self) -> LayerWriter:
        super().__enter__()
        return self

    def _enter(self) -> None:
        """Find the FABRIK layer, or make it (pushing the active Action down below it); every change registered
        to undo before it is made."""
        armature = self.obj
        if armature.animation_data is None:
            self.on_undo(armature.animation_data_clear)
            armature.animation_data_create()
        anim = armature.animation_data
        assert anim is not None
        layer = find_layer(armature)
        if layer is None:
            if not anim.use_nla:  # no tracks to play (``check_layer`` refuses a switched-off stack with some)
                self.on_undo(lambda: setattr(anim, "use_nla", False))
                anim.use_nla = True
            pushed = push_down(armature, self.on_undo, self.frames) if anim.action is not None else None
            name = f"{armature.name} {LAYER_NAME}"
            action = made(self.on_undo, lambda: bpy.data.actions.new(name), bpy.data.actions.remove)
            action[MARK] = True
            action[PUSHED] = "" if pushed is None else pushed.name
            track = made(self.on_undo, anim.nla_tracks.new, anim.nla_tracks.remove)  # on top of the others
            track.name = LAYER_NAME
            layer = Layer(armature, track, action, compat.new_slot(action, armature))
        self.layer = layer
        self.write_into(layer.action, layer.slot)

    def replace_channels(
        self,
        data_path: str,
        indices: Sequence[int],
        group: str,
        frames: NDArray[np.int64],
        values: NDArray[np.float64],
        span: tuple[float, float] | None = None,
    ) -> None:
        """Key the layer so that it plays ``values`` (F, len(indices)) on ``data_path[indices]`` over what
        plays below it (a quaternion's four values together)."""
        kind = channel_kind(data_path.rpartition(".")[2])
        below = np.asarray(self.below[data_path], dtype=np.float64)
        if kind == "quaternion":
            assert list(indices) == [0, 1, 2, 3], "a quaternion is layered whole"
            layered = layer_values(kind, below, values)
        else:
            layered = layer_values(kind, below[:, list(indices)], values)
        super().replace_channels(data_path, indices, group, frames, layered, span)

    @property
    def plays_keys(self) -> bool:
        """A layer's F-curves play over what plays below it."""
        return False

    def played(self, held: Held, keyed: NDArray[np.float64], rows: NDArray[np.int64], exact: bool = False) -> Values:
        """What the layer plays on the channels of ``held`` over what plays below it (its rows ``rows`` of the
        bake's frames) when its F-curves hold ``keyed`` there, a quaternion's four values together: its turn rounded
        as Blender rounds it (``layer.played_as_blender``), or with ``exact`` not."""
        kind = channel_kind(held.data_path.rpartition(".")[2])
        below = np.asarray(self.below[held.data_path], dtype=np.float64)[rows]
        below = below if kind == "quaternion" else below[:, list(held.indices)]
        return combined(kind, below, keyed) if exact else played_as_blender(kind, below, keyed)

    def finish(self) -> None:
        """Once every key is written: each F-curve of the layer plays its base value outside its keys (a key of
        it a frame before its first and after its last, where the strip reaches beyond them), and the strip
        spans the layer's keys, blended with Combine at a keyable influence of 1 (made on the first bake)."""
        layer = self.layer
        assert layer is not None, "enter the writer first"
        spans = {fcurve: key_span(fcurve) for fcurve in layer.fcurves() if len(fcurve.keyframe_points)}
        first = min(start for start, _ in spans.values())
        last = max(end for _, end in spans.values())
        for fcurve, (start, end) in spans.items():
            guards = [frame for frame in (start - 1.0, end + 1.0) if first <= frame <= last and frame != start]
            guards = [frame for frame in guards if not (start <= frame <= end)]
            if guards:
                self._guard(fcurve, guards)
        strip = layer.strip
        if strip is None:
            strip = layer.track.strips.new(LAYER_NAME, int(first), layer.action)
            compat.set_strip_slot(strip, layer.slot)
            strip.blend_type = "COMBINE"
            strip.extrapolation = "NOTHING"
            keyed_influence(strip, 1.0)
        else:
            was = (strip.action_frame_start, strip.action_frame_end)
            self.on_undo(lambda: span_strip(strip, *was))
        span_strip(strip, first, last)

    def _guard(self, fcurve: bpy.types.FCurve, frames: list[float]) -> None:
        """Key the F-curve's base value on ``frames``, keeping its keys (``guard``)."""
        guard(fcurve, frames, self.keep_for_undo(fcurve))


def guard(fcurve: bpy.types.FCurve, frames: Sequence[float], old: Keys | None = None) -> None:
    """Key a layer F-curve's base value (what it blends over where nothing below animates it) on ``frames``,
    keeping its keys (``old``: as they are, by default), so that the layer plays nothing there."""
    old = Keys.read(fcurve) if old is None else old
    base = base_values(channel_kind(fcurve.data_path.rpartition(".")[2]), fcurve.array_index + 1)
    value = float(base[fcurve.array_index])
    old.merged(Keys.baked(np.array(frames, dtype=np.int64), np.full(len(frames), value))).write(fcurve)


def key_span(fcurve: bpy.types.FCurve) -> tuple[float, float]:
    """The frames of an F-curve's first and last key."""
    co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return float(co[0::2].min()), float(co[0::2].max())


def pushed_down(layer: Layer) -> str:
    """The name of the Action that the layer's first bake pushed down ("" for none)."""
    return str(layer.action.get(PUSHED, ""))
