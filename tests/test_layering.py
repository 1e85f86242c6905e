"""The engine's stage layering: no module imports a stage above its own, and no modules import each other in a cycle.

The stages, lowest first, are the packages of ``interpreter`` (each package's docstring says what it owns).
Imports inside functions count as much as those at the top: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "interpreter"

STAGES = ["errors", "reading", "model", "analysis", "runtime", "loading", "compiling", "api", "odds", "tools",
          "sweep", "lsp", "web", "cli", "__main__"]
"""Each top-level name of ``interpreter`` in pipeline order; a module may import only its own stage or lower ones."""

UNRANKED = {"__init__"}
"""``interpreter/__init__.py`` holds only the version; anything may import it."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, source: str | None = None) -> set[str]:
    """Every ``interpreter`` module the file imports (or would, holding ``source``), as absolute dotted names."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source, str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "interpreter")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "interpreter":
                continue
            for alias in node.names:  # `from pkg import module` imports the module
                sub = f"{target}.{alias.name}"
                found.add(sub if _exists(sub) else target)
    return found


def _exists(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").exists() or (PACKAGE / rel / "__init__.py").exists()


def _stage(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _edges(name: str) -> frozenset[str]:
    """The modules ``name`` imports, read when a test first asks (not at collection, which every pytest-xdist
    worker does: parsing every module there cost each worker over a second for tests only one of them runs)."""
    return frozenset(_imports(MODULES[name]) - {name})


def test_every_top_level_name_has_a_stage():
    names = {_stage(m) for m in MODULES}
    assert names - set(STAGES) - UNRANKED == set(), "add the new package to STAGES in its pipeline place"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_stage_above_it(module):
    mine = _stage(module)
    if mine in UNRANKED:
        return
    above = sorted(t for t in _edges(module) if _stage(t) not in UNRANKED
                   and STAGES.index(_stage(t)) > STAGES.index(mine))
    assert above == [], f"{module} (stage {mine}) imports {above}, which sit above it"


def test_no_import_cycles():
    """Tarjan's strongly connected components over the module graph: every component is a single module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(_edges(v) if v in MODULES else ()):
            if w not in MODULES:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    assert cycles == []


def test_a_planted_lazy_upward_import_is_seen():
    """The walk reads imports inside functions and resolves relative ones (so the test above can fail)."""
    values = PACKAGE / "model" / "values.py"
    planted = values.read_text() + "\n\ndef _planted():\n    from ..compiling import compiler\n"
    assert "interpreter.compiling.compiler" in _imports(values, planted)
    assert "interpreter.compiling.compiler" not in _imports(values)
