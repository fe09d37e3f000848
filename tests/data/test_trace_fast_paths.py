"""The trace import's fast paths give what their general paths give: the depth limit by orjson's write limit, call_records read as bytes without the long-number look, a task's counts at once."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.data.importers import import_traces
from workbench.data.importers.batch import BadInput
from workbench.data.importers.counts import estimated_counts, estimated_counts_each
from workbench.data.importers.trace_columns import cais_model_words, cais_tool_calls, call_records, json_value
from workbench.util import jsonsafe

REPO = Path(__file__).resolve().parents[2]
REAL_DB = REPO / "tests" / "fixtures" / "synth-ai-0.2.24" / "synth_ai.db"


def _nested(levels: int, inner: object) -> object:
    value = inner
    for k in range(levels):
        value = [value] if k % 2 else {"k": value}
    return value


def _random_value(rng: random.Random, depth: int) -> object:
    if depth == 0 or rng.random() < 0.45:  # under one child a list or dict on average: small values
        return rng.choice([1, 2.5, None, "[[{", 'x"]}\\', True])
    if rng.random() < 0.5:
        return [_random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": _random_value(rng, depth - 1) for i in range(rng.randint(0, 3))}


def test_within_depth_is_the_walk():
    rng = random.Random(2)
    values = [_random_value(rng, rng.randint(0, 20)) for _ in range(200)]
    values += [_nested(rng.randint(40, 70), _random_value(rng, 10)) for _ in range(200)]
    # nested to exactly 63-66 levels, the innermost empty or not (an empty list is a level too)
    values += [_nested(n, inner) for n in range(60, 70) for inner in (1, [], {})]
    # orjson cannot write these (an integer past 64 bits, numpy values): the walk answers
    values += [_nested(n, inner) for n in (63, 64, 65) for inner in (2**80, np.int64(3), [np.float32(0.5)])]
    for value in values:
        levels = jsonsafe.depth(value, 10_000)
        for max_depth in (1, 2, 32, 64, 253, 254, 300):
            assert jsonsafe.within_depth(value, max_depth) == (levels <= max_depth), (levels, max_depth)


def test_within_depth_uses_orjsons_own_limit():
    limit = jsonsafe._write_limit()
    assert limit > jsonsafe.MAX_DEPTH
    jsonsafe.orjson.dumps(_nested(limit, 1))  # it writes ``limit`` levels ...
    with pytest.raises(jsonsafe.orjson.JSONEncodeError):
        jsonsafe.orjson.dumps(_nested(limit + 1, 1))  # ... and refuses one more


def _same_or_same_error(text: bytes, where: str = "decision 1 cais event call_records"):
    """call_records' value (or problem) and json_value's (the general path) on ``text``."""
    try:
        fast = call_records(text, None, where)
    except BadInput as error:
        fast = f"error: {error.message}"
    try:
        general = json_value(text.decode("utf-8"), where)
    except BadInput as error:
        general = f"error: {error.message}"
    return fast, general


def _real_records() -> list[bytes]:
    with sqlite3.connect(REAL_DB) as connection:
        found = connection.execute("SELECT call_records FROM events WHERE event_type = 'cais' ORDER BY id").fetchall()
    return [row[0].encode("utf-8") for row in found]


@pytest.mark.parametrize(
    "text",
    [
        b'[{"output_text": "", "output_tool_calls": [{"name": "interact_many", "arguments_json": "{}"}]}]',
        # an integer past 64 bits where the import keeps it: json's int, not orjson's float
        b'[{"output_tool_calls": [{"name": 18446744073709551616, "arguments_json": "{}"}]}]',
        b'[{"output_text": -9223372036854775809}]',
        b'[{"output_text": 2.5, "output_tool_calls": [{"name": "a", "arguments_json": 1e300}]}]',
        b"18446744073709551616",
        b"1.5",
        b'"a string"',
        b"[]",
        b"{}",
        b"NaN",
        b'[{"output_text": Infinity}]',
        b"[1,]",
        b'["\\ud800"]',
        b"not json",
        b"[" * 64 + b"]" * 64,  # as deep as allowed
        b"[" * 65 + b"]" * 65,  # one past
        b'[{"request_params": ' + b'{"a": ' * 70 + b"1" + b"}" * 70 + b"}]",  # deep where nothing is kept
        b"[" * 2000 + b"]" * 2000,  # past orjson's own limit (1,024 when it parses)
    ],
)
def test_call_records_is_json_values_value_and_problem(text):
    fast, general = _same_or_same_error(text)
    assert fast == general or (fast != fast and general != general)
    assert type(fast) is type(general)


def test_call_records_of_the_real_database_are_json_values():
    texts = _real_records()
    assert texts  # the fixture's cais events, each ~10 KB
    for text in texts:
        fast, general = _same_or_same_error(text)
        assert fast == general


def test_an_unkept_long_integer_leaves_what_is_kept_as_json_reads_it():
    # orjson reads the seed as a float (its value differs), but the import keeps only the
    # first record's output_text and output_tool_calls: the calls and the words are json's.
    text = (
        b'[{"request_params": {"seed": 18446744073709551617}, "output_text": "hi", '
        b'"output_tool_calls": [{"name": "interact_many", "arguments_json": "{\\"actions\\": [\\"do\\"]}"}]}]'
    )
    fast = call_records(text, None, "here")
    general = json.loads(text)
    assert isinstance(fast[0]["request_params"]["seed"], float)  # the fast path's own value ...
    row_fast, row_general = (1, 1, fast), (1, 1, general)
    assert (
        cais_tool_calls(row_fast, 0)
        == cais_tool_calls(row_general, 0)
        == [{"function": {"name": "interact_many", "arguments": '{"actions": ["do"]}'}}]
    )
    assert cais_model_words(row_fast) == cais_model_words(row_general) == 'hi\ninteract_many({"actions": ["do"]})'


def test_call_records_not_text_is_kept_as_stored_and_bad_utf8_is_named():
    for other in (None, 7, 2.5, b'[{"output_text": "x"}]'):
        assert call_records(None, other, "here") == other  # as json_value keeps a non-str value
    with pytest.raises(BadInput, match=r"^decision 3 cais event call_records is not UTF-8 text \(byte 2\)$"):
        call_records(b'["\xff"]', None, "decision 3 cais event call_records")


def test_a_session_whose_call_records_are_not_utf8_is_one_error_naming_it(tmp_path):
    db = tmp_path / "synth_ai.db"
    with sqlite3.connect(REAL_DB) as source, sqlite3.connect(db) as target:
        source.backup(target)
        first = target.execute(
            "SELECT e.id, e.session_id FROM events e JOIN session_timesteps t ON t.id = e.timestep_id "
            "WHERE e.event_type = 'cais' ORDER BY e.id LIMIT 1"
        ).fetchone()
        target.execute("UPDATE events SET call_records = CAST(X'5b22ff225d' AS TEXT) WHERE id = ?", (first[0],))
    clean = import_traces(REAL_DB, progress=False)
    result = import_traces(db, progress=False)
    assert len(result.corpus) == len(clean.corpus) - 1  # only that session is lost
    (error,) = [e for e in result.errors if e.location == f"session {first[1]}"]
    assert "cais event call_records is not UTF-8 text (byte 2)" in error.message


def _random_episode(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
    """A random episode's (status, inventory, actions): small inventories that rise and fall
    (placements and makes among the actions), unlocks that stay unlocked."""
    n = int(rng.integers(1, 15))
    inventory = np.cumsum(rng.integers(-2, 3, size=(n + 1, len(INVENTORY_ITEMS))), axis=0).clip(0, 9)
    status = np.maximum.accumulate(rng.random((n + 1, len(ACHIEVEMENTS))) < 0.1, axis=0)
    actions = [list(rng.choice(ACTIONS, size=int(rng.integers(1, 5)))) for _ in range(n)]
    return status, inventory, actions


def test_counts_of_a_task_at_once_are_each_episodes_own():
    rng = np.random.default_rng(5)
    for _ in range(200):
        episodes = [_random_episode(rng) for _ in range(int(rng.integers(1, 8)))]
        each = estimated_counts_each(
            np.concatenate([e[0] for e in episodes]),
            np.concatenate([e[1] for e in episodes]),
            [a for e in episodes for a in e[2]],
            [len(e[2]) for e in episodes],
        )
        assert len(each) == len(episodes)
        for counts, (status, inventory, actions) in zip(each, episodes, strict=True):
            assert np.array_equal(counts, estimated_counts(status, inventory, actions))
            assert counts.dtype == np.int64
