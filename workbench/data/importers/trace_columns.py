"""Reading a synth-ai trace database's JSON and text columns: depth-limited, and naming what cannot be read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.data.importers.batch import BadInput
from workbench.data.importers.decisions import model_words
from workbench.util import jsonfields, jsonsafe


def session_metadata(raw: Any) -> tuple[dict[str, Any], str | None]:
    """A session's metadata column as an object, and why it cannot be read (None when it can;
    text that is not JSON reads as no metadata, as before)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as error:
        return {}, f"its metadata is not UTF-8 text (byte {error.start})"
    try:
        value = jsonsafe.loads(text) if isinstance(text, str) else text
    except jsonsafe.JSONDepthError as error:
        return {}, f"its metadata cannot be read ({error})"
    except ValueError:
        return {}, None
    return (dict(value) if isinstance(value, Mapping) else {}), None


def json_value(text: Any, where: str) -> Any:
    """A JSON column's value (``BadInput`` naming ``where`` when it is not JSON or nests too deeply)."""
    if not isinstance(text, str):
        return text
    try:
        return jsonsafe.loads(text)
    except jsonsafe.JSONDepthError as error:
        raise BadInput("", f"{where}: {error}") from None
    except ValueError:
        raise BadInput("", f"{where} is not JSON") from None


def call_records(text: bytes | None, other: Any, where: str) -> Any:
    """A ``cais`` event's ``call_records`` column as the import reads it: what it keeps of it
    (``[{"output_text": ..., "output_tool_calls": ...}]``, the first record's fields it has), with
    ``json_value``'s problems, at a fraction of the cost. The column is read as UTF-8 bytes
    (``text``; no decode to ``str`` and encode back) and all of it checked as ``json_value``
    checks it, but only the two fields are built (``jsonfields.first_fields``); when one holds a
    float, or that read cannot tell (not an array of objects, not UTF-8, NaN...), it is read by
    ``json_value`` whole, exactly as before. ``cais_tool_calls`` and ``cais_model_words`` read
    the same from either.

    Args:
        text: The column's bytes when it is TEXT (None when it is not).
        other: The column's value when it is not TEXT (NULL, a number, a BLOB: kept as is).
        where: What to name in a problem.

    Returns:
        What is kept of the parsed value (``other`` when the column is not TEXT).

    Raises:
        BadInput: The column is not UTF-8 text, not JSON, or nests too deeply (naming ``where``).
    """
    if text is None:
        return other
    try:
        value = jsonfields.first_fields(text, _KEPT_FIELDS)
    except jsonsafe.JSONDepthError as error:
        raise BadInput("", f"{where}: {error}") from None
    # a float parsed by msgspec might differ in its last bit from json's: those read by json
    if value is not jsonsafe.UNSURE and not jsonsafe.holds_float(_kept(value)):
        return value
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadInput("", f"{where} is not UTF-8 text (byte {error.start})") from None
    return json_value(decoded, where)


#: What the import reads of a ``call_records``' first record (``cais_tool_calls``, ``cais_model_words``).
_KEPT_FIELDS = ("output_text", "output_tool_calls")


def json_object(text: Any) -> dict[str, Any]:
    """A JSON object column, or {} when it is empty, not an object or nested too deeply."""
    try:
        value = jsonsafe.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    return dict(value) if type(value) is dict or isinstance(value, Mapping) else {}  # dict first: no ABC check


def cais_tool_calls(row: tuple[Any, ...], t: int) -> list[dict[str, Any]]:
    """The model's tool calls in one ``cais`` event (``call_records[0].output_tool_calls``) in
    the OpenAI form the policy parses.

    Args:
        row: The event's row: ``(id, timestep_id, call_records)``.
        t: The decision (0-based), to name in a problem.

    Returns:
        ``{"function": {"name", "arguments"}}`` per output tool call ([] when there is none).

    Raises:
        BadInput: ``call_records`` is not JSON or nests too deeply.
    """
    records = json_value(row[2], f"decision {t + 1} cais event call_records")
    record = _first_record(records)
    return _openai_calls(record)


def cais_model_words(row: tuple[Any, ...] | None) -> str:
    """What the model said in one LLM call event, as the rollout import says it (``model_words``):
    its raw completion when the record kept one, else its text and ``output_tool_calls``.

    Args:
        row: The event's row, ``(id, timestep_id, call_records)``, or None (no event: "").

    Returns:
        The model's words, cut to ``MAX_MESSAGE_CHARS``.

    Raises:
        BadInput: ``call_records`` is not JSON or nests too deeply.
    """
    records = json_value(row[2], "call_records") if row is not None else None
    record = _first_record(records)
    text = record.get("output_text")
    try:
        raw = jsonsafe.loads(text) if isinstance(text, str) else None
    except ValueError:
        raw = None
    if (type(raw) is dict or isinstance(raw, Mapping)) and isinstance(raw.get("choices"), list):
        return model_words(raw)
    message = {
        "content": text or "",
        "tool_calls": _openai_calls(record),
    }
    return model_words({"choices": [{"message": message}]})


def _kept(records: Any) -> list[Any]:
    """What ``cais_tool_calls`` and ``cais_model_words`` read of a parsed ``call_records``: the
    first record's ``output_text``, and its ``output_tool_calls`` when not a list (iterated: a
    float and an int fail differently), else each call's ``name`` and ``arguments_json``."""
    record = _first_record(records)
    calls = record.get("output_tool_calls")
    kept = [record.get("output_text")]
    if type(calls) is not list:
        kept.append(calls)
        return kept
    for call in calls:
        if type(call) is dict or isinstance(call, Mapping):
            kept += (call.get("name"), call.get("arguments_json"))
    return kept


def _first_record(records: Any) -> Mapping[str, Any]:
    """``call_records[0]`` when it is an object, else {} (dict first: a parsed column's objects
    are dicts, and an ABC check costs a Python call per decision)."""
    first = records[0] if isinstance(records, list) and records else None
    return first if type(first) is dict or isinstance(first, Mapping) else {}


def _openai_calls(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A record's ``output_tool_calls`` as ``{"function": {"name", "arguments"}}``, objects only."""
    return [
        {"function": {"name": c.get("name"), "arguments": c.get("arguments_json")}}
        for c in record.get("output_tool_calls") or []
        if type(c) is dict or isinstance(c, Mapping)
    ]
