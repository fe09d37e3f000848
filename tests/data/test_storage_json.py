"""``parse_json``: the object fast path gives ``json.loads``'s value, and every other text its named error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.data.storage.rows import parse_json
from workbench.errors import CorpusValueError

PATH = Path("corpus/episodes/part.parquet")


@pytest.mark.parametrize(
    "text",
    ['{"seed": 7, "policy": "scripted"}', ' {"a": [1, 2]}', '{"a": {"b": null}}  \n', "{}", '{"x": "\\u00e9"}'],
)
def test_objects_parse_as_json_loads_does(text: str) -> None:
    assert parse_json(text, PATH, 3, "metadata") == json.loads(text)


@pytest.mark.parametrize("text", ['{"a": 1} x', '{"a": 1}{}', '{"a": [1', '{"a": 1,}', "{not json"])
def test_invalid_text_names_file_row_column_and_json_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(CorpusValueError) as error:
        parse_json(text, PATH, 3, "metadata")
    assert str(error.value) == f"{PATH}: row 3, column 'metadata': not valid JSON ({str(expected.value)[:120]})"


def test_constants_and_surrogates_are_refused_after_the_fast_path() -> None:
    with pytest.raises(CorpusValueError, match=r"row 5, column 'logged': holds NaN; NaN and infinity are not stored"):
        parse_json('{"a": NaN}', PATH, 5, "logged")
    with pytest.raises(CorpusValueError, match=r"row 5, column 'metadata': "):
        parse_json('{"a": "\\ud800"}', PATH, 5, "metadata")
    with pytest.raises(CorpusValueError, match=r"row 5, column 'metadata': JSON nested more than 32 deep"):
        parse_json("{" + '"a": {' * 40 + "}" * 41, PATH, 5, "metadata")
