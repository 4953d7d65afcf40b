"""FABRIK and CCD inverse kinematics in pure numpy: no ``bpy``, no ``mathutils``.

Positions are in scene units and angles in radians throughout. Three packages, lowest first, each importing
only the public names of those below it:

- ``core``: validation, rotations, Blender's IK limits, chain geometry, rotations stored as rows, stopping rules;
- ``points``: FABRIK (and CCD) on joint positions, the paper's algorithms, for chains (``solve``,
  ``solve_frames``) and trees (``solve_tree``, the reference solver);
- ``bones``: chains and trees of bones solved on their rotations, with limits, poles, stretch and target
  rotation (``solve_bones``, ``solve_pose``, ``solve_tree_pose``), and the kinematics between rotations and
  joints.

The names below are everything the rest of the add-on (and its scripts) use.

>>> from fabrik_addon.solver import solve
>>> result = solve([[0, 0, 0], [0, 0, 1], [0, 0, 2]], target=[1, 0, 1])
>>> bool(result.reached)
True
"""

from .bones import (
    BonesSolution,
    ChainRest,
    PoseSolution,
    TreePoseSolution,
    TreeRest,
    forward_kinematics,
    inherited_stretch,
    local_rotations,
    needs_pose_solve,
    solve_bones,
    solve_pose,
    solve_tree_pose,
    solver_tree,
    tree_forward_kinematics,
    tree_inherited_stretch,
    tree_local_rotations,
)
from .core import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MIN_IMPROVEMENT,
    DEFAULT_TOLERANCE,
    EULER_ORDERS,
    FloatArray,
    JointLimits,
    axis_angle_to_quat,
    cross,
    euler_continuous,
    euler_to_matrix,
    matrix_to_euler,
    matrix_to_quat,
    quat_conjugate,
    quat_multiply,
    quat_normalize,
    quat_to_axis_angle,
    quat_to_matrix,
    sign_continuous,
    soften_reach,
)
from .points import (
    JUMP_RATIO,
    METHODS,
    WARM_START_BLOCK,
    FramesSolution,
    Solution,
    Tree,
    TreeSolution,
    solve,
    solve_frames,
    solve_tree,
)

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MIN_IMPROVEMENT",
    "DEFAULT_TOLERANCE",
    "EULER_ORDERS",
    "JUMP_RATIO",
    "METHODS",
    "WARM_START_BLOCK",
    "BonesSolution",
    "ChainRest",
    "FloatArray",
    "FramesSolution",
    "JointLimits",
    "PoseSolution",
    "Solution",
    "Tree",
    "TreePoseSolution",
    "TreeRest",
    "TreeSolution",
    "axis_angle_to_quat",
    "cross",
    "euler_continuous",
    "euler_to_matrix",
    "forward_kinematics",
    "inherited_stretch",
    "local_rotations",
    "matrix_to_euler",
    "matrix_to_quat",
    "needs_pose_solve",
    "quat_conjugate",
    "quat_multiply",
    "quat_normalize",
    "quat_to_axis_angle",
    "quat_to_matrix",
    "sign_continuous",
    "soften_reach",
    "solve",
    "solve_bones",
    "solve_frames",
    "solve_pose",
    "solve_tree",
    "solve_tree_pose",
    "solver_tree",
    "tree_forward_kinematics",
    "tree_inherited_stretch",
    "tree_local_rotations",
]
