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
import numbers
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Generic, TypeVar, cast

from .setting_names import named
from .solver import DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE, METHODS

#: Blender's first and last frame (its MINAFRAME and MAXFRAME: the range of ``Scene.frame_current``). Keys
#: past them could not be reached by the timeline, and frames are kept as float32, exact only to 2**24.
FRAME_MIN, FRAME_MAX = -1_048_574, 1_048_574

#: The smallest rotation weight, as the IK constraint's Rotation weight allows.
_WEIGHT_MIN = 0.01

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
        _set(self, "tolerance", _positive(self.tolerance, named("tolerance")))
        _set(self, "max_iterations", whole_number(self.max_iterations, named("max_iterations"), low=1))
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise ValueError(f"{named('method')} must be one of {sorted(METHODS)}, got {self.method!r}")
        _flag(self.warm_start, named("warm_start"))


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
                _set(self, name, _frame(value, named(f"frame_{name}")))
        _set(self, "step", whole_number(self.step, named("frame_step"), low=1))
        if self.start is not None and self.end is not None:
            _check_order(self.start, self.end)

    def resolved(self, scene_start: int, scene_end: int) -> range:
        """The frames, with the scene's range standing in for a missing start or end.

        Raises
        ------
        ValueError
            If the range ends before it starts.
        """
        start = _frame(scene_start, "the scene's frame_start") if self.start is None else self.start
        end = _frame(scene_end, "the scene's frame_end") if self.end is None else self.end
        _check_order(start, end)
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
        _set(self, "chain_length", length)
        if not math.isfinite(_real(self.pole_angle)):
            raise ValueError(f"{named('pole_angle')} must be a finite number of radians, got {self.pole_angle!r}")
        _set(self, "pole_angle", float(self.pole_angle))
        _flag(self.use_stretch, named("use_stretch"))
        for name in ("target_bone", "pole_bone"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(
                    f'{named(name)} must be a bone\'s name (a string, "" for none), got {getattr(self, name)!r}'
                )
        _flag(self.use_rotation, named("use_rotation"))
        weight = _real(self.rotation_weight)
        if not _WEIGHT_MIN <= weight <= 1.0:  # NaN fails too
            raise ValueError(
                f"{named('rotation_weight')} must be a number from {_WEIGHT_MIN} to 1, got {self.rotation_weight!r}"
            )
        _set(self, "rotation_weight", weight)
        _set(self, "weight", _positive(self.weight, named("weight")))
        soft = _real(self.soft_reach)
        if not (math.isfinite(soft) and soft >= 0.0):
            raise ValueError(f"{named('soft_reach')} must be a distance >= 0 (0 = off), got {self.soft_reach!r}")
        _set(self, "soft_reach", soft)


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
    """

    chains: tuple[ChainSettings[ObjectT], ...]
    frames: FrameRange = field(default_factory=FrameRange)
    solver: SolverSettings = field(default_factory=SolverSettings)
    action_name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.chains, tuple) or not self.chains:
            raise ValueError("a bake needs at least one chain")
        if self.action_name is not None and not isinstance(self.action_name, str):
            raise TypeError(f"action_name must be a string, got {type(self.action_name).__name__}")
        if self.action_name == "":
            raise ValueError("action_name must name an Action, got '' (leave it out, None, for the active Action)")

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
        unknown = sorted(set(keywords) - set(KEYWORDS))
        if unknown:
            raise TypeError(f"unknown bake option {', '.join(map(repr, unknown))}; known: {', '.join(KEYWORDS)}")

        def picked(names: tuple[str, ...], prefix: str = "") -> dict[str, Any]:
            return {name.removeprefix(prefix): keywords[name] for name in names if name in keywords}

        return cls(
            chains=(ChainSettings(armature, target, **picked(_CHAIN_KEYWORDS)),),
            frames=FrameRange(**picked(_FRAME_KEYWORDS, prefix="frame_")),
            solver=SolverSettings(**picked(_SOLVER_KEYWORDS)),
            action_name=keywords.get("action_name"),
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

        return BakeSettings(tuple(chain(c) for c in self.chains), self.frames, self.solver, self.action_name)


#: What may happen to IK constraints once their keys are baked (``api.bake_ik_constraints``' ``after``).
IK_AFTER = ("mute", "remove", "keep")

#: The fields of ``ChainSettings`` that hold objects.
OBJECT_FIELDS = ("armature", "target", "pole_target")
_CHAIN_KEYWORDS = tuple(f.name for f in fields(ChainSettings) if f.name not in {"armature", "target"})
_FRAME_KEYWORDS = tuple(f"frame_{f.name}" for f in fields(FrameRange))
_SOLVER_KEYWORDS = tuple(f.name for f in fields(SolverSettings))
#: The keyword arguments of ``api.bake`` after its armature and target: each is a field of one of the values
#: above (``frame_*`` of ``FrameRange``), or ``action_name``.
KEYWORDS = (*_CHAIN_KEYWORDS, *_FRAME_KEYWORDS, *_SOLVER_KEYWORDS, "action_name")
#: Keywords whose value is an object (in a config file: the object's name).
OBJECT_KEYWORDS = tuple(name for name in _CHAIN_KEYWORDS if name in OBJECT_FIELDS)
#: Every keyword's default (``tip_bone`` has none), as ``api.bake`` and the command line apply it.
DEFAULTS: Mapping[str, Any] = {
    **{f.name: f.default for f in fields(ChainSettings) if f.name in _CHAIN_KEYWORDS and f.default is not MISSING},
    **{f"frame_{f.name}": f.default for f in fields(FrameRange)},
    **{f.name: f.default for f in fields(SolverSettings)},
    "action_name": None,
}


def whole_number(value: object, name: str, *, low: int | None = None, hint: str = "") -> int:
    """``value`` as an ``int`` if it is a whole number (not a bool) of at least ``low``.

    Raises
    ------
    ValueError
        Naming ``name``, the rule (with ``hint``) and the value.
    """
    rule = "a whole number" + ("" if low is None else f" >= {low}") + hint
    number = _real(value)
    if not number.is_integer() or (low is not None and number < low):  # NaN and infinity are not integers
        raise ValueError(f"{name} must be {rule}, got {value!r}")
    return int(number)


def _frame(value: object, name: str) -> int:
    frame = whole_number(value, name)
    if not FRAME_MIN <= frame <= FRAME_MAX:
        raise ValueError(f"{name} must be one of Blender's frames, {FRAME_MIN} to {FRAME_MAX}, got {frame}")
    return frame


def _positive(value: object, name: str) -> float:
    number = _real(value)
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return number


def _real(value: object) -> float:
    """``value`` as a float if it is a real number (not a bool), else NaN."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def _flag(value: object, name: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")


def _check_order(start: int, end: int) -> None:
    if end < start:
        raise ValueError(
            f"the frames end before they start: {named('frame_end')} {end}, {named('frame_start')} {start}"
        )


def _set(value: object, name: str, checked: object) -> None:
    """Store a checked field of a frozen dataclass (in its ``__post_init__``)."""
    object.__setattr__(value, name, checked)
