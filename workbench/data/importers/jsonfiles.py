"""Reading rollout files: a JSON document, a list of them or JSON Lines, and digging into the result."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from workbench.data.importers.batch import BadInput
from workbench.data.importers.rollout_fields import response_fields
from workbench.util import jsonsafe


def read_responses(file: Path) -> Iterator[tuple[str, Any]]:
    """(location prefix, parsed response or BadInput) for each response in a JSON/JSONL file:
    the fields a rollout import reads (``response_fields``), or where those cannot be read
    exactly, the whole text parsed (``parse_json``)."""
    try:
        data = file.read_bytes()
        data.decode("utf-8")  # the whole file is UTF-8, or none of it is read
    except (OSError, UnicodeDecodeError) as error:
        yield "", BadInput("", f"cannot read ({error})")
        return
    if file.suffix.lower() == ".jsonl":
        # JSON Lines ends a line at "\n" only (a "\r" before it is JSON whitespace):
        # str.splitlines would also split at U+2028, U+0085..., which a JSON string may hold.
        # (Split as bytes: in UTF-8 a 0x0A byte is always a newline.)
        for number, line in enumerate(data.split(b"\n"), start=1):
            stripped = line.strip()  # ASCII whitespace; a line of other whitespace is blank too
            if stripped and (stripped[0] < 0x80 or line.decode("utf-8").strip()):
                yield f"line {number}", _response_or_parsed(line, offset=number - 1)
        return
    document = _response_or_parsed(data, offset=0)
    if isinstance(document, list):
        for i, response in enumerate(document):
            yield f"[{i}]", response
    else:
        yield "", document


def _response_or_parsed(data: bytes, *, offset: int) -> Any:
    fields = response_fields(data)
    return fields if fields is not jsonsafe.UNSURE else parse_json(data, offset=offset)


def parse_json(data: bytes, *, offset: int) -> Any:
    """The parsed JSON of UTF-8 ``data``, or a BadInput naming the file's line (``offset`` =
    lines before ``data``).

    orjson parses (2-3x faster than ``json``); anything it refuses, and any text with a run of
    19 digits (orjson reads an integer past 64 bits as a float: a silently different value), is
    parsed by ``json`` instead, so the result and every error are ``json.loads``'s.
    """
    value = jsonsafe.quick(data)
    if value is not jsonsafe.UNSURE:
        return value
    try:
        return json.loads(
            data.decode("utf-8")
        )  # NaN and Infinity parse (Python's json), then fail the field checks by name
    except json.JSONDecodeError as error:
        line = error.lineno + offset
        return BadInput(f"line {line}", f"not valid JSON ({error.msg} at column {error.colno}); truncated file?")
    except RecursionError:
        return BadInput(f"line {offset + 1}", "JSON nested too deeply to read")
    except ValueError as error:  # an integer of thousands of digits (Python's int() limit)
        return BadInput(f"line {offset + 1}", f"not valid JSON ({str(error)[:120]})")


def join_path(*parts: str) -> str:
    """The non-empty location parts joined with commas (``line 3, trajectories[0]``)."""
    return ", ".join(p for p in parts if p)


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object, else an empty one (odd field types read as absent)."""
    return value if type(value) is dict or isinstance(value, Mapping) else {}  # dict first: no ABC check


def dig(value: Any, *keys: str | int) -> Any:
    """``value[k1][k2]...`` (an int key indexes a list), or None as soon as a level is missing."""
    for key in keys:
        if isinstance(key, int):
            value = value[key] if isinstance(value, list) and -len(value) <= key < len(value) else None
        elif type(value) is dict or isinstance(value, Mapping):  # a parsed file's objects are dicts
            value = value.get(key)
        else:
            return None
    return value
