"""What to plant and how, as one frozen value checked once (as ``settings.BakeSettings`` is for a bake): the
keyword arguments of ``api.plant_feet``, the panel's Plant Feet settings and the command line's
``--plant-feet`` all end in a ``PlantSettings``.

>>> settings = PlantSettings.from_keywords("Walk", ["LeftAnkle", "RightAnkle"], hips_bone="Hips")
>>> settings.chain_length, settings.rules.blend_seconds
(3, 0.15)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Generic

from ..setting_checks import key_error_distance, whole_number
from ..setting_names import named, plant_named
from ..settings import FrameRange, ObjectT, SolverSettings, check_output
from .contacts import ContactRules
from .plan import PlantRules

#: The keyword arguments of ``api.plant_feet`` after its armature and feet, and what each sets.
_CONTACT_KEYWORDS = {"contact_height": "height", "contact_speed": "speed", "contact_seconds": "seconds"}
_CONTACT_KEYWORDS |= {"contact_gap": "gap_frames"}
_RULE_KEYWORDS = tuple(f.name for f in fields(PlantRules) if f.name != "contacts")
_FRAME_KEYWORDS = {"frame_start": "start", "frame_end": "end"}
_SOLVER_KEYWORDS = ("max_iterations",)
_OWN_KEYWORDS = ("chain_length", "hips_bone", "use_marks", "action_name", "output", "key_error")
PLANT_KEYWORDS = (*_OWN_KEYWORDS, *_FRAME_KEYWORDS, *_CONTACT_KEYWORDS, *_RULE_KEYWORDS, *_SOLVER_KEYWORDS)


@dataclass(frozen=True)
class PlantSettings(Generic[ObjectT]):
    """Feet to plant on one armature's animation.

    Attributes
    ----------
    armature : object
        The armature object.
    feet : tuple of str
        The foot bones (each once): each is the tip of a leg chain, its tail (the ball of the foot) is what is
        planted, and it keeps its animated world orientation; none: found in the animation (on each leg the
        highest bone whose tail touches down).
    chain_length : int
        Bones in each leg chain, counted from the foot up as Blender's IK constraint counts them (>= 2: the
        foot and the bones that move it).
    hips_bone : str
        A bone above every leg that goes down (keyed Location) far enough that every pin is within reach,
        along a slowly changing curve (``PlantRules.hips_seconds``); "" leaves the hips alone.
    frames : FrameRange
        The frames planted (every frame: ``step`` is 1).
    rules : PlantRules
        When feet are planted, and how.
    use_marks : bool
        Where a foot has contact marks (keys of its ``fabrik_contact`` property, as Detect Contacts writes
        them), plant those rather than finding contacts again.
    solver : SolverSettings
        Its ``max_iterations``; the tolerance is the rules' (in leg lengths), made scene units per bake.
    action_name : str or None
        Key into this Action (created if missing); None: the active one.
    output : {"action", "layer"}
        Key the legs (and hips) into the Action, or into the armature's FABRIK layer over the animation, as
        ``settings.BakeSettings.output``.
    key_error : float
        World units (>= 0): keep the legs' and the hips' keys on the fewest frames that keep every bone within
        it of the planted pose and every pinned ball within it of its pin, as ``settings.BakeSettings.key_error``;
        0 keys every frame.
    """

    armature: ObjectT
    feet: tuple[str, ...] = ()
    chain_length: int = 3
    hips_bone: str = ""
    frames: FrameRange = field(default_factory=FrameRange)
    rules: PlantRules = field(default_factory=PlantRules)
    use_marks: bool = True
    solver: SolverSettings = field(default_factory=SolverSettings)
    action_name: str | None = None
    output: str = "action"
    key_error: float = 0.0

    def __post_init__(self) -> None:
        feet: object = self.feet
        if not isinstance(feet, tuple):
            raise ValueError(f"feet must name the foot bones (a list of names; none to find them), got {feet!r}")
        if not all(isinstance(foot, str) and foot for foot in feet):
            raise TypeError(f"feet must be bone names (strings), got {list(feet)!r}")
        twice = sorted({foot for foot in feet if feet.count(foot) > 1})
        if twice:
            raise ValueError(f"foot bone {', '.join(map(repr, twice))} is named twice: name each foot once")
        length = whole_number(
            self.chain_length, plant_named("chain_length"), low=2, hint=" (the foot and the bones above it)"
        )
        object.__setattr__(self, "chain_length", length)
        if not isinstance(self.hips_bone, str):
            raise TypeError(
                f'{plant_named("hips_bone")} must be a bone\'s name (a string, "" for none), got {self.hips_bone!r}'
            )
        if self.hips_bone in feet:
            raise ValueError(
                f"{plant_named('hips_bone')} '{self.hips_bone}' is one of the feet: name the bone above the legs"
            )
        if self.frames.step != 1:
            raise ValueError(f"feet are planted on every frame: {named('frame_step')} must be 1")
        if not isinstance(self.use_marks, bool):
            raise TypeError(f"{plant_named('use_marks')} must be True or False, got {self.use_marks!r}")
        check_output(self.output, self.action_name)
        object.__setattr__(self, "key_error", key_error_distance(self.key_error, named("key_error")))

    @classmethod
    def from_keywords(
        cls, armature: ObjectT, feet: Sequence[str] | None = None, **keywords: Any
    ) -> PlantSettings[ObjectT]:
        """The settings that ``api.plant_feet(armature, feet, **keywords)`` means (see ``PLANT_KEYWORDS``).

        Raises
        ------
        TypeError
            For a keyword ``plant_feet`` does not know, or a value of the wrong type.
        ValueError
            For a value out of its range.
        """
        unknown = sorted(set(keywords) - set(PLANT_KEYWORDS))
        if unknown:
            raise TypeError(
                f"unknown plant_feet option {', '.join(map(repr, unknown))}; known: {', '.join(PLANT_KEYWORDS)}"
            )
        hips = keywords.get("hips_bone")
        return cls(
            armature,
            () if feet is None else feet if isinstance(feet, str) else tuple(feet),  # type: ignore[arg-type]
            chain_length=keywords.get("chain_length", 3),
            hips_bone="" if hips is None else hips,
            frames=FrameRange(**{name: keywords[k] for k, name in _FRAME_KEYWORDS.items() if k in keywords}),
            rules=PlantRules(
                ContactRules(**{name: keywords[k] for k, name in _CONTACT_KEYWORDS.items() if k in keywords}),
                **{name: keywords[name] for name in _RULE_KEYWORDS if name in keywords},
            ),
            use_marks=keywords.get("use_marks", True),
            solver=SolverSettings(**{name: keywords[name] for name in _SOLVER_KEYWORDS if name in keywords}),
            action_name=keywords.get("action_name"),
            output=keywords.get("output", "action"),
            key_error=keywords.get("key_error", 0.0),
        )
