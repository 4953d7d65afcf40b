"""FABRIK on bones: chains and trees of bones as rigid bodies (rest geometry, forward kinematics and back),
solved on their rotations with Blender's IK limits, poles, stretch and the tip's goal orientation.

``solve_bones`` is the one entry for a chain (points where nothing but the target matters, rotations where
limits, a pole or stretch do); ``solve_pose`` and ``solve_tree_pose`` are the solvers on rotations for a chain
and a tree, which share their attempts (``solver``), their loop (``iterate``) and their per-bone routines
(``core.bone_frames``).

Imports only the public names of ``core`` and ``points``; other packages import only the names below.
"""

from .chain import ChainRest, forward_kinematics, inherited_stretch, local_rotations
from .chain_solve import (
    BENT,
    LENGTHENED,
    RESTART,
    SOLVED,
    STRAIGHTENED,
    TURNED_TO_POLE,
    solve_pose,
)
from .solve import BonesSolution, needs_pose_solve, solve_bones
from .solver import PoseSolution
from .tree import (
    TreeJoints,
    TreeRest,
    solver_tree,
    tree_forward_kinematics,
    tree_inherited_stretch,
    tree_local_rotations,
)
from .tree_solve import TreePoseSolution, solve_tree_pose

__all__ = [
    "BENT",
    "LENGTHENED",
    "RESTART",
    "SOLVED",
    "STRAIGHTENED",
    "TURNED_TO_POLE",
    "BonesSolution",
    "ChainRest",
    "PoseSolution",
    "TreeJoints",
    "TreePoseSolution",
    "TreeRest",
    "forward_kinematics",
    "inherited_stretch",
    "local_rotations",
    "needs_pose_solve",
    "solve_bones",
    "solve_pose",
    "solve_tree_pose",
    "solver_tree",
    "tree_forward_kinematics",
    "tree_inherited_stretch",
    "tree_local_rotations",
]
