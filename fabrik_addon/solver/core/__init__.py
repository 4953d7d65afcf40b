"""The maths both solvers stand on: validation, rotations (quaternions, matrices, Euler angles, axis-angle),
Blender's IK limits, chain geometry, quaternions stored as rows (``quat_rows``) with the limits' clamp and the
per-bone routines on them, the stopping rules, and how near and far a chain's tip can come under its limits:
exactly for some chains (``reach``), within bounds that hold for every chain (``reach_bounds``).

Imports nothing of the solver outside this package; ``points`` and ``bones`` import only the names below.
"""

from . import quat_rows
from .bone_frames import MAX_STEP_RAD, Aims, BoneFrames, cap_turns
from .geometry import (
    FALLBACK_DIRECTION,
    LEAST_TURN,
    arc_angle,
    bend,
    best_turn,
    chain_along,
    cross,
    dots,
    inner_radius,
    is_straight_line,
    norms,
    perpendicular,
    soften_reach,
    turn_about,
    unit_or,
)
from .limits import JointLimits
from .reach import ChainReach, Shape, chain_reach
from .reach_bounds import Extremes, ReachBounds, free_root, reach_bounds, seek_extremes
from .rotations import (
    EULER_ORDERS,
    axis_angle_to_quat,
    euler_continuous,
    euler_to_matrix,
    matrix_to_euler,
    matrix_to_quat,
    quat_between,
    quat_conjugate,
    quat_multiply,
    quat_normalize,
    quat_rotate,
    quat_to_axis_angle,
    quat_to_matrix,
    sign_continuous,
    twist,
)
from .row_clamp import RowClamp
from .stopping import DEFAULT_MAX_ITERATIONS, DEFAULT_MIN_IMPROVEMENT, DEFAULT_TOLERANCE, Stopping
from .straight_chains import may_bend, unbend_starts
from .validate import (
    FloatArray,
    as_joints,
    as_point,
    as_points,
    non_negative_float,
    positive_float,
    positive_int,
    segment_lengths,
)

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MIN_IMPROVEMENT",
    "DEFAULT_TOLERANCE",
    "EULER_ORDERS",
    "FALLBACK_DIRECTION",
    "LEAST_TURN",
    "MAX_STEP_RAD",
    "Aims",
    "BoneFrames",
    "ChainReach",
    "Extremes",
    "FloatArray",
    "JointLimits",
    "ReachBounds",
    "RowClamp",
    "Shape",
    "Stopping",
    "arc_angle",
    "as_joints",
    "as_point",
    "as_points",
    "axis_angle_to_quat",
    "bend",
    "best_turn",
    "cap_turns",
    "chain_along",
    "chain_reach",
    "cross",
    "dots",
    "euler_continuous",
    "euler_to_matrix",
    "free_root",
    "inner_radius",
    "is_straight_line",
    "matrix_to_euler",
    "matrix_to_quat",
    "may_bend",
    "non_negative_float",
    "norms",
    "perpendicular",
    "positive_float",
    "positive_int",
    "quat_between",
    "quat_conjugate",
    "quat_multiply",
    "quat_normalize",
    "quat_rotate",
    "quat_rows",
    "quat_to_axis_angle",
    "quat_to_matrix",
    "reach_bounds",
    "seek_extremes",
    "segment_lengths",
    "sign_continuous",
    "soften_reach",
    "turn_about",
    "twist",
    "unbend_starts",
    "unit_or",
]
