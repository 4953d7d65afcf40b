"""The bake: every check it makes before writing (``plan``, with ``checks`` and ``conflicts``), the walks through the
frames that read the scene and check the keys with Blender's own evaluation (``read``, in a ``sandbox`` scene),
the unit it solves, one chain or a tree of chains (``unit``, in each chain's ``root_frame``), upper units before
the chains hanging below them (``order``), the keys it writes all or nothing (``run``: ``bake``, ``carry_out``)
and what it reports (``report``); Blender's IK constraints as its input (``ik_constraints``), and Clear
(``clear``).

Imports ``rig``, ``compat``, and the solver's and settings' public names; the live preview, the operators
and the API import only the names below.
"""

from .clear import clear
from .ik_constraints import bake_ik_constraints
from .order import Hang, Order, moved_inputs, solve_order
from .plan import BakePlan, plan
from .read import Inputs, current_inputs, goal_fill, goal_matrix, inputs_from_rows, walking_frames
from .report import BakeReport, RigBakeReport
from .run import bake, carry_out
from .sandbox import SANDBOX_NAME
from .unit import PreparedChain, Solved, Unit, groups, prepare_chain, units

__all__ = [
    "SANDBOX_NAME",
    "BakePlan",
    "BakeReport",
    "Hang",
    "Inputs",
    "Order",
    "PreparedChain",
    "RigBakeReport",
    "Solved",
    "Unit",
    "bake",
    "bake_ik_constraints",
    "carry_out",
    "clear",
    "current_inputs",
    "goal_fill",
    "goal_matrix",
    "groups",
    "inputs_from_rows",
    "moved_inputs",
    "plan",
    "prepare_chain",
    "solve_order",
    "units",
    "walking_frames",
]
