"""Every module of the package opens with a docstring, and every public function, class and
method has one (what it does, returns and raises is for the reader to judge; none may be blank)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
import textwrap
from functools import cached_property

from helpers import REPO

import workbench
from workbench.errors import WorkbenchError

#: Modules that run something on import (the CLI's entry point).
SKIPPED = {"workbench.__main__"}


def public_objects():
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name in SKIPPED:
            continue
        module = importlib.import_module(info.name)
        yield info.name, "<module>", module
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield info.name, name, obj
            if inspect.isclass(obj):
                for attribute, member in vars(obj).items():
                    if attribute.startswith("_"):
                        continue
                    if isinstance(member, property):
                        member = member.fget
                    elif isinstance(member, cached_property):
                        member = member.func
                    elif isinstance(member, (classmethod, staticmethod)):
                        member = member.__func__
                    if inspect.isfunction(member):
                        yield info.name, f"{name}.{attribute}", member


def test_every_public_thing_has_a_docstring():
    missing = [f"{module}: {name}" for module, name, obj in public_objects() if not (obj.__doc__ or "").strip()]
    assert not missing, "no docstring:\n" + "\n".join(missing)


# --- Google-style sections on the public API -------------------------------------------------
#
# The public API is what ``workbench/__init__.py`` and each subpackage's ``__init__.py`` export
# (``__all__``, else their public names), the modules the API reference renders (``::: name`` in
# docs/api), and the public methods of the classes among them. The views and the command line are
# left out: the views document their own widgets, and the CLI's reference is its ``--help``.

#: Section titles as Google style (and mkdocstrings' parser) spells them, by the name used here.
SECTION_TITLES = {
    "Args": "Args",
    "Arguments": "Args",
    "Parameters": "Args",
    "Attributes": "Attributes",
    "Returns": "Returns",
    "Return": "Returns",
    "Yields": "Yields",
    "Yield": "Yields",
    "Raises": "Raises",
    "Raise": "Raises",
    "Examples": "Examples",
    "Example": "Examples",
    "Note": "Note",
    "Notes": "Note",
    "Warns": "Warns",
    "Warning": "Warning",
    "Warnings": "Warning",
    "Other Parameters": "Other Parameters",
}
SECTION_LINE = re.compile(r"^(" + "|".join(SECTION_TITLES) + r")\s*:\s*$")
ENTRY_NAME = re.compile(r"^\**([A-Za-z_][\w.]*)\s*(\([^)]*\))?\s*:")
#: Outside the API's reach: the views (their own docstring rules), the CLI, test-only code.
OUT_OF_SCOPE = ("workbench.views", "workbench.cli", "workbench.__main__")
#: Return annotations that mean a generator: documented under Yields.
GENERATOR_RETURNS = re.compile(r"^(typing\.|collections\.abc\.)?(Iterator|Generator|Iterable)\b")


def sections(docstring: str) -> dict[str, list[str]]:
    """The Google-style sections of ``docstring`` and each one's entries (the names before the
    colon of each entry line; the whole line for a section whose entries are not named)."""
    found: dict[str, list[str]] = {}
    current = None
    indent = None
    for line in inspect.cleandoc(docstring).splitlines():
        title = SECTION_LINE.match(line)
        if title:
            current, indent = SECTION_TITLES[title.group(1)], None
            found.setdefault(current, [])
            continue
        if current is None or not line.strip():
            continue
        lead = len(line) - len(line.lstrip())
        if lead == 0:
            current = None
            continue
        if indent is None:
            indent = lead
        if lead == indent:
            entry = ENTRY_NAME.match(line.strip())
            found[current].append(entry.group(1) if entry else line.strip())
    return found


def _function_node(function) -> ast.FunctionDef | ast.AsyncFunctionDef:
    source = textwrap.dedent(inspect.getsource(function))
    node = ast.parse(source).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)), function
    return node


def _own_nodes(function_node):
    """The nodes of a function's body, nested functions, lambdas and classes left out."""
    todo = list(function_node.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _resolve(expression: ast.expr, namespace: dict):
    """The object a (dotted) name in ``namespace`` refers to, or None."""
    if isinstance(expression, ast.Name):
        return namespace.get(expression.id)
    if isinstance(expression, ast.Attribute):
        owner = _resolve(expression.value, namespace)
        return getattr(owner, expression.attr, None) if owner is not None else None
    return None


def _workbench_error(made) -> type | None:
    """The ``WorkbenchError`` class ``made`` is, or returns (a helper annotated to return one)."""
    if inspect.isclass(made):
        return made if issubclass(made, WorkbenchError) else None
    if inspect.isfunction(made):
        annotation = made.__annotations__.get("return")
        returned = (
            _resolve(ast.parse(annotation, mode="eval").body, made.__globals__)
            if isinstance(annotation, str)
            else annotation
        )
        return returned if inspect.isclass(returned) and issubclass(returned, WorkbenchError) else None
    return None


def raised_errors(function) -> set[str]:
    """The names of the ``WorkbenchError`` classes a ``raise`` in ``function``'s own body raises."""
    function = inspect.unwrap(function)
    raised = set()
    for node in _own_nodes(_function_node(function)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            made = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            error = _workbench_error(_resolve(made, function.__globals__))
            if error is not None:
                raised.add(error.__name__)
    return raised


def _parameters(obj) -> list[str]:
    names = []
    for parameter in inspect.signature(obj).parameters.values():
        if parameter.name in {"self", "cls"}:
            continue
        names.append(parameter.name)
    return names


def _returns_something(function) -> bool:
    annotation = inspect.signature(function).return_annotation
    return annotation not in {inspect.Signature.empty, None, "None", "NoReturn", "typing.NoReturn"}


def docstring_problems(obj, *, is_property: bool = False) -> list[str]:
    """What ``obj``'s docstring lacks: an Args entry for each parameter (Attributes for a class),
    Returns (or Yields for a generator) when it returns something, Raises naming each
    ``WorkbenchError`` its body raises; and entries naming parameters it does not have."""
    doc = sections(obj.__doc__ or "")
    problems = []
    if inspect.isclass(obj):
        if issubclass(obj, BaseException) or getattr(obj, "_is_protocol", False):
            return []
        documented = set(doc.get("Args", [])) | set(doc.get("Attributes", []))
        missing = [name for name in _parameters(obj) if name not in documented and not name.startswith("_")]
        return [f"constructor parameter {name} not under Args or Attributes" for name in missing]
    parameters = _parameters(obj)
    documented = doc.get("Args", [])
    problems += [f"parameter {name} not under Args" for name in parameters if name not in documented]
    problems += [f"Args names {name}, not a parameter" for name in documented if name not in parameters]
    if not is_property and _returns_something(obj):
        annotation = str(inspect.signature(obj).return_annotation)
        wanted = (
            "Yields"
            if inspect.isgeneratorfunction(inspect.unwrap(obj)) and GENERATOR_RETURNS.match(annotation)
            else "Returns"
        )
        if not doc.get(wanted):
            problems.append(f"returns {annotation} but has no {wanted} section")
    listed = " ".join(doc.get("Raises", []))
    problems += [
        f"raises {error} but Raises does not name it"
        for error in sorted(raised_errors(obj))
        if not re.search(rf"\b{error}\b", listed)
    ]
    return problems


def _api_modules() -> list[str]:
    """The packages' ``__init__`` modules and the modules docs/api renders, in scope."""
    names = {"workbench"}
    names |= {info.name for info in pkgutil.walk_packages(workbench.__path__, "workbench.") if info.ispkg}
    for page in sorted((REPO / "docs" / "api").glob("*.md")):
        names |= set(re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), flags=re.MULTILINE))
    return sorted(name for name in names if not name.startswith(OUT_OF_SCOPE))


def api_objects():
    """(qualified name, object, is a property) for every function, class and public method of
    the public API, each once."""
    seen = set()
    for module_name in _api_modules():
        module = importlib.import_module(module_name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            exported = [
                name
                for name, obj in vars(module).items()
                if not name.startswith("_") and getattr(obj, "__module__", None) == module_name
            ]
        for name in exported:
            obj = getattr(module, name)
            home = getattr(obj, "__module__", "") or ""
            if (
                not (inspect.isfunction(obj) or inspect.isclass(obj))
                or not home.startswith("workbench")
                or home.startswith(OUT_OF_SCOPE)
            ):
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{home}.{obj.__qualname__}", obj, False
            if inspect.isclass(obj):
                for attribute, member in vars(obj).items():
                    is_property = isinstance(member, (property, cached_property))
                    if attribute.startswith("_"):
                        continue
                    if isinstance(member, property):
                        member = member.fget
                    elif isinstance(member, cached_property):
                        member = member.func
                    elif isinstance(member, (classmethod, staticmethod)):
                        member = member.__func__
                    if inspect.isfunction(member):
                        yield f"{home}.{obj.__qualname__}.{attribute}", member, is_property


def test_the_public_api_has_google_style_args_returns_and_raises():
    problems = [
        f"{name}: {problem}"
        for name, obj, is_property in api_objects()
        for problem in docstring_problems(obj, is_property=is_property)
    ]
    assert not problems, f"{len(problems)} docstring gaps:\n" + "\n".join(problems)


HAND_WRITTEN = '''
"""A module with one well documented function and class, and badly documented ones."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from workbench.errors import ConfigError, WorkbenchError


def _bad_key(key: str) -> ConfigError:
    return ConfigError(f"bad key {key}")


def good(path: str, *names: str, strict: bool = False) -> int:
    """Count names.

    Args:
        path (str): The file.
        *names: The names.
        strict: Refuse unknown names.

    Returns:
        How many.

    Raises:
        ConfigError: A name is unknown.
        WorkbenchError: No name at all.
    """
    if not names:
        raise WorkbenchError("no name")
    if strict:
        raise _bad_key(names[0])
    return len(names)


def good_generator(count: int) -> Iterator[int]:
    """Count up.

    Args:
        count: How far.

    Yields:
        Each number.
    """

    def inner():
        raise ConfigError("never documented: a nested function's raise is its own")

    yield from range(count)


def bad(path: str, strict: bool) -> int:
    """Count names, but the sections lie.

    Args:
        path: The file.
        colour: Not a parameter.

    Raises:
        ValueError: Not the error raised.
    """
    if strict:
        raise _bad_key(path)
    return 1


def bad_generator(count: int) -> Iterator[int]:
    """Count up.

    Args:
        count: How far.

    Returns:
        The wrong section for a generator.
    """
    yield from range(count)


@dataclass
class Good:
    """A result.

    Attributes:
        size: How big.
    """

    size: int


@dataclass
class Bad:
    """A result whose fields go unexplained."""

    size: int
'''


def test_the_checker_passes_good_docstrings_and_names_what_bad_ones_lack(tmp_path, monkeypatch):
    path = tmp_path / "hand_written.py"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("hand_written", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "hand_written", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    assert sections(module.good.__doc__) == {
        "Args": ["path", "names", "strict"],
        "Returns": ["How many."],
        "Raises": ["ConfigError", "WorkbenchError"],
    }
    assert raised_errors(module.good) == {"ConfigError", "WorkbenchError"}
    assert docstring_problems(module.good) == []
    assert docstring_problems(module.good_generator) == []
    assert docstring_problems(module.Good) == []
    assert docstring_problems(module.bad) == [
        "parameter strict not under Args",
        "Args names colour, not a parameter",
        "returns int but has no Returns section",
        "raises ConfigError but Raises does not name it",
    ]
    assert docstring_problems(module.bad_generator) == ["returns Iterator[int] but has no Yields section"]
    assert docstring_problems(module.Bad) == ["constructor parameter size not under Args or Attributes"]
