"""Reading a synth-ai trace database's JSON and text columns: depth-limited, and naming what cannot be read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.data.importers.batch import BadInput
from workbench.util import jsonsafe


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


def json_object(text: Any) -> dict[str, Any]:
    """A JSON object column, or {} when it is empty, not an object or nested too deeply."""
    try:
        value = jsonsafe.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}
