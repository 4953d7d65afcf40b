"""What objects and bones depend on: their parents, the targets of their constraints and drivers, and what
those depend on in turn. A goal that must not follow a chain, and a sandbox that must hold what the chains
need, both walk these links.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import bpy


@dataclass(frozen=True)
class Node:
    """An object, or one of its bones: what a goal can follow."""

    obj: bpy.types.Object
    bone: str

    def words(self) -> str:
        return f"the bone '{self.bone}' of '{self.obj.name}'" if self.bone else f"'{self.obj.name}'"


def closure(starts: Iterable[Node], *, all_links: bool = False) -> Iterator[Node]:
    """Every node the ``starts`` depend on, themselves included, each once; with ``all_links``, also through
    constraints turned off (one may be turned on on another frame) and a bone's B-Bone handles (a constraint
    may read its B-Bone shape)."""
    reached = dict.fromkeys(starts)
    waiting = list(reached)
    while waiting:
        node = waiting.pop()
        yield node
        for _, after in _leads(node, all_links):
            if after not in reached:
                reached[after] = None
                waiting.append(after)


def path_to(start: Node, is_end: Callable[[Node], bool], home: bpy.types.Object) -> str | None:
    """How ``start`` depends on a node for which ``is_end`` holds, in words (the first way found: "is parented
    to 'Carrier', which has a driver reading the bone 'hand'"; bones of ``home`` go without its name), or
    None if it does not."""
    reached: dict[Node, tuple[Node, str] | None] = {start: None}
    waiting = [start]
    while waiting:
        node = waiting.pop()
        if is_end(node):
            return _describe(node, reached, home)
        for verb, after in _leads(node):
            if after not in reached:
                reached[after] = (node, verb)
                waiting.append(after)
    return None


def _describe(end: Node, reached: dict[Node, tuple[Node, str] | None], home: bpy.types.Object) -> str:
    steps: list[str] = []
    node = end
    while (link := reached[node]) is not None:
        before, verb = link
        named = f"the bone '{node.bone}'" if node.obj == home and node.bone else node.words()
        steps.append(f"{verb} {named}")
        node = before
    return ", which ".join(reversed(steps))


def _leads(node: Node, all_links: bool = False) -> Iterator[tuple[str, Node]]:
    """What ``node`` follows, each with the verb that says how: parents, constraint targets, driver targets."""
    obj = node.obj
    if node.bone:
        pose = obj.pose
        assert pose is not None
        pose_bone: bpy.types.PoseBone | None = pose.bones.get(node.bone)
        if pose_bone is None:
            return
        if pose_bone.parent is not None:
            yield "is a child of", Node(obj, pose_bone.parent.name)
        yield from _constraint_leads(pose_bone.constraints, all_links)
        yield from _driver_leads(obj, pose_bone.path_from_id())
        data = pose_bone.bone
        for handle in (data.bbone_custom_handle_start, data.bbone_custom_handle_end) if all_links else ():
            if handle is not None:
                yield "has the B-Bone handle", Node(obj, handle.name)
        yield "belongs to", Node(obj, "")
        return
    parent: bpy.types.Object | None = obj.parent
    if parent is not None:
        bone = obj.parent_bone if obj.parent_type == "BONE" and parent.type == "ARMATURE" else ""
        yield "is parented to", Node(parent, bone)
    yield from _constraint_leads(obj.constraints, all_links)
    yield from _driver_leads(obj, "")


def _constraint_leads(
    constraints: bpy.types.bpy_prop_collection[bpy.types.Constraint], muted: bool = False
) -> Iterator[tuple[str, Node]]:
    for constraint in constraints:
        if not constraint.enabled and not muted:
            continue
        targets = getattr(constraint, "targets", None)  # the Armature constraint has several
        pairs = (
            [(t.target, t.subtarget) for t in targets]
            if targets is not None
            else [(getattr(constraint, "target", None), getattr(constraint, "subtarget", ""))]
        )
        pole = getattr(constraint, "pole_target", None)
        if pole is not None:
            pairs.append((pole, getattr(constraint, "pole_subtarget", "")))
        if "CUSTOM" in (getattr(constraint, "owner_space", ""), getattr(constraint, "target_space", "")):
            pairs.append((getattr(constraint, "space_object", None), getattr(constraint, "space_subtarget", "")))
        for target, subtarget in pairs:
            if isinstance(target, bpy.types.Object):
                bone = subtarget if target.type == "ARMATURE" and subtarget else ""
                yield f"has the constraint '{constraint.name}' on", Node(target, bone)


def _driver_leads(obj: bpy.types.Object, prefix: str) -> Iterator[tuple[str, Node]]:
    """The objects and bones read by ``obj``'s drivers of the properties of ``prefix`` (a pose bone's path: its
    channels and its custom properties), or of the object itself ("")."""
    anim = obj.animation_data
    if anim is None:
        return
    for fcurve in anim.drivers:
        path = fcurve.data_path
        if prefix and not (path.startswith(prefix) and path[len(prefix) : len(prefix) + 1] in (".", "[")):
            continue
        if not prefix and path.startswith("pose.bones["):
            continue
        driver = fcurve.driver
        for variable in driver.variables if driver is not None else ():
            for target in variable.targets:
                source = target.id
                if not isinstance(source, bpy.types.Object):
                    continue
                bone = target.bone_target or bone_in_path(target.data_path)
                yield "has a driver reading", Node(source, bone if source.type == "ARMATURE" else "")


def bone_in_path(data_path: str) -> str:
    """The bone a data path such as ``pose.bones["hand"].location`` reads, or ""."""
    if not data_path.startswith('pose.bones["'):
        return ""
    return data_path[len('pose.bones["') :].split('"]', 1)[0].replace('\\"', '"').replace("\\\\", "\\")
