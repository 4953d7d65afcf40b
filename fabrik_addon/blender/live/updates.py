"""What one depsgraph update touched, as the live preview asks it: which data-blocks Blender evaluated anew (an
object moved, and every object that follows it; an armature posed or its rig edited), and whether the
relations between data-blocks changed (a constraint, parent or driver added or removed, an object hidden or
unlinked, a bone renamed, Edit Mode left), after which nothing the preview checked of a rig can be trusted.

Blender lists a relations change as the scene and every data-block of it updated, those the change did not move
with neither their transform, their geometry nor their shading (where a move, a pose or a new material lists one
with one of those). The scene on its own (a new selection, a frame range) is no relations change, nor is an
Action (listed on every frame change).
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy

#: Data-blocks whose flagless update is no relations change: an Action is listed so on every frame change, and
#: the scene for any change of its own properties or selection.
_NOT_RELATIONS = (bpy.types.Action, bpy.types.Scene)


@dataclass(frozen=True)
class Touched:
    """What an update touched.

    Attributes
    ----------
    ids : frozenset of int
        The ``session_uid`` of every original data-block Blender evaluated anew.
    rig : bool
        Whether the update may have edited a rig: a depsgraph update may, a frame change may not.
    relations : bool
        Whether the relations between data-blocks changed (never on a frame change).
    """

    ids: frozenset[int]
    rig: bool
    relations: bool

    @classmethod
    def of(cls, depsgraph: bpy.types.Depsgraph, rig: bool) -> Touched:
        """What ``depsgraph``'s last update touched: a depsgraph update's (``rig``) or a frame change's."""
        ids = set()
        relations = scene = False
        others = 0
        for update in depsgraph.updates:
            data = update.id
            original = None if data is None else data.original
            if original is None:
                continue
            ids.add(original.session_uid)
            if not rig:
                continue
            scene |= isinstance(data, bpy.types.Scene)
            if isinstance(data, _NOT_RELATIONS):
                continue
            others += 1
            if not (update.is_updated_transform or update.is_updated_geometry or update.is_updated_shading):
                relations = True
        return cls(frozenset(ids), rig, relations or (scene and others > 0))

    def any(self, ids: frozenset[int]) -> bool:
        """Whether the update touched any of ``ids`` (``session_uid`` values)."""
        return not self.ids.isdisjoint(ids)
