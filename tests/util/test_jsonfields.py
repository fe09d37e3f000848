"""jsonfields.first_fields reads nothing that json refuses: every malformed value, wherever it sits, is left to json."""

from __future__ import annotations

import json

import pytest

from workbench.util import jsonfields, jsonsafe

#: Values json refuses, and edge cases it reads (each is compared, not assumed).
VALUES = [
    b"01",
    b"1.",
    b".5",
    b"-",
    b"+1",
    b"1e",
    b"1e+",
    b"\x0c1",
    b'"\t"',
    b'"\n"',
    b'"\x1f"',
    b'"\x7f"',
    b"[1 2]",
    b'{"b" 1}',
    b'{"b": 1,}',
    b"{1: 1}",
    b"tru",
    b"True",
    b"nul",
    b'"\\u12"',
    b'"\\u12g4"',
    b"'a'",
    b"-01",
    b"1.5e",
    b"0x10",
    b"Infinity",
    b"-Infinity",
    b"NaN",
    b'"\\/"',
    b'"x\\ud800"',
    b'"\\udc00\\ud800"',
    b"[",
    b"{]",
    b'"\\u0000"',
    b"-0",
    b"0e0",
    b"1E5",
    b"1.0E-5",
    b'"\\\\"',
    b'"\\""',
    b"[,]",
    b"[1,,2]",
    b"{,}",
    b'{"a":1,,"b":2}',
    b'"\\a"',
    b'"\\U0041"',
    b'"abc',
    b"[1]]",
    b'{"a"}',
    b'{"a":}',
    b"1_000",
    b"00",
    b"-0.0e-0",
    b"2.",
    b"1e5.5",
    b'"\\u00e9"',
    '"é"'.encode(),
    b"\x00",
    b'"\x00"',
    b" 1",
    b"1 ",
    b"\xa01",
    b"nulll",
    b"truee",
    b"[true false]",
    b'{"a" : 1 "b": 2}',
    b'"\\uD800\\uDC00"',
    b"1e-400",
    b"--1",
    b"1-",
    b"[1e]",
    b"[-]",
    b'"\xff"',
    b"1e999",
    b"18446744073709551616",
    b"\xef\xbb\xbf",  # a UTF-8 byte order mark
    b" \n\r\t",
    b"",
]


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
