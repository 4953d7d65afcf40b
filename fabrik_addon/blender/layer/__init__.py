"""The bake as a layer: the FABRIK layer of an armature, an NLA track over its animation blended with Combine
(``stack``: found, what plays below it, the active Action pushed down beneath it; ``checks``: whether a bake
can key it), the keys a bake writes into it all or nothing (``writer``), and the layer merged down into the
Action below (``merge`` plans it, ``apply`` keys it) or taken away (``apply``). The arithmetic of the blend
is ``fabrik_addon.layer``'s.

Imports ``rig``, ``compat`` and the pure packages' public names; the bake, the API and the operators import only
the names below.
"""

from .apply import AppliedLayer, apply_layer, clear_layer, remove_layer
from .checks import check_layer
from .stack import (
    LAYER_NAME,
    Layer,
    animated_below,
    animated_by_strips,
    below_the_layer,
    find_layer,
    played_below,
)
from .writer import LayerWriter

__all__ = [
    "LAYER_NAME",
    "AppliedLayer",
    "Layer",
    "LayerWriter",
    "animated_below",
    "animated_by_strips",
    "apply_layer",
    "below_the_layer",
    "check_layer",
    "clear_layer",
    "find_layer",
    "played_below",
    "remove_layer",
]
