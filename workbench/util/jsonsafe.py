"""JSON from a user's file parsed with a depth limit: junk nested 100,000 deep is a named error, never a RecursionError.

Parsing is orjson's where it gives exactly ``json.loads``'s value (``quick``; 2-3x faster), and
the depth is bounded by the text's opening brackets or, past that, by orjson's own limit on what it
writes (``within_depth``), not by a walk over the parsed value.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import orjson

__all__ = [
    "MAX_DEPTH",
    "UNSURE",
    "JSONDepthError",
    "holds_float",
    "holds_long_number",
    "loads",
    "may_nest_past",
    "quick",
    "within_depth",
]

#: The deepest nesting accepted: a task app's documents (rollouts, trace rows) nest about ten
#: levels; a stored episode's metadata may nest 32 (``workbench.data.storage.rows``).
MAX_DEPTH = 64


class JSONDepthError(ValueError):
    """A JSON document nested deeper than the limit (a ``ValueError``, as ``json``'s own errors)."""


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, refusing a document nested deeper than ``max_depth``.

    Args:
        text: The JSON text (bytes: any encoding ``json.loads`` detects).
        max_depth: The deepest nesting accepted.

    Returns:
        The parsed value, exactly ``json.loads``'s (NaN and Infinity included).

    Raises:
        json.JSONDecodeError: the text is not JSON.
        JSONDepthError: it nests deeper than ``max_depth`` (also when Python's parser itself
            runs out of recursion, so no ``RecursionError`` escapes).
        ValueError: an integer too long for Python's ``int`` limit.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else b""
    # one pass serves both looks at the text: its digits as "0" (``quick``'s long numbers) and
    # "{" as "[" (the opening brackets counted at once)
    marked = raw.translate(_MARKED)
    value = _quick(raw, marked) if isinstance(text, str) else UNSURE
    if value is not UNSURE:
        # No deeper than its opening brackets: most documents need no look at their nesting.
        if marked.count(b"[") > max_depth and not within_depth(value, max_depth):
            raise JSONDepthError(f"JSON nested deeper than {max_depth} levels")
        return value
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONDepthError(f"JSON nested deeper than {max_depth} levels") from None
    if depth(value, max_depth) > max_depth:
        raise JSONDepthError(f"JSON nested deeper than {max_depth} levels")
    return value


#: What ``quick`` returns when orjson cannot give ``json.loads``'s value for sure.
UNSURE: Any = object()
#: Every ASCII digit as "0", so that one ``find`` spots a run of 19 digits (2**63 has 19).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
#: ``_DIGITS_AS_ZERO`` with "{" as "[" too: ``loads`` counts both opening brackets in one pass.
_MARKED = bytes.maketrans(b"123456789{", b"000000000[")


def quick(raw: bytes) -> Any:
    """``json.loads(raw)``'s value parsed by orjson, or ``UNSURE`` when orjson refuses ``raw``
    (NaN, Infinity, an overflowing float, a lone surrogate, not UTF-8, nesting past 1,024: what
    ``json`` reads its own way or names) or it holds a run of 19 digits (orjson reads an integer
    past 64 bits as a float, a silently different value); then the caller asks ``json``.

    Args:
        raw: UTF-8 JSON text.

    Returns:
        The value, or ``UNSURE``.
    """
    return _quick(raw, raw.translate(_DIGITS_AS_ZERO))


def holds_long_number(raw: bytes) -> bool:
    """Whether ``raw`` holds a run of 19 digits, so its caller asks ``json``: orjson reads an
    integer past 64 bits as a float (a silently different value), and msgspec skips an unbuilt
    integer of more than 4,300 digits that ``json`` refuses (Python's ``int`` limit).

    Args:
        raw: JSON text.

    Returns:
        True when such a run is in it (in a string too: the look is at the bytes).
    """
    return raw.translate(_DIGITS_AS_ZERO).find(_LONG_NUMBER) >= 0


def _quick(raw: bytes, zeroed: bytes) -> Any:
    """``quick`` given ``raw`` with its digits as "0" (``zeroed``)."""
    if zeroed.find(_LONG_NUMBER) >= 0:
        return UNSURE
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return UNSURE


#: orjson's options for ``may_nest_past``: indented (a line's indent is its nesting), any key and
#: numpy values written rather than refused.
_INDENTED = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def holds_float(value: Any) -> bool:
    """Whether ``value`` is, or holds at any depth, a float (a caller that parsed it another way
    than ``json`` reads such a value by ``json``; a parsed value nests at most ``MAX_DEPTH``).

    Args:
        value: A parsed JSON value.

    Returns:
        True when a float is in it.
    """
    if type(value) is float:
        return True
    if type(value) is dict:
        return any(holds_float(v) for v in value.values())
    if type(value) is list:
        return any(holds_float(v) for v in value)
    return False


def within_depth(value: Any, max_depth: int) -> bool:
    """Whether ``value``'s lists and dicts nest at most ``max_depth`` deep (the outermost is 1).

    orjson refuses to write a value nested deeper than its limit (254 in orjson 3.x; measured once,
    ``_write_limit``). Put ``value`` inside ``limit - max_depth`` lists and ask orjson to write
    that, unindented: it refuses exactly when ``value`` nests past ``max_depth``. One C-level
    write (~0.6 ns a byte), where an indented write and a look for a deep indent took ~3x that and
    a walk in Python over every value (``depth``) ~20x. A value orjson cannot write for another
    reason (an integer past 64 bits, an odd type), or a ``max_depth`` not below orjson's limit,
    is walked (``depth``).

    Args:
        value: A parsed JSON value.
        max_depth: The deepest nesting accepted.

    Returns:
        True when ``value`` nests at most ``max_depth`` deep.
    """
    chains = getattr(_CHAINS, "by_depth", None)
    if chains is None:
        chains = _CHAINS.by_depth = {}
    found = chains.get(max_depth)
    if found is None:
        found = chains[max_depth] = _chain(_write_limit() - max_depth)
    outer, slot = found
    if slot is None:  # orjson cannot write that deep: walk
        return depth(value, max_depth) <= max_depth
    slot.append(value)
    try:
        orjson.dumps(outer)
    except orjson.JSONEncodeError:  # too deep, or not orjson's to write: the walk says which
        return depth(value, max_depth) <= max_depth
    finally:
        slot.clear()
    return True


#: Per thread (a chain is filled and emptied around one write), per ``max_depth``: the lists
#: ``within_depth`` puts a value in.
_CHAINS = threading.local()
_LIMIT: list[int] = []


def _write_limit() -> int:
    """The deepest nesting orjson writes (measured once: nested empty lists, a binary search),
    or 0 when it writes 4,096 levels (no limit to use: ``within_depth`` walks)."""
    if not _LIMIT:
        low, high = 0, 4096  # it writes ``low`` levels and refuses ``high``
        if _writes(high):
            high = low = 0
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if _writes(middle) else (low, middle)
        _LIMIT.append(low)
    return _LIMIT[0]


def _writes(levels: int) -> bool:
    """Whether orjson writes ``levels`` nested empty lists."""
    try:
        orjson.dumps(_chain(levels)[0])
    except orjson.JSONEncodeError:
        return False
    return True


def _chain(levels: int) -> tuple[list[Any], list[Any] | None]:
    """``levels`` nested lists, the outermost and the innermost (None, None when ``levels`` < 1)."""
    if levels < 1:
        return [], None
    slot: list[Any] = []
    outer = slot
    for _ in range(levels - 1):
        outer = [outer]
    return outer, slot


def may_nest_past(value: Any, levels: int) -> bool:
    """False when no list or object of ``value`` at nesting ``levels`` (the outermost is 1) holds
    anything, so nothing in it is deeper; True when one may (then count with ``depth``).

    orjson writes ``value`` indented by 2 spaces a level, so a line indented ``2 * levels`` is
    the child of a container at nesting ``levels``; one ``find`` looks for it (a walk in Python
    over every value, ``depth``, took 12 of 51 s of a trace import). A value orjson cannot
    write (an integer past 64 bits, an odd type, nesting past 255) answers True.

    Args:
        value: A parsed JSON value (numpy values allowed).
        levels: The nesting to look past.

    Returns:
        Whether ``value`` may hold something nested deeper than ``levels``.
    """
    try:
        text = orjson.dumps(value, option=_INDENTED)
    except orjson.JSONEncodeError:
        return True
    return text.find(b"\n" + b" " * (2 * levels)) >= 0


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
