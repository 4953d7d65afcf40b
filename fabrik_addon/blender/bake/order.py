"""The chains of a bake grouped into units (``units``: the chains of one armature sharing bones make one
tree), and the units' order. A chain whose root hangs below a bone another unit turns (an arm below a spine
chain) is solved after that unit, in the same walk through the frames, from where the unit's solution puts
that bone, so the bake gives what baking the upper chains first and the lower ones in a second bake gives.

Each unit's place in the order and the bone it hangs from are found once (``solve_order``); solving moves each
lower chain's root frame by how its upper unit moved that bone (``moved_inputs``, with the unit's
``inputs.Motion``). A chain may hang below a chain that stretches only if it is baked apart: the stretched
bone's scale would carry it, non-uniformly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ...setting_names import named
from ...settings import SolverSettings
from ..rig import armature_data, groups_sharing
from .inputs import Inputs
from .unit import PreparedChain, Solved, Unit


def groups(chains: Sequence[PreparedChain]) -> list[list[int]]:
    """The chains grouped by the bones they share (on one armature): each group is solved as one unit."""
    return groups_sharing([[(c.chain.armature, name) for name in c.chain.bone_names] for c in chains])


def units(chains: Sequence[PreparedChain], solver: SolverSettings) -> list[Unit]:
    """Every unit of ``chains``, in the order of their first chains (see ``Unit.of``)."""
    return [Unit.of(chains, group, solver) for group in groups(chains)]


@dataclass(frozen=True)
class Hang:
    """A chain of a unit hanging below a bone another unit turns.

    Attributes
    ----------
    chain : int
        The chain's place in its unit.
    upper : int
        The unit that turns the bone, by its place in the units.
    bone : str
        The nearest bone above the chain's root that the upper unit turns.
    """

    chain: int
    upper: int
    bone: str


#: The units in the order they are solved, each with what it hangs below: (unit's place, its hangs).
Order = list[tuple[int, tuple[Hang, ...]]]


def solve_order(units: Sequence[Unit]) -> Order:
    """Every unit after the units it hangs below (the others in their own order).

    Raises
    ------
    ValueError
        For a chain below a bone of a chain that stretches, naming both.
    """
    turned = {(unit.armature, name): u for u, unit in enumerate(units) for name in unit.bone_names}
    hangs: list[tuple[Hang, ...]] = []
    for u, unit in enumerate(units):
        found = []
        for j, prepared in enumerate(unit.chains):
            bone = armature_data(unit.armature).bones[prepared.chain.bone_names[0]].parent
            while bone is not None and turned.get((unit.armature, bone.name), u) == u:
                bone = bone.parent
            if bone is None:
                continue
            upper = turned[(unit.armature, bone.name)]
            if units[upper].stretch:
                raise ValueError(
                    f"the chain {prepared.label} hangs below the bone '{bone.name}' of the chain "
                    f"{units[upper].chains[0].label}, which stretches ({named('use_stretch')} is on): its scale would "
                    "carry the chain below; bake them apart, the stretching one first"
                )
            found.append(Hang(j, upper, bone.name))
        hangs.append(tuple(found))
    order: Order = []
    placed: set[int] = set()
    while len(order) < len(units):  # each round places every unit whose upper units are placed
        ready = [u for u in range(len(units)) if u not in placed and all(h.upper in placed for h in hangs[u])]
        assert ready, "a unit hangs below a bone of a unit below it: bones make a tree, so none can"
        order += [(u, hangs[u]) for u in ready]
        placed.update(ready)
    return order


def moved_inputs(inputs: Sequence[Inputs], hangs: Sequence[Hang], solved: Sequence[Solved | None]) -> list[Inputs]:
    """A unit's chains' inputs (in its ``chains``' order), each chain hanging below a bone that an upper unit
    moved (``solved``, by unit: None where it was not solved) with its root frame moved along."""
    moved = list(inputs)
    for hang in hangs:
        upper = solved[hang.upper]
        if upper is not None:
            carried = moved[hang.chain]
            moved[hang.chain] = replace(carried, root_frames=upper.motion.moved(hang.bone) @ carried.root_frames)
    return moved


def solve_in_order(
    units: Sequence[Unit],
    order: Order,
    inputs: Sequence[Inputs],
    frames: NDArray[np.int64],
    solver: SolverSettings,
    progress: Callable[[int], None] | None = None,
) -> list[Solved]:
    """Solve every unit in ``order`` from what was read of each chain (``inputs``, by the chains' places that
    ``Unit.members`` name), the chains below others from where those others' solutions put them; the solved
    units in their own order."""
    solved: list[Solved | None] = [None] * len(units)
    for u, hangs in order:
        unit = units[u]
        solved[u] = unit.solve(moved_inputs([inputs[i] for i in unit.members], hangs, solved), frames, solver)
        if progress is not None:
            progress(u)
    return [result for result in solved if result is not None]
