"""What to bake and how, as one frozen value checked once: every entry point builds it, the bake reads it.

The panel's properties (``blender.properties``), the keyword arguments of ``api.bake``, and the command line's
options and config jobs all end in a ``BakeSettings``; the bake, Clear and the live preview take it. The
checks and defaults of plain values live here, once; what only Blender can tell (is this an armature, is the
target evaluated) is checked by the Blender layer when it reads the objects.

No ``bpy`` here: the command line checks its jobs before it imports Blender. The objects a value names are of
a type parameter: ``bpy.types.Object`` in a bake, an object's name (``str``) in a command-line job until the
job's file is open (``BakeSettings.with_objects``).

>>> settings = BakeSettings.from_keywords("Rig", "Hand.IK", tip_bone="hand.L", chain_length=3, tolerance=1e-4)
>>> settings.chains[0].chain_length, settings.solver.tolerance
(3, 0.0001)

A message names a setting as the panel labels it, with the keyword of ``api.bake`` in parentheses
(``setting_names.named``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Generic, TypeVar, cast

from .setting_checks import FRAME_MAX as FRAME_MAX
from .setting_checks import FRAME_MIN as FRAME_MIN
from .setting_checks import (
    check_flag,
    check_order,
    frame_number,
    key_error_distance,
    positive_number,
    real_number,
    set_field,
)
from .setting_checks import check_keywords as check_keywords
from .setting_checks import whole_number as whole_number
from .setting_names import named
from .solver import DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE, METHODS

#: The smallest rotation weight, as the IK constraint's Rotation weight allows.
_WEIGHT_MIN = 0.01

#: Where a bake's keys go (``BakeSettings.output``): into an Action, replacing the keys in the frame range, or
#: into a layer of their own over the animation (an NLA track blended with Combine, which can be muted).
OUTPUTS = ("action", "layer")

ObjectT = TypeVar("ObjectT")
OtherT = TypeVar("OtherT")


@dataclass(frozen=True)
class SolverSettings:
    """How each frame is solved.

    Attributes
    ----------
    tolerance : float
        How close the tip must come to the target, in world units (> 0).
    max_iterations : int
        Solver iterations per frame at most (>= 1).
    method : {"fabrik", "ccd"}
        FABRIK, or Cyclic Coordinate Descent for comparison (chains without limits, pole or stretch only).
    warm_start : bool
        For a chain with no animation of its own, start each frame from the frames before it (see
        ``fabrik_addon.solver.solve_frames``); an animated chain starts every frame from its own pose.
    """

    tolerance: float = DEFAULT_TOLERANCE
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    method: str = "fabrik"
    warm_start: bool = True

    def __post_init__(self) -> None:
        set_field(self, "tolerance", positive_number(self.tolerance, named("tolerance")))
        set_field(self, "max_iterations", whole_number(self.max_iterations, named("max_iterations"), low=1))
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise ValueError(f"{named('method')} must be one of {sorted(METHODS)}, got {self.method!r}")
        check_flag(self.warm_start, named("warm_start"))


@dataclass(frozen=True)
class FrameRange:
    """The frames to bake (or clear): from ``start`` to ``end``, both included, every ``step``-th, and ``end``
    itself (``keyed``).

    ``start`` or ``end`` None stands for the scene's own first or last frame, known once a scene is at hand
    (``resolved``).
    """

    start: int | None = None
    end: int | None = None
    step: int = 1

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if value is not None:
                set_field(self, name, frame_number(value, named(f"frame_{name}")))
        set_field(self, "step", whole_number(self.step, named("frame_step"), low=1))
        if self.start is not None and self.end is not None:
            check_order(self.start, self.end)

    def resolved(self, scene_start: int, scene_end: int) -> range:
        """The frames, with the scene's range standing in for a missing start or end.

        Raises
        ------
        ValueError
            If the range ends before it starts.
        """
        start = frame_number(scene_start, "the scene's frame_start") if self.start is None else self.start
        end = frame_number(scene_end, "the scene's frame_end") if self.end is None else self.end
        check_order(start, end)
        return range(start, end + 1, self.step)

    def keyed(self, scene_start: int, scene_end: int) -> tuple[int, ...]:
        """The frames a bake keys: every ``step``-th from the start (``resolved``), and the end frame too where
        the step passes it by, so the keys span the range (start 1, end 50, step 5: 1, 6, ..., 46, 50; Blender's
        Bake Action keys ``range(start, end + 1, step)`` and stops at 46).

        Raises
        ------
        ValueError
            If the range ends before it starts.
        """
        return keyed_frames(self.resolved(scene_start, scene_end))


def keyed_frames(frames: range) -> tuple[int, ...]:
    """The frames a bake keys over a range ``FrameRange.resolved`` gave (its stop one past the end frame):
    every frame of it, and the end frame where the step passes it by."""
    end = frames.stop - 1
    return (*frames, end) if frames[-1] != end else tuple(frames)


@dataclass(frozen=True)
class ChainSettings(Generic[ObjectT]):
    """One chain of bones and what its tip follows.

    Attributes
    ----------
    armature : object
        The armature object.
    target : object or None
        The object whose world location the tip bone's tail follows (None: not picked yet; a bake refuses it).
    tip_bone : str
        The chain's last bone.
    chain_length : int
        Bones in the chain, counted from ``tip_bone`` up through its parents as Blender's IK constraint counts
        them; 0 goes up to the root bone.
    pole_target : object or None
        The chain bends toward this object, as with the pole target of Blender's IK constraint.
    pole_angle : float
        Radians, with the meaning of the IK constraint's Pole Angle.
    use_stretch : bool
        Let bones lengthen by their IK Stretch share to reach farther.
    target_bone, pole_bone : str
        With a bone named, the goal is that bone of the target (pole) armature: its head's world position,
        as the IK constraint reads a Bone (Pole Bone) subtarget; "" for the object itself.
    use_rotation : bool
        The tip bone also turns to the target's world orientation, as the IK constraint's Rotation option.
    rotation_weight : float
        In [0.01, 1]: how far the tip turns from its free orientation toward the target's (the IK
        constraint's Rotation weight).
    weight : float
        How hard the tip pulls (> 0) when the chain shares bones with others (they are solved as one tree):
        only the weights' ratios matter (the IK constraint's Weight).
    soft_reach : float
        World units (>= 0): over this distance short of full extension the chain eases straight instead of
        snapping straight; the tip then stops short of a target that far out. 0: off (and with Stretch).
    """

    armature: ObjectT
    target: ObjectT | None
    tip_bone: str
    chain_length: int = 0
    pole_target: ObjectT | None = None
    pole_angle: float = 0.0
    use_stretch: bool = False
    target_bone: str = ""
    pole_bone: str = ""
    use_rotation: bool = False
    rotation_weight: float = 1.0
    weight: float = 1.0
    soft_reach: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.tip_bone, str):
            raise TypeError(f"{named('tip_bone')} must be a bone's name (a string), got {self.tip_bone!r}")
        length = whole_number(self.chain_length, named("chain_length"), low=0, hint=" (0 = up to the root)")
        set_field(self, "chain_length", length)
        if not math.isfinite(real_number(self.pole_angle)):
            raise ValueError(f"{named('pole_angle')} must be a finite number of radians, got {self.pole_angle!r}")
        set_field(self, "pole_angle", float(self.pole_angle))
        check_flag(self.use_stretch, named("use_stretch"))
        for name in ("target_bone", "pole_bone"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(
                    f'{named(name)} must be a bone\'s name (a string, "" for none), got {getattr(self, name)!r}'
                )
        check_flag(self.use_rotation, named("use_rotation"))
        weight = real_number(self.rotation_weight)
        if not _WEIGHT_MIN <= weight <= 1.0:  # NaN fails too
            raise ValueError(
                f"{named('rotation_weight')} must be a number from {_WEIGHT_MIN} to 1, got {self.rotation_weight!r}"
            )
        set_field(self, "rotation_weight", weight)
        set_field(self, "weight", positive_number(self.weight, named("weight")))
        soft = real_number(self.soft_reach)
        if not (math.isfinite(soft) and soft >= 0.0):
            raise ValueError(f"{named('soft_reach')} must be a distance >= 0 (0 = off), got {self.soft_reach!r}")
        set_field(self, "soft_reach", soft)


@dataclass(frozen=True)
class BakeSettings(Generic[ObjectT]):
    """Everything a bake needs: the chains, the frames, the solver and where the keys go.

    Attributes
    ----------
    chains : tuple of ChainSettings
        At least one.
    frames : FrameRange
    solver : SolverSettings
    action_name : str or None
        Bake into this Action (created if missing), made the armature's active one; None: the active Action.
    output : {"action", "layer"}
        ``"action"``: key the chains into the Action (``action_name``), replacing their keys in the frame range.
        ``"layer"``: key them into the armature's FABRIK layer, an NLA track over its animation blended with
        Combine, which leaves every Action that was there as it was (see ``fabrik_addon.blender.layer``).
    key_error : float
        World units (>= 0): keep keys on the fewest frames such that every baked bone's head, tail and points
        off its axis stay within this distance of the solved pose on every frame, as Blender plays the keys
        (``fabrik_addon.reduction``); 0 keys every frame.
    """

    chains: tuple[ChainSettings[ObjectT], ...]
    frames: FrameRange = field(default_factory=FrameRange)
    solver: SolverSettings = field(default_factory=SolverSettings)
    action_name: str | None = None
    output: str = "action"
    key_error: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.chains, tuple) or not self.chains:
            raise ValueError("a bake needs at least one chain")
        check_output(self.output, self.action_name)
        set_field(self, "key_error", key_error_distance(self.key_error, named("key_error")))

    @classmethod
    def from_keywords(cls, armature: ObjectT, target: ObjectT | None, **keywords: Any) -> BakeSettings[ObjectT]:
        """One chain's settings from the keyword arguments of ``api.bake`` (see ``KEYWORDS``).

        Raises
        ------
        TypeError
            For a keyword ``api.bake`` does not know, or a value of the wrong type.
        ValueError
            For a value out of its range.
        """
        check_keywords(keywords, KEYWORDS, "bake")
        soft, stretch = keywords.get("soft_reach", 0.0), keywords.get("use_stretch", False)
        if stretch is True and isinstance(soft, (int, float)) and soft > 0.0:  # the panel greys Soft Reach out
            raise ValueError(
                f"{named('soft_reach')} {soft:g} does nothing with {named('use_stretch')} on: a chain that stretches "
                f"reaches every target instead of easing short of it; leave {named('soft_reach')} at 0, or "
                f"{named('use_stretch')} off"
            )

        def picked(names: tuple[str, ...], prefix: str = "") -> dict[str, Any]:
            return {name.removeprefix(prefix): keywords[name] for name in names if name in keywords}

        return cls(
            chains=(ChainSettings(armature, target, **picked(_CHAIN_KEYWORDS)),),
            frames=FrameRange(**picked(_FRAME_KEYWORDS, prefix="frame_")),
            solver=SolverSettings(**picked(_SOLVER_KEYWORDS)),
            action_name=keywords.get("action_name"),
            output=keywords.get("output", DEFAULTS["output"]),
            key_error=keywords.get("key_error", DEFAULTS["key_error"]),
        )

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments (see ``KEYWORDS``) that ``from_keywords`` turns back into this value, those at
        their default left out; for a value of one chain.

        Raises
        ------
        ValueError
            If the value holds several chains.
        """
        if len(self.chains) != 1:
            raise ValueError(f"keywords stand for one chain, these settings hold {len(self.chains)}")
        chain = self.chains[0]
        values = {
            **{name: getattr(chain, name) for name in _CHAIN_KEYWORDS},
            **{name: getattr(self.frames, name.removeprefix("frame_")) for name in _FRAME_KEYWORDS},
            **{name: getattr(self.solver, name) for name in _SOLVER_KEYWORDS},
            "action_name": self.action_name,
            "output": self.output,
            "key_error": self.key_error,
        }
        return {name: value for name, value in values.items() if name not in DEFAULTS or value != DEFAULTS[name]}

    def with_objects(self, find: Callable[[ObjectT, str], OtherT]) -> BakeSettings[OtherT]:
        """The same settings with every object replaced by ``find(object, role)``, ``role`` being the field's
        name (``"armature"``, ``"target"``, ``"pole_target"``): names looked up in an open file."""

        def chain(settings: ChainSettings[ObjectT]) -> ChainSettings[OtherT]:
            found: dict[str, Any] = {
                role: None if getattr(settings, role) is None else find(getattr(settings, role), role)
                for role in OBJECT_FIELDS
            }
            return cast(ChainSettings[OtherT], replace(settings, **found))  # the same fields, other objects

        return cast(BakeSettings[OtherT], replace(self, chains=tuple(chain(c) for c in self.chains)))  # type: ignore[misc]


#: What may happen to IK constraints once their keys are baked (``api.bake_ik_constraints``' ``after``).
IK_AFTER = ("mute", "remove", "keep")

#: The fields of ``ChainSettings`` that hold objects.
OBJECT_FIELDS = ("armature", "target", "pole_target")
_CHAIN_KEYWORDS = tuple(f.name for f in fields(ChainSettings) if f.name not in {"armature", "target"})
_FRAME_KEYWORDS = tuple(f"frame_{f.name}" for f in fields(FrameRange))
_SOLVER_KEYWORDS = tuple(f.name for f in fields(SolverSettings))
#: The keyword arguments of ``api.bake`` after its armature and target: each is a field of one of the values
#: above (``frame_*`` of ``FrameRange``), or ``action_name``, ``output`` or ``key_error``.
KEYWORDS = (*_CHAIN_KEYWORDS, *_FRAME_KEYWORDS, *_SOLVER_KEYWORDS, "action_name", "output", "key_error")
#: What a bake of an armature's saved chain list (``api.bake_chains``) may take instead of the armature's own
#: settings: the keywords of ``api.bake`` that are not a chain's.
CHAIN_LIST_KEYWORDS = (*_FRAME_KEYWORDS, *_SOLVER_KEYWORDS, "action_name", "output", "key_error")
#: The keywords of ``api.targets_from_animation`` after its armature.
TARGETS_KEYWORDS = ("chains", "frame_start", "frame_end", "poles", "replace", "key_error")
#: Keywords whose value is an object (in a config file: the object's name).
OBJECT_KEYWORDS = tuple(name for name in _CHAIN_KEYWORDS if name in OBJECT_FIELDS)
#: Every keyword's default (``tip_bone`` has none), as ``api.bake`` and the command line apply it.
DEFAULTS: Mapping[str, Any] = {
    **{f.name: f.default for f in fields(ChainSettings) if f.name in _CHAIN_KEYWORDS and f.default is not MISSING},
    **{f"frame_{f.name}": f.default for f in fields(FrameRange)},
    **{f.name: f.default for f in fields(SolverSettings)},
    "action_name": None,
    "output": "action",
    "key_error": 0.0,
}


def check_output(output: object, action_name: object) -> None:
    """Where the keys go (``OUTPUTS``), and the Action named (``action_name``: a name, or None), which only an
    ``"action"`` output takes.

    Raises
    ------
    TypeError, ValueError
        Naming the setting and what to give.
    """
    if not isinstance(output, str) or output not in OUTPUTS:
        raise ValueError(f"{named('output')} must be one of {', '.join(map(repr, OUTPUTS))}, got {output!r}")
    if action_name is not None and not isinstance(action_name, str):
        raise TypeError(f"action_name must be a string, got {type(action_name).__name__}")
    if action_name == "":
        raise ValueError("action_name must name an Action, got '' (leave it out, None, for the active Action)")
    if action_name is not None and output == "layer":
        raise ValueError(
            f"action_name names an Action to key, but {named('output')} 'layer' keys a layer of its own over the "
            "animation: leave action_name out, or bake with output 'action'"
        )
