"""The layer check: the package ``fabrik_addon`` keeps its layers and its faces.

Run from anywhere (``python scripts/tools/check_layers.py``); ``scripts/test`` runs it. It reads the sources (it
imports nothing of the add-on) and fails, naming each place, where:

- a module imports a private name (``_name``) from another module, or a private module from another package;
- a module imports from a module of another package that is not one of its own enclosing packages: across
  packages only a package's face (its ``__init__``) may be imported, and only the names in its ``__all__``;
- modules import each other in a cycle, or packages do (a package importing another's face counts);
- a module is longer than ``MAX_LINES`` lines, or a package holds more than ``MAX_MODULES`` modules.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "fabrik_addon"
MAX_LINES = 400
#: Modules in one package (its ``__init__`` not counted): more is two concepts in one folder.
MAX_MODULES = 12


@dataclass
class Module:
    """One module of the package: its dotted name, its file and what it imports."""

    name: str
    path: Path
    is_package: bool
    lines: int
    #: (line, the module imported from, the names imported) of every import of the package's own code.
    imports: list[tuple[int, str, list[str]]] = field(default_factory=list)
    exported: set[str] | None = None

    @property
    def folder(self) -> str:
        """The package the module belongs to (a package's face belongs to the package itself)."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def read_modules(root: Path = ROOT) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        module = Module(name, path, is_package, len(source.splitlines()))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(module, node)
                if target is not None and (target == PACKAGE or target.startswith(f"{PACKAGE}.")):
                    module.imports.append((node.lineno, target, [alias.name for alias in node.names]))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith(f"{PACKAGE}."):
                        module.imports.append((node.lineno, alias.name, []))
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                module.exported = {
                    elt.value
                    for elt in ast.walk(node.value)
                    if isinstance(elt, ast.Constant) and isinstance(elt.value, str)
                }
        modules[name] = module
    return modules


def _resolve(module: Module, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def problems(modules: dict[str, Module], root: Path = ROOT) -> Iterator[str]:
    module_edges: dict[str, set[str]] = {}
    package_edges: dict[str, set[str]] = {}
    for module in modules.values():
        where = module.path.relative_to(root)
        if module.lines > MAX_LINES:
            yield f"{where}: {module.lines} lines (at most {MAX_LINES}): split it by concept"
        for line, target, names in module.imports:
            face = modules.get(target)
            for name in names:
                imported = modules.get(f"{target}.{name}")
                source = imported or face
                if source is None:
                    continue
                if source.name != module.name:
                    module_edges.setdefault(module.name, set()).add(source.name)
                _package_edge(package_edges, module, source)
                if imported is not None and face is not None:  # a whole module: ``from .. import compat``
                    yield from _check_module_import(module, f"{where}:{line}", face, imported)
                else:
                    yield from _check_import(module, f"{where}:{line}", source, name)
            if not names and face is not None:  # ``import fabrik_addon.x``
                yield from _check_import(module, f"{where}:{line}", face, "")
    folders: dict[str, int] = {}
    for module in modules.values():
        if not module.is_package:
            folders[module.folder] = folders.get(module.folder, 0) + 1
    for folder, count in sorted(folders.items()):
        if count > MAX_MODULES:
            yield f"{folder.replace('.', '/')}/: {count} modules (at most {MAX_MODULES}): two concepts, split it"
    for cycle in _cycles(module_edges):
        yield "module cycle: " + " -> ".join(cycle)
    for cycle in _cycles(package_edges):
        yield "package cycle: " + " -> ".join(cycle)


def _check_import(module: Module, where: str, source: Module, name: str) -> Iterator[str]:
    """A name imported by ``module`` from ``source`` (a module, or a package's face)."""
    if name.startswith("_") and not name.startswith("__") and source.name != module.name:
        yield f"{where} imports the private name {name} from {source.name}"
    yield from _check_private_module(module, where, source)
    if source.folder == module.folder or _encloses(source.folder, module.folder):
        if source.is_package and source.name != module.folder:
            yield from _check_face(where, source, name)
        return
    if not source.is_package:
        yield (
            f"{where} imports {name or source.name} from {source.name}, a module of another package: import it "
            f"from the package's face, {source.folder}"
        )
        return
    yield from _check_face(where, source, name)


def _check_module_import(module: Module, where: str, face: Module, imported: Module) -> Iterator[str]:
    """A whole module ``imported`` taken from the package ``face`` (``from .. import compat``): free within the
    packages that enclose ``module``, else through the face's ``__all__``."""
    yield from _check_private_module(module, where, imported)
    if face.name != module.folder and not _encloses(face.name, module.folder):
        yield from _check_face(where, face, imported.name.rpartition(".")[2])


def _check_private_module(module: Module, where: str, source: Module) -> Iterator[str]:
    private = any(part.startswith("_") and not part.startswith("__") for part in source.name.split("."))
    if private and source.folder != module.folder:
        yield f"{where} imports from the private module {source.name}, outside its package"


def _check_face(where: str, face: Module, name: str) -> Iterator[str]:
    if face.exported is not None and name not in face.exported:
        yield f"{where} imports {name} from {face.name}, which does not list it in __all__"


def _encloses(outer: str, inner: str) -> bool:
    return inner.startswith(f"{outer}.")


def _package_edge(edges: dict[str, set[str]], module: Module, source: Module) -> None:
    """The packages' own dependency: from the package of ``module`` to the one ``source`` belongs to, where neither
    encloses the other (a package uses what its enclosing packages hold, and its face its subpackages)."""
    mine, theirs = module.folder, source.folder
    if mine != theirs and not _encloses(mine, theirs) and not _encloses(theirs, mine):
        edges.setdefault(mine, set()).add(theirs)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each group of nodes that reach each other (a strongly connected component of more
    than one node), found in time linear in the edges (Tarjan's algorithm, then a path around the group)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for after in sorted(edges.get(node, ())):
            if after not in index:
                connect(after)
                low[node] = min(low[node], low[after])
            elif after in on_stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return [_cycle_in(group, edges) for group in groups]


def _cycle_in(group: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A path from the group's first node around back to it, inside the group (breadth first: the shortest)."""
    start, members = group[0], set(group)
    came_from: dict[str, str] = {}
    waiting = [start]
    while waiting:
        node = waiting.pop(0)
        for after in sorted(edges.get(node, set()) & members):
            if after == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if after not in came_from:
                came_from[after] = node
                waiting.append(after)
    return [*group, start]


def main() -> int:
    modules = read_modules()
    found = list(problems(modules))
    for line in found:
        print(line)
    packages = sum(1 for m in modules.values() if m.is_package)
    verdict = "ok" if not found else f"{len(found)} problems"
    print(f"layers: {len(modules)} modules in {packages} packages: {verdict}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
