"""What an animator sees in the 3D viewport's sidebar: the panel (``panel``), the chain list and its operators
(``chain_list``), Bake, Clear and Bake IK Constraints (``operators``), Solve Now, Key Current Frame and Step
Through Iterations (``live_operators``), Plant Feet and Detect Contacts with their panel (``planting``),
Targets from Animation and Apply Layer (``editing``), and what they say (``messages``).

Imports ``live``, ``bake``, ``layer``, ``targets``, ``planting``, ``rig`` and ``properties``; ``addon`` registers
the modules below.
"""

from . import chain_list, editing, live_operators, operators, panel, planting

__all__ = ["chain_list", "editing", "live_operators", "operators", "panel", "planting"]
