"""What the live side keeps while Blender runs, in one place (``LIVE``): the preview's problems per chain,
whether it is posing and its plan of each armature it poses, the armatures it leaves alone for now, and the
chain being stepped through with its step and overlay. Nothing of it is saved with the file; loading a file forgets it.

Whether a bake is walking through frames is the bake's to say (``bake.walking_frames``): ``LiveState.busy``
asks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..bake import walking_frames
from .rig_plan import RigPlan
from .stepping import Session

#: Why the operators that read or key the animation are greyed out while stepping.
LEAVE_FIRST = "Leave Step Through Iterations first: the chain is posed at a step of its solve, not its animation"


@dataclass
class LiveState:
    """The live side's state.

    Attributes
    ----------
    problems : dict of str to dict of int to str
        Why the preview cannot pose some chains: by armature name, by the chain's place in its list.
    posing : bool
        The preview is posing now (its handlers do not enter again).
    paused : set of int
        Armatures (by ``session_uid``, which survives a rename) whose pose something else shows for now: not
        previewed.
    session : Session or None
        The chain being stepped through (Step Through Iterations).
    step : int
        The step it is posed at.
    overlay : object or None
        The viewport overlay's draw handler, while one is added.
    plans : dict of int to RigPlan
        What the preview keeps of each armature it poses between updates, by its ``session_uid``.
    """

    problems: dict[str, dict[int, str]] = field(default_factory=dict)
    posing: bool = False
    paused: set[int] = field(default_factory=set)
    session: Session | None = None
    step: int = 0
    overlay: object | None = None
    plans: dict[int, RigPlan] = field(default_factory=dict)

    @property
    def stepping(self) -> bool:
        """Whether a chain is being stepped through: the pose shown is a step of its solve, not its animation."""
        return self.session is not None

    def busy(self) -> bool:
        """Whether the preview must leave poses alone now: it is posing already, or a bake steps through frames
        (poses seen meanwhile are the bake's, not the user's)."""
        return self.posing or walking_frames()

    def forget(self) -> None:
        """What the preview noted of the file being left (a new file is loaded, or the add-on goes)."""
        self.problems.clear()
        self.paused.clear()
        self.plans.clear()


#: The one live state of this Blender session.
LIVE = LiveState()
