"""JSON from a user's file parsed with a depth limit: junk nested 100,000 deep is a named error, never a RecursionError."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "JSONDepthError", "loads"]

#: The deepest nesting accepted: a task app's documents (rollouts, trace rows) nest about ten
#: levels; a stored episode's metadata may nest 32 (``workbench.data.storage.rows``).
MAX_DEPTH = 64


class JSONDepthError(ValueError):
    """A JSON document nested deeper than the limit (a ``ValueError``, as ``json``'s own errors)."""


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, refusing a document nested deeper than ``max_depth``.

    Raises:
        json.JSONDecodeError: the text is not JSON.
        JSONDepthError: it nests deeper than ``max_depth`` (also when Python's parser itself
            runs out of recursion, so no ``RecursionError`` escapes).
        ValueError: an integer too long for Python's ``int`` limit.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONDepthError(f"JSON nested deeper than {max_depth} levels") from None
    if depth(value, max_depth) > max_depth:
        raise JSONDepthError(f"JSON nested deeper than {max_depth} levels")
    return value


def depth(value: Any, stop: int) -> int:
    """How deep ``value``'s lists and dicts nest (a scalar is 0), counted without recursion and
    only up to ``stop + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        level += 1
        deepest = max(deepest, level)
        if deepest > stop:
            return deepest
        stack.extend((child, level) for child in children)
    return deepest
