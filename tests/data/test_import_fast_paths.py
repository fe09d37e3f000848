"""The import's fast paths give what their general paths give: JSON text, JSON parsing with a depth limit, the task app's text layout."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from workbench.data.importers.jsonfiles import parse_json
from workbench.data.importers.observations import _any_text, _task_app_text, text_observation
from workbench.data.storage.rows import _walked_text, json_text
from workbench.errors import EpisodeValueError
from workbench.util import jsonsafe

REPO = Path(__file__).resolve().parents[2]
TASKAPP = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "taskapp"


def _text_or_error(function, value):
    try:
        return function(value, "episode 'e'", "logged")
    except EpisodeValueError as error:
        return f"error: {error}"


def _value(rng: random.Random, depth: int):
    """A random JSON-ish value: numbers, strings with brackets, quotes and escapes, numpy scalars."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(
            [
                1,
                -(2**40),
                2.5,
                1e300,
                None,
                True,
                "a",
                'x"]}\\',
                "é",
                "[[[",
                np.int64(7),
                np.float32(0.5),
                np.bool_(True),
            ]
        )
    if rng.random() < 0.5:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["k", "[", '"', "true", "ü"]) + str(i): _value(rng, depth - 1) for i in range(rng.randint(0, 3))}


def test_json_text_is_the_walks_text_or_its_error():
    rng = random.Random(0)
    for _ in range(2000):
        value = _value(rng, rng.randint(0, 40))
        assert _text_or_error(json_text, value) == _text_or_error(_walked_text, value)


@pytest.mark.parametrize(
    "value",
    [
        {"a": float("nan")},
        {"a": [float("inf")]},
        {"s": "\ud800"},
        {"\udc80": 1},
        {True: 1, None: 2, 3: 4, 1.5: 5},
        {"t": (1, 2), "n": np.arange(3), "m": np.array([[1.5, 2.0]])},
        {"x": {1, 2}},
        {"big": 2**80},
        {"emoji": "💥"},
        json.loads("[" * 31 + "1" + "]" * 31),  # 32 deep: the deepest a stored document may be
        json.loads("[" * 32 + "1" + "]" * 32),  # 33: refused
        json.loads("[" * 31 + "[]" + "]" * 31),  # an empty list at depth 32: kept
    ],
)
def test_json_text_edge_cases_match_the_walk(value):
    assert _text_or_error(json_text, value) == _text_or_error(_walked_text, value)


@pytest.mark.parametrize(
    "text",
    [
        "18446744073709551616",
        "-9223372036854775809",
        '{"seed": 1180591620717411303424}',
        "1e400",
        "NaN",
        '"\\ud800"',
        "[1,]",
        "\ufeff{}",
    ],
)
def test_parsing_is_json_loads_where_orjson_would_differ(text):
    parsed = parse_json(text.encode("utf-8"), offset=0)
    try:
        expected = json.loads(text)
    except ValueError as error:  # then both name a problem
        assert type(parsed).__name__ == "BadInput", (text, parsed, error)
        return
    assert parsed == expected or (expected != expected and parsed != parsed)  # NaN is NaN
    assert type(parsed) is type(expected)  # an integer past 64 bits stays an int


def test_jsonsafe_loads_keeps_its_depth_limit_and_values():
    assert jsonsafe.loads("[" * 64 + "]" * 64) == json.loads("[" * 64 + "]" * 64)
    for text in ["[" * 65 + "]" * 65, '{"a": ' * 65 + "1" + "}" * 65, "[" * 100000]:
        with pytest.raises(jsonsafe.JSONDepthError):
            jsonsafe.loads(text)
    rng = random.Random(1)
    for _ in range(500):
        value = json.loads(json.dumps(_value(rng, rng.randint(0, 70)), default=lambda v: v.item()))
        text = json.dumps(value)
        deep = jsonsafe.depth(value, 1000) > jsonsafe.MAX_DEPTH
        if deep:
            with pytest.raises(jsonsafe.JSONDepthError):
                jsonsafe.loads(text)
        else:
            assert jsonsafe.loads(text) == value


def test_the_task_apps_text_layout_reads_as_the_general_parse_reads_it():
    texts = []
    for file in sorted(TASKAPP.glob("*.json")):
        for step in json.loads(file.read_text())["trajectories"][0]["steps"]:
            texts.append(step["obs"]["text"])
    assert len(texts) == 220
    for text in texts:
        fast = _task_app_text(text)
        assert fast is not None and fast == _any_text(text, "here")
    # Off the layout (an unknown item, a repeated one, a blank map row, Windows line ends): the general parse.
    for odd in [
        texts[0].replace("food:", "gold:"),
        texts[0].replace("Inventory: ", "Inventory: wood:1, wood:2, "),
        texts[0].replace("\n\nChoose", "\n \nChoose").replace("View (5x5):\n", "View (5x5):\n\n"),
        texts[0].replace("\n", "\r\n"),
    ]:
        assert _task_app_text(odd) is None
        try:
            expected = _any_text(odd, "here")
        except Exception as error:  # noqa: BLE001 - the same problem, named the same way
            with pytest.raises(type(error), match=str(error)[:20]):
                text_observation(odd, "here")
        else:
            assert text_observation(odd, "here") == expected
