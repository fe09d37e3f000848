"""A JSON array of objects read for a few fields of its first object: all of it checked as ``jsonsafe.loads`` checks it, only those fields built.

A trace database's ``call_records`` holds ~10 KB a decision (the request, its messages, the
usage), of which the import keeps two fields of the first record. msgspec validates the whole
text (its grammar is ``json``'s, or stricter) while building only the keys and, for each value,
a reference to its bytes (``msgspec.Raw``); the kept values are then parsed alone. The depth
limit is proven on those bytes without building the values (``_fits``).
``checked_decode`` (the look that the text is UTF-8, then msgspec's decode) also serves the
rollout import's reader of a response's fields (``data.importers.rollout_fields``).
"""

from __future__ import annotations

from itertools import compress
from typing import Any

import msgspec

from workbench.util.jsonsafe import MAX_DEPTH, UNSURE, JSONDepthError

__all__ = ["checked_decode", "first_fields"]

_RECORDS = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])
_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_VALUE = msgspec.json.Decoder()
_QUOTE = ord('"')


def first_fields(raw: bytes, keys: tuple[str, ...], *, max_depth: int = MAX_DEPTH) -> Any:
    """``jsonsafe.loads(raw)`` reduced to what a caller keeps of an array of objects:
    ``[{key: value}]`` for each of ``keys`` the first object has (``[]`` for an empty array).

    Every byte of ``raw`` is checked as ``loads`` checks it: UTF-8, JSON (msgspec refuses all
    that ``json`` refuses, and some that it reads: NaN, a lone surrogate), the depth limit; only
    the kept values are built, and they are ``json``'s (integers of any size exact; a float is
    msgspec's reading, which a caller that must have ``json``'s reads again). Anything
    this cannot tell for sure (not an array of objects, not UTF-8, refused by msgspec) is
    ``UNSURE``: the caller asks ``loads``, which reads or names it.

    Args:
        raw: The JSON text as bytes.
        keys: The first object's fields to keep.
        max_depth: The deepest nesting accepted (at least 2: the array and its objects).

    Returns:
        ``[{key: value, ...}]``, ``[]``, or ``UNSURE``.

    Raises:
        JSONDepthError: It nests deeper than ``max_depth`` (as ``loads`` says it).
    """
    if max_depth < 2:
        return UNSURE
    records = checked_decode(_RECORDS, raw)
    if records is UNSURE:
        return UNSURE
    budget = max_depth - 2  # below the array and its object
    longer = (2 * budget + 1).__lt__  # only a value longer than this may nest past the budget
    for record in records:
        values = record.values()
        for value in compress(values, map(longer, map(len, values))):  # a few of ~30, picked in C
            if not _fits(value, budget):
                raise JSONDepthError(f"JSON nested deeper than {max_depth} levels")
    if not records:
        return []
    first = records[0]
    try:
        return [{key: _VALUE.decode(first[key]) for key in keys if key in first}]
    except (msgspec.DecodeError, RecursionError):  # a number out of range: json reads it as inf
        return UNSURE


def checked_decode(decoder: msgspec.json.Decoder[Any], raw: bytes) -> Any:
    """``raw`` decoded by ``decoder``, after a look that it is UTF-8 (msgspec does not look at
    the strings it skips), or ``UNSURE`` where either refuses it (not UTF-8, not JSON, not of
    the decoder's type, nested past msgspec's limit).

    Args:
        decoder: A msgspec JSON decoder of the type wanted.
        raw: The JSON text as bytes.

    Returns:
        The decoded value, or ``UNSURE``.
    """
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return UNSURE
    try:
        return decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return UNSURE


def _fits(raw: msgspec.Raw | bytes, budget: int) -> bool:
    """Whether the valid JSON value ``raw`` nests at most ``budget`` deep, exactly.

    Each level opens and closes a bracket, so ``n`` bytes nest at most ``n // 2`` deep, and no
    deeper than their opening brackets (``[`` and ``{``, those inside strings included): past
    both bounds the value is read one level down (its items as bytes) and each is asked again.
    A string nests 0 deep (msgspec's ``Raw`` starts at the value's first byte)."""
    if len(raw) <= 2 * budget + 1:
        return True
    text = bytes(raw)
    if text[0] == _QUOTE or text.count(b"[") + text.count(b"{") <= budget:
        return True
    if budget <= 0:
        return False  # a list or an object (a scalar has no bracket outside a string)
    stripped = text.lstrip()
    items = _ARRAY.decode(stripped) if stripped[:1] == b"[" else _OBJECT.decode(stripped).values()
    return all(_fits(item, budget - 1) for item in items)
