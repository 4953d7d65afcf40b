"""FABRIK and CCD inverse kinematics in pure numpy: no ``bpy``, no ``mathutils``.

Positions are in scene units and angles in radians throughout.

>>> from fabrik_addon.solver import solve
>>> result = solve([[0, 0, 0], [0, 0, 1], [0, 0, 2]], target=[1, 0, 1])
>>> bool(result.reached)
True
"""

from ._pose_solve import PoseSolution, solve_pose
from ._solve import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MIN_IMPROVEMENT,
    DEFAULT_TOLERANCE,
    JUMP_RATIO,
    METHODS,
    WARM_START_BLOCK,
    FramesSolution,
    Solution,
    solve,
    solve_frames,
)
from ._tree_pose_solve import TreePoseSolution, solve_tree_pose
from ._tree_solve import TreeSolution, solve_tree
from .limits import JointLimits
from .tree import Tree
from .validate import FloatArray

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MIN_IMPROVEMENT",
    "DEFAULT_TOLERANCE",
    "JUMP_RATIO",
    "METHODS",
    "WARM_START_BLOCK",
    "FloatArray",
    "FramesSolution",
    "JointLimits",
    "PoseSolution",
    "Solution",
    "Tree",
    "TreePoseSolution",
    "TreeSolution",
    "solve",
    "solve_frames",
    "solve_pose",
    "solve_tree",
    "solve_tree_pose",
]
