"""FABRIK (and CCD, for comparison) on joint positions: the paper's algorithms, for a chain (``solve``,
``solve_frames``) and for a tree with several end effectors (``solve_tree``, the reference solver), with the
iteration loop they share and its warm start in blocks.

Imports only ``core``'s public names; ``bones`` imports only the names below.
"""

from .chain import METHODS, FramesSolution, Solution, solve, solve_frames
from .history import BACK, LEAST_SQUARES, START, TOWARD, Recorder
from .tree import Tree
from .tree_passes import HEAD_WEIGHT
from .tree_solve import TreeReach, TreeSolution, solve_tree, weighted_rms
from .warm_start import JUMP_RATIO, WARM_START_BLOCK

__all__ = [
    "BACK",
    "HEAD_WEIGHT",
    "JUMP_RATIO",
    "LEAST_SQUARES",
    "METHODS",
    "START",
    "TOWARD",
    "WARM_START_BLOCK",
    "FramesSolution",
    "Recorder",
    "Solution",
    "Tree",
    "TreeReach",
    "TreeSolution",
    "solve",
    "solve_frames",
    "solve_tree",
    "weighted_rms",
]
