"""The add-on live while an animator works: the preview that poses the enabled chains whenever a target moves
or the frame changes (``preview``; what it keeps of each armature between updates, ``rig_plan``; the pose read
and written in bulk, ``pose_rows``; what an update touched, ``updates``), and Step Through Iterations
(``stepping``: one chain's solve kept step by step; ``player``: posing, playing and drawing its steps), with
their state in one place (``state.LIVE``).

Imports ``bake``, ``rig``, ``properties`` and the solver's public names; the operators and the panel import
only the names below.
"""

from . import player, preview
from .preview import pose_chains, problems, tip_distance
from .state import LEAVE_FIRST, LIVE, LiveState
from .stepping import Session, SteppedSolve
from .stepping import begin as begin_stepping

__all__ = [
    "LEAVE_FIRST",
    "LIVE",
    "LiveState",
    "Session",
    "SteppedSolve",
    "begin_stepping",
    "player",
    "pose_chains",
    "preview",
    "problems",
    "tip_distance",
]
