"""jsonfields.first_fields reads nothing that json refuses: every malformed value, wherever it sits, is left to json."""

from __future__ import annotations

import json

import pytest
from helpers.json_cases import VALUES

from workbench.util import jsonfields, jsonsafe


def _json(text: bytes):
    try:
        return jsonsafe.loads(text.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return "refused"


@pytest.mark.parametrize("value", VALUES)
def test_a_value_json_refuses_is_never_read(value):
    for text in (
        b'[{"k": ' + value + b"}]",  # an unkept field
        b'[{"k": [' + value + b"]}]",  # inside an unkept list
        b'[{"k": {"x": ' + value + b"}}]",  # inside an unkept object
        b'[{"output_text": ' + value + b"}]",  # a kept field
        b'[{"output_text": "hi"}, {"k": ' + value + b"}]",  # a later record
        value + b'[{"output_text": "hi"}]',  # before the document (a BOM, whitespace, junk)
        b'[{"output_text": "hi"}]' + value,  # after it
    ):
        general = _json(text)
        fast = jsonfields.first_fields(text, ("output_text",))
        if general == "refused":
            assert fast is jsonsafe.UNSURE, text
        elif fast is not jsonsafe.UNSURE:  # what it reads is json's, the first record's kept field
            first = general[0]
            assert fast == [{"output_text": first["output_text"]} if "output_text" in first else {}], text
            assert json.dumps(fast) == json.dumps([{k: v for k, v in first.items() if k == "output_text"}])
