"""The package uses its dependencies' public API only: no private module, name or attribute.

A release may remove a private name overnight (tomlkit 0.15.3 removed ``Container._insert_after``
and broke the TOML export on a fresh install), so none is used. Read from the sources (AST):

- an import of a private module (``pyarrow._parquet``) or of a private name from another
  package (``from tomlkit.container import _x``);
- an attribute ``obj._name``, read or written, where ``_name`` is defined nowhere in the
  package (no function, class, assignment, ``self._name = ...``, argument or import of that
  name): such an attribute can only belong to another package's object. Attributes of standard-library modules
  (``os._exit``) are the language's, documented, and allowed.

``ALLOWED`` lists the exceptions, each with where and why.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

from helpers import REPO

PACKAGE = REPO / "workbench"

#: (file, function) -> the private attributes it may read, and why.
ALLOWED = {
    # crafter.Env.reset() returns the image alone; crafter has no public accessor for the player
    # or the semantic map before the first step's info (the synth-ai task app reads the same two);
    # crafter is pinned exactly (==1.8.3, its last release).
    ("workbench/data/policies/base.py", "crafter_player"): {"_player"},
    ("workbench/data/policies/base.py", "crafter_semantic"): {"_sem_view"},
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def defined_names(trees: Iterable[ast.AST]) -> set[str]:
    """Every name the sources define or bind: functions, classes, stores, arguments, imports."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if _root(node.value) in ("self", "cls"):  # x._a = ... on another object defines nothing
                    names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
    return names


def _stdlib_module_names(tree: ast.AST) -> set[str]:
    """Local names bound to standard-library modules by ``import x`` / ``import x as y``."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in sys.stdlib_module_names:
                    bound.add(alias.asname or alias.name.split(".")[0])
    return bound


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _enclosing_functions(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node of ``tree`` -> the name of the innermost function around it ("" at module level)."""
    owner: dict[ast.AST, str] = {}
    todo: list[tuple[ast.AST, str]] = [(tree, "")]
    while todo:
        node, function = todo.pop()
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            owner[child] = inner
            todo.append((child, inner))
    return owner


def private_uses(tree: ast.AST, own: str, defined: set[str]) -> list[tuple[int, str, str]]:
    """(line, function, what) for each private module, name or attribute of another package in ``tree``.

    ``own`` is the package's name (its private modules are its own business); ``defined`` the
    names the package defines (``defined_names``).
    """
    stdlib = _stdlib_module_names(tree)
    owner = _enclosing_functions(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                top = module.split(".")[0]
                if top not in (own, "__future__", "") and any(_private(part) for part in module.split(".")):
                    found.append((node.lineno, owner.get(node, ""), f"private module {module}"))
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] != own:
                for alias in node.names:
                    if _private(alias.name):
                        found.append((node.lineno, owner.get(node, ""), f"private name {node.module}.{alias.name}"))
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            if node.attr not in defined and _root(node.value) not in stdlib:
                found.append((node.lineno, owner.get(node, ""), f"private attribute .{node.attr}"))
    return sorted(found)


def test_the_checker_finds_private_api_of_other_packages_only():
    source = """
import os
import argparse
import pyarrow as pa
from pyarrow._parquet import ParquetReader
from tomlkit.container import _helper
from workbench._private import mine

class Ours:
    def __init__(self):
        self._cache = {}

def f(body, env):
    os._exit(0)
    argparse._SubParsersAction
    body._insert_after("a", "b", 1)
    Ours()._cache
    pa.lib._internal
    env._seed = 3
    return env.__class__
"""
    tree = ast.parse(source)
    found = private_uses(tree, "workbench", defined_names([tree]))
    assert [(line, what) for line, _, what in found] == [
        (5, "private module pyarrow._parquet"),
        (6, "private name tomlkit.container._helper"),
        (16, "private attribute ._insert_after"),
        (18, "private attribute ._internal"),
        (19, "private attribute ._seed"),
    ]
    assert {function for line, function, _ in found if line > 6} == {"f"}


def test_the_package_uses_no_private_api_of_its_dependencies():
    files = sorted(PACKAGE.rglob("*.py"))
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in files}
    defined = defined_names(trees.values())
    problems = []
    allowed_seen = set()
    for path, tree in trees.items():
        relative = str(path.relative_to(REPO))
        for line, function, what in private_uses(tree, "workbench", defined):
            allowed = ALLOWED.get((relative, function), set())
            if what.startswith("private attribute") and what.removeprefix("private attribute .") in allowed:
                allowed_seen.add((relative, function))
                continue
            problems.append(f"{relative}:{line} ({function or 'module'}): {what}")
    assert not problems, "private API of a dependency used:\n" + "\n".join(problems)
    assert allowed_seen == set(ALLOWED), f"allowed uses that no longer exist: {set(ALLOWED) - allowed_seen}"


def test_the_allowed_exceptions_are_in_files_that_exist():
    for file, _ in ALLOWED:
        assert Path(REPO / file).is_file(), file
