"""The bake: every check it makes before writing (``plan``, with ``checks`` and ``conflicts``), the walks through the
frames that read the scene and check the keys with Blender's own evaluation (``read``, in a ``sandbox`` scene),
the unit it solves, one chain or a tree of chains (``unit``, in each chain's root frame: ``inputs``), upper units before
the chains hanging below them (``order``), the keys it writes all or nothing (``run``: ``bake``, ``carry_out``)
and what it reports (``report``); Blender's IK constraints as its input (``ik_constraints``), and Clear
(``clear``).

Imports ``rig``, ``compat``, and the solver's and settings' public names; the live preview, the operators
and the API import only the names below.
"""

from .checks import check_armature, check_channel_fcurves, check_writable, current_scene
from .clear import clear
from .ik_constraints import bake_ik_constraints
from .inputs import Inputs, inputs_from_rows
from .order import Hang, Order, groups, moved_inputs, solve_order, units
from .plan import BakePlan, check_keys_play, plan
from .read import BoneTrack, current_inputs, goal_fill, goal_matrix, walking_frames
from .report import BakeReport, RigBakeReport
from .run import Adjust, Adjusted, bake, carry_out, read_bones, read_frames
from .sandbox import SANDBOX_NAME
from .unit import PreparedChain, Solved, Unit, prepare_chain

__all__ = [
    "SANDBOX_NAME",
    "Adjust",
    "Adjusted",
    "BakePlan",
    "BakeReport",
    "BoneTrack",
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
    "check_armature",
    "check_channel_fcurves",
    "check_keys_play",
    "check_writable",
    "clear",
    "current_inputs",
    "current_scene",
    "goal_fill",
    "goal_matrix",
    "groups",
    "inputs_from_rows",
    "moved_inputs",
    "plan",
    "prepare_chain",
    "read_bones",
    "read_frames",
    "solve_order",
    "units",
    "walking_frames",
]
