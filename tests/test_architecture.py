"""The package's layout keeps its promises: no import circle, small modules and functions, a
one-line summary atop every module, and nothing loose at the top besides the layer packages.

The import graph is grimp's (installed with import-linter), lazy imports inside functions
and ``if TYPE_CHECKING:`` imports included (such an import never runs, but a circle through it
is still two modules that cannot be understood apart); its circles are found here with Tarjan's
strongly connected components, so the check does not depend on a contract someone has to
remember to extend.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest
from helpers import REPO

from workbench.core.reward import STRATEGY_ALIASES

PACKAGE = REPO / "workbench"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80

#: Functions allowed over ``MAX_FUNCTION_LINES``, each with the reason.
LONG_FUNCTIONS = {
    # A line-for-line mirror of synth-ai's Crafter task-app function: exactness is checked by
    # reading it beside the original, which splitting it into helpers would defeat.
    "workbench.core.reward.compute_stepwise_reward",
}

#: The only modules allowed directly in ``workbench/``; everything else lives in a layer package.
TOP_LEVEL_MODULES = {"__init__", "__main__", "errors", "cluster"}


def _sources() -> list[tuple[str, Path]]:
    """Every module of the package as (dotted name, file), in a stable order."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return found


def strongly_connected_components(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of a directed graph given as node -> successors,
    iterative (no recursion limit). Returns each component of more than one node, or of one node
    with an edge to itself: exactly the import circles, each component sorted."""
    successors = {node: sorted(targets) for node, targets in edges.items()}
    for targets in list(successors.values()):
        for target in targets:
            successors.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in sorted(successors):
        if start in index:
            continue
        work = [(start, iter(successors[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            for target in pending:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(successors[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in successors[node]:
                        circles.append(sorted(component))
    return sorted(circles)


def test_the_circle_finder_finds_circles_and_only_circles():
    # Drawn by hand: a -> b -> c -> a is one circle, d imports itself, e -> a is not in a
    # circle, f -> g -> f is a second; a chain and an isolated node are none.
    edges = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": ["d"], "e": ["a"], "f": ["g"], "g": ["f"], "h": []}
    assert strongly_connected_components(edges) == [["a", "b", "c"], ["d"], ["f", "g"]]
    assert strongly_connected_components({"x": ["y"], "y": ["z"]}) == []
    # Deep chains do not hit a recursion limit.
    chain = {str(i): [str(i + 1)] for i in range(5000)}
    assert strongly_connected_components(chain) == []
    chain["5000"] = ["0"]
    assert strongly_connected_components(chain) == [sorted(str(i) for i in range(5001))]


def _lazy_imports() -> Iterable[tuple[str, str]]:
    """(importer, imported module) for every ``from workbench... import`` or ``import
    workbench...`` inside a function body whose target is a module of the package."""
    modules = {name for name, _ in _sources()}
    for name, path in _sources():
        for _, function in _functions(ast.parse(path.read_text(encoding="utf-8")), name):
            for node in ast.walk(function):
                targets = []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    targets = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
                elif isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                # The most specific module named: ``from a.b import c`` imports a.b.c if that is one.
                found = next((target for target in targets if target in modules), None)
                if found and found != name:
                    yield name, found


def _type_checking_imports() -> Iterable[tuple[str, str]]:
    """(importer, imported module) for every import of a module of the package inside an
    ``if TYPE_CHECKING:`` block."""
    modules = {name for name, _ in _sources()}
    for name, path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                for statement in node.body:
                    if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
                        targets = [f"{statement.module}.{a.name}" for a in statement.names] + [statement.module]
                        found = next((target for target in targets if target in modules), None)
                        if found and found != name:
                            yield name, found


def test_no_import_circle_anywhere_in_the_package():
    graph = grimp.build_graph("workbench", exclude_type_checking_imports=False)
    edges = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    # The graph must see lazy imports: every import inside a function body found by reading the
    # sources is an edge of it (a grimp that stopped reading function bodies fails here).
    lazy = list(_lazy_imports())
    assert lazy, "no function-level import of workbench found to check the graph against"
    missing = [(importer, imported) for importer, imported in lazy if imported not in edges.get(importer, ())]
    assert not missing, f"lazy imports the graph does not see: {missing}"
    # ... and every ``if TYPE_CHECKING:`` import (a grimp that dropped them would hide circles).
    typing_only = list(_type_checking_imports())
    assert typing_only, "no TYPE_CHECKING import of workbench found to check the graph against"
    missing = [(importer, imported) for importer, imported in typing_only if imported not in edges.get(importer, ())]
    assert not missing, f"TYPE_CHECKING imports the graph does not see: {missing}"
    circles = strongly_connected_components(edges)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(circle) for circle in circles)


def test_every_module_is_at_most_400_lines():
    long = {}
    for name, path in _sources():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            long[name] = lines
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def _functions(tree: ast.Module, prefix: str) -> Iterable[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method in ``tree`` (nested ones included) with its dotted name."""
    todo: list[tuple[str, ast.AST]] = [(prefix, tree)]
    while todo:
        scope, node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{scope}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                todo.append((name, child))
            else:
                todo.append((scope, child))


def test_every_function_is_at_most_80_lines():
    long = {}
    allowed_seen = set()
    for name, path in _sources():
        for qualified, function in _functions(ast.parse(path.read_text(encoding="utf-8")), name):
            lines = (function.end_lineno or function.lineno) - function.lineno + 1
            if qualified in LONG_FUNCTIONS:
                allowed_seen.add(qualified)
            elif lines > MAX_FUNCTION_LINES:
                long[qualified] = lines
    assert allowed_seen == LONG_FUNCTIONS, (
        f"allow-listed functions that no longer exist: {LONG_FUNCTIONS - allowed_seen}"
    )
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


@pytest.mark.parametrize(("name", "path"), _sources(), ids=[name for name, _ in _sources()])
def test_every_module_opens_with_a_one_line_summary(name, path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree, clean=False)
    assert docstring, f"{name}: no module docstring"
    lines = docstring.splitlines()
    assert lines[0].strip(), f"{name}: the docstring's first line is blank"
    # One line: the summary ends where the line does (a blank line or the end follows).
    assert len(lines) == 1 or not lines[1].strip(), f"{name}: the summary runs onto a second line"


def test_nothing_loose_at_the_top_of_the_package_besides_the_layers():
    loose = {path.stem for path in PACKAGE.glob("*.py")} - TOP_LEVEL_MODULES
    assert not loose, f"modules at the top of workbench/ that belong in a layer package: {sorted(loose)}"
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert {"util", "core", "data", "scoring", "analysis", "env", "views", "cli"} <= packages


def _strategy_branches(tree: ast.Module) -> list[int]:
    """Lines of ``tree`` that ask a strategy by name: ``effective_strategy``, ``.per_achievement``,
    the names ``PER_ACHIEVEMENT`` / ``CONSISTENT``, or a comparison with a strategy spelling."""
    spellings = set(STRATEGY_ALIASES) | set(STRATEGY_ALIASES.values())
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in {"effective_strategy", "per_achievement"}:
            lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id in {"PER_ACHIEVEMENT", "CONSISTENT"}:
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and o.value in spellings for o in operands):
                lines.append(node.lineno)
    return lines


def test_no_branch_on_the_reward_strategy_outside_core():
    # Every layer asks the config's rule (workbench.core.reward_rule) what it pays; a new strategy
    # or synth-ai release is a new rule in core, not an edit in every file that branched on a name.
    found = {}
    for name, path in _sources():
        if name.startswith("workbench.core"):
            continue
        lines = _strategy_branches(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[name] = lines
    assert not found, f"branches on the strategy's name outside workbench.core (ask config.rule): {found}"
    # The issue's own check: no file of the package outside core names them at all.
    named = [
        str(path.relative_to(REPO))
        for path in sorted(PACKAGE.rglob("*"))
        if path.is_file()
        and path.suffix in {".py", ".md", ".yaml", ".json"}
        and not path.is_relative_to(PACKAGE / "core")
        and any(
            word in path.read_text(encoding="utf-8", errors="replace")
            for word in ("PER_ACHIEVEMENT", "effective_strategy")
        )
    ]
    assert not named, f"files outside workbench/core naming PER_ACHIEVEMENT or effective_strategy: {named}"


def test_the_strategy_check_sees_a_branch():
    branching = ast.parse('if config.effective_strategy == PER_ACHIEVEMENT:\n    pass\nx = s == "complex"\n')
    assert sorted(set(_strategy_branches(branching))) == [1, 3]
    asking = ast.parse("if config.rule.pays_credits:\n    pass\n")
    assert _strategy_branches(asking) == []


def test_the_corpus_storage_is_reached_through_its_package_only():
    # Storage stays behind one small interface (``workbench.data.storage``'s names): no module
    # outside it imports one of its modules, lazily or for typing included.
    graph = grimp.build_graph("workbench", exclude_type_checking_imports=False)
    inner = {m for m in graph.modules if m.startswith("workbench.data.storage.")}
    assert inner, "the storage package has no modules: the check would see nothing"
    reaching_in = sorted(
        (importer, imported)
        for imported in inner
        for importer in graph.find_modules_that_directly_import(imported)
        if importer != "workbench.data.storage" and not importer.startswith("workbench.data.storage.")
    )
    assert not reaching_in, f"modules reaching into the storage package: {reaching_in}"
