"""The chain an animator most likely means by a tip bone, read from the rig's shape (``limb``): the bones up
from the tip that make one limb, the hand to the upper arm, the foot to the thigh, a tentacle to its root, and
why the chain stops where it does."""

from __future__ import annotations

from dataclasses import dataclass

import bpy

from ...words import counted
from .chain import armature_data

#: The most bones a chain suggested for a limb has (one hanging from where bones part): an arm or a leg.
LIMB = 3
#: A child's head this close to its parent's tail (a fraction of the longer bone) is on it, joined or not: rigs
#: imported from motion capture or FBX put their joints there without Blender's Connected flag.
_ON_THE_TAIL = 1e-3


@dataclass(frozen=True)
class Limb:
    """The chain suggested for a tip bone.

    Attributes
    ----------
    bones : tuple of str
        From the tip bone up: ``len(bones)`` is the chain length.
    why : str
        Why it stops there, in words: ``"up to 'upper_arm.L', apart from its parent 'shoulder.L'"``.
    """

    bones: tuple[str, ...]
    why: str

    @property
    def length(self) -> int:
        return len(self.bones)

    def words(self) -> str:
        """What was picked and why: ``"3 bones (hand.L, forearm.L, upper_arm.L): up to 'upper_arm.L', apart from
        its parent 'shoulder.L'"``."""
        return f"{counted(self.length, 'bone')} ({', '.join(self.bones)}): {self.why}"


def limb(armature: bpy.types.Object, tip_bone: str) -> Limb:
    """Compute the chain a user most likely means by ``tip_bone``, given the rig's rest shape: up from the tip
    through each parent that the bone below is joined to (Connected, or its head on the parent's tail) and that
    has no other child; so not past where the hierarchy branches (the chest, where the arms and the neck part)
    nor a gap (the shoulder, apart from the upper arm). A chain that runs so to the root bone is taken whole (a
    tentacle, a tail on its own); one that hangs from where bones part is a limb, of at most ``LIMB`` bones (a
    hand, forearm and upper arm, without the collar bone that motion capture joins to them). Where that leaves
    the tip alone, 2 bones (the tip and its parent: the least chain that bends); a bone without a parent, itself.

    Raises
    ------
    TypeError, KeyError
        For an object that is not an armature, or a bone it does not have.
    """
    bones = armature_data(armature).bones
    bone = bones[tip_bone]
    chain = [bone.name]
    while bone.parent is not None and len(bone.parent.children) == 1 and _joined(bone, bone.parent):
        bone = bone.parent
        chain.append(bone.name)
    parent = bone.parent
    if parent is None:
        return Limb(tuple(chain), "the whole chain, up to the root bone" if len(chain) > 1 else "a root bone, alone")
    others = len(parent.children) - 1
    if others:
        hanging = f"{counted(others, 'other bone')} hang{'s' * (others == 1)} from it"
        up_to = f"up to where the bones part at {parent.name!r} ({hanging})"
        alone = f"{bone.name!r} hangs from {parent.name!r}, where the bones part ({hanging})"
    else:
        up_to = f"up to {bone.name!r}, apart from its parent {parent.name!r}"
        alone = f"{bone.name!r} is apart from its parent {parent.name!r}"
    if len(chain) > LIMB:
        return Limb(tuple(chain[:LIMB]), f"a limb's {LIMB} of the {len(chain)} bones {up_to}")
    if len(chain) > 1:
        return Limb(tuple(chain), up_to)
    return Limb((bone.name, parent.name), f"the least chain that bends: {alone}")


def _joined(bone: bpy.types.Bone, parent: bpy.types.Bone) -> bool:
    """Whether ``bone`` hangs from ``parent``'s tail: Connected, or with its head there."""
    if bone.use_connect:
        return True
    gap = (bone.head_local - parent.tail_local).length
    return bool(gap <= _ON_THE_TAIL * max(bone.length, parent.length))
