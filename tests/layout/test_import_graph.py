"""The package's import graph has no circles, counting imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ctxrules"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports, anywhere in the file (a package import counts)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Imports only a type checker runs (`if TYPE_CHECKING:`) are not edges of the import graph.
    typing_only = {
        id(inner)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for inner in ast.walk(block)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found.update(name for name in names if name in modules)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports (packages minus themselves)."""
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(paths)
    graph = {name: _imports(path, modules) - {name} for name, path in paths.items()}
    # A module importing a package only runs its __init__, never a sibling; a package's
    # __init__ importing its own submodules is the normal way a package exports them.
    return {
        name: {m for m in imported if not name.startswith(m + ".")}
        for name, imported in graph.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the list of modules along it, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        stack.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state and (cycle := visit(name)):
            return cycle
    return None


def test_the_package_has_no_import_circle() -> None:
    """No module imports, through any chain, a module that imports it back."""
    assert find_cycle(import_graph()) is None


def test_the_cycle_finder_finds_a_circle() -> None:
    """The finder reports a three-module circle and passes a chain."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_function_level_imports_count() -> None:
    """The graph reads imports inside functions too (the rules/ circle hid in one)."""
    graph = import_graph()
    assert "ctxrules.rules.catalog" in graph["ctxrules.rules.registry"]
    assert "ctxrules.rules.registry" not in graph["ctxrules.rules.catalog"]
