"""What a layer blended with Combine keys, and what Blender plays from it: the arithmetic of Blender's NLA
Combine blend, channel by channel (its ``nla_combine_value`` and ``nla_combine_quaternion``).

Blender blends a strip's values ``s`` over the values below it ``b`` at influence ``i`` by the kind of the
property (``KINDS``):

- a quaternion: ``normalise(b) @ normalise(s) ** i`` (rotations composed, the strip's applied after);
- a scale (a proportional property): ``b * s ** i``;
- anything else (location, Euler angles, axis-angle values, custom properties): ``b + s * i``.

A channel that nothing below animates blends over its kind's base value (``BASE``): the identity
rotation, 1, or 0. So a layer that keys ``layer_values(kind, below, wanted)`` plays ``wanted`` at influence
1 and ``below`` at influence 0 (or muted).

>>> import numpy as np
>>> below = np.array([[0.2, 0.0, 0.0]])
>>> layer_values("add", below, np.array([[0.5, 0.1, 0.0]]))
array([[0.3, 0.1, 0. ]])
"""

from __future__ import annotations

import numpy as np

from ..solver import FloatArray, quat_conjugate, quat_multiply, quat_normalize, sign_continuous

#: How Combine blends each kind of channel (see the module).
KINDS = ("quaternion", "multiply", "add")

#: What a channel that nothing below animates blends over, by kind.
BASE = {"quaternion": (1.0, 0.0, 0.0, 0.0), "multiply": 1.0, "add": 0.0}


def channel_kind(prop: str) -> str:
    """How Combine blends the property named ``prop`` (the last part of a data path): ``"quaternion"`` for
    ``rotation_quaternion``, ``"multiply"`` for ``scale``, ``"add"`` for the rest."""
    if prop == "rotation_quaternion":
        return "quaternion"
    return "multiply" if prop == "scale" else "add"


def base_values(kind: str, width: int) -> FloatArray:
    """The values (width,) a channel of ``kind`` blends over where nothing below animates it."""
    base = BASE[kind]
    return np.array(base if isinstance(base, tuple) else [base] * width, dtype=np.float64)


def layer_values(kind: str, below: FloatArray, wanted: FloatArray) -> FloatArray:
    """The values a layer keys so that, blended with Combine at influence 1 over ``below``, it plays ``wanted``.

    Parameters
    ----------
    kind : {"quaternion", "multiply", "add"}
        See ``channel_kind``.
    below, wanted : ndarray, shape (F, n)
        On each frame, what the animation below the layer gives the channel (its base value where nothing
        animates it, ``base_values``) and what the layer should make of it; a quaternion's four values
        together (n = 4).

    Returns
    -------
    ndarray, shape (F, n)
        For quaternions the turns that take ``below`` to ``wanted``, each on the side of the one before it
        (the first on the identity's), so that keys between frames turn the short way.

    Raises
    ------
    ValueError
        For a scale of 0 below a scale the layer should make other than 0: no factor turns 0 into it.
    """
    below = np.asarray(below, dtype=np.float64)
    wanted = np.asarray(wanted, dtype=np.float64)
    if kind == "quaternion":
        turns = quat_multiply(quat_conjugate(quat_normalize(below)), quat_normalize(wanted))
        return sign_continuous(turns, reference=np.array(BASE["quaternion"]))
    if kind == "multiply":
        zero = below == 0.0
        if np.any(zero & (wanted != 0.0)):
            raise ValueError("a scale of 0 below the layer cannot be scaled to another value: key it above 0")
        return np.asarray(np.where(zero, 1.0, wanted / np.where(zero, 1.0, below)), dtype=np.float64)
    if kind == "add":
        return np.asarray(wanted - below, dtype=np.float64)
    raise ValueError(f"unknown kind of channel {kind!r} (one of {', '.join(KINDS)})")


def played_as_blender(kind: str, below: FloatArray, layer: FloatArray) -> FloatArray:
    """What Blender plays from a layer's values ``layer`` (F, n) blended with Combine over ``below`` (F, n) at
    influence 1, with the rounding that matters: Blender raises a quaternion turn to the influence through
    ``acosf`` of its first value in float32, so a turn's angle is that of the float32 nearest its cosine (small
    turns round by up to about 0.04 degrees: a turn of less than 0.02 degrees plays as none). The rest as
    ``combined``."""
    if kind != "quaternion":
        return combined(kind, below, layer)
    turns = np.asarray(layer, dtype=np.float32)
    length = np.sqrt(np.sum(turns * turns, axis=-1, keepdims=True, dtype=np.float32))
    turns = turns * (np.float32(1.0) / np.where(length > 0, length, np.float32(1.0)))
    half = np.arccos(np.clip(turns[..., :1].astype(np.float64), -1.0, 1.0))
    axes = turns[..., 1:].astype(np.float64)
    sizes = np.linalg.norm(axes, axis=-1, keepdims=True)
    axes = np.divide(axes, sizes, out=np.zeros_like(axes), where=sizes > 0.0)
    return quat_multiply(
        quat_normalize(np.asarray(below, dtype=np.float64)),
        np.concatenate([np.cos(half), np.sin(half) * axes], axis=-1),
    )


def combined(kind: str, below: FloatArray, layer: FloatArray, influence: float | FloatArray = 1.0) -> FloatArray:
    """What Blender plays from a layer's values ``layer`` (F, n) blended with Combine over ``below`` (F, n) at
    ``influence`` (a number, or one per frame, shape (F,)): see the module. In float64, where Blender computes
    in float32."""
    below = np.asarray(below, dtype=np.float64)
    layer = np.asarray(layer, dtype=np.float64)
    weight = np.reshape(np.asarray(influence, dtype=np.float64), (-1, 1)) if np.ndim(influence) else influence
    if kind == "quaternion":
        turns = quat_normalize(layer)
        half = np.arccos(np.clip(turns[..., :1], -1.0, 1.0)) * weight
        axes = turns[..., 1:]
        lengths = np.linalg.norm(axes, axis=-1, keepdims=True)
        axes = np.divide(axes, lengths, out=np.zeros_like(axes), where=lengths > 0.0)
        powered = np.concatenate([np.cos(half), np.sin(half) * axes], axis=-1)
        return quat_multiply(quat_normalize(below), powered)
    if kind == "multiply":
        return np.asarray(below * layer**weight, dtype=np.float64)
    if kind == "add":
        return np.asarray(below + layer * weight, dtype=np.float64)
    raise ValueError(f"unknown kind of channel {kind!r} (one of {', '.join(KINDS)})")
