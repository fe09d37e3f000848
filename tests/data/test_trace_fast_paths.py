"""The trace import's fast paths give what their general paths give: the depth limit by orjson's write limit, call_records read as bytes for what is kept of it, a task's counts at once."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.data.importers import import_traces, read_trace_sessions
from workbench.data.importers.batch import BadInput
from workbench.data.importers.counts import estimated_counts, estimated_counts_each
from workbench.data.importers.trace_build import _narrowed
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


def _read(value):
    """What the import reads of a parsed call_records (the tool calls and the model's words), or
    the error it meets (a tool-call list that is a number fails as it iterates)."""
    try:
        return cais_tool_calls((1, 1, value), 0), cais_model_words((1, 1, value))
    except Exception as error:  # noqa: BLE001 - the same error either way is what is checked
        return f"{type(error).__name__}: {error}"


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


def _reduced(general):
    """The general value cut to what call_records keeps, by hand: the first record's
    output_text and output_tool_calls, those it has (any other value as it is)."""
    if type(general) is list and all(type(r) is dict for r in general):
        return [{k: general[0][k] for k in ("output_text", "output_tool_calls") if k in general[0]}] if general else []
    return general


def _real_records() -> list[bytes]:
    with sqlite3.connect(REAL_DB) as connection:
        found = connection.execute("SELECT call_records FROM events WHERE event_type = 'cais' ORDER BY id").fetchall()
    return [row[0].encode("utf-8") for row in found]


def _brackets_in_strings(levels: int) -> bytes:
    """A record whose request nests ``levels`` deep below it, each level an object with a string
    full of brackets (the brackets counted far outnumber the levels)."""
    inner = b"1"
    for _ in range(levels):
        inner = b'{"s": "' + b"[{" * 40 + b'", "v": ' + inner + b"}"
    return b'[{"request_params": ' + inner + b', "output_text": "hi"}]'


@pytest.mark.parametrize(
    "text",
    [
        b'[{"output_text": "", "output_tool_calls": [{"name": "interact_many", "arguments_json": "{}"}]}]',
        # an integer past 64 bits where the import keeps it: json's int exactly
        b'[{"output_tool_calls": [{"name": 18446744073709551616, "arguments_json": "{}"}]}]',
        b'[{"output_text": -9223372036854775809}]',
        b'[{"output_text": 2.5, "output_tool_calls": [{"name": "a", "arguments_json": 1e300}]}]',
        b'[{"output_text": 1e999}]',  # json: inf
        b'[{"output_tool_calls": 3}]',  # iterated: a TypeError either way
        b'[{"output_text": "a", "output_text": "b"}, {"output_text": "c"}]',  # a key's last value, as json
        b'[{"output_text": "\\ud83d\\ude00 \\u00e9"}]',
        '[{"output_text": "é"}]'.encode(),
        b'[{"output_text": "\\ud800"}]',  # a lone surrogate: json reads it
        b'[{"metadata": "x"}, 7]',  # not every record an object
        b"18446744073709551616",
        b"1.5",
        b'"a string"',
        b"[]",
        b"{}",
        b"NaN",
        b'[{"output_text": Infinity}]',
        b"[1,]",
        b'[{"a": [1,]}]',
        b'[{"a": 01}]',
        b'[{"a": "\\x"}]',
        b'[{"a": "\\ud800"}]',
        b"not json",
        b"[" * 64 + b"]" * 64,  # as deep as allowed
        b"[" * 65 + b"]" * 65,  # one past
        b'[{"request_params": ' + b'{"a": ' * 70 + b"1" + b"}" * 70 + b"}]",  # deep where nothing is kept
        b'[{"request_params": ' + b'{"a": ' * 62 + b"1" + b"}" * 62 + b"}]",  # 64 levels in all
        b'[{"request_params": ' + b'{"a": ' * 63 + b"1" + b"}" * 63 + b"}]",  # 65
        b'[{"x": 1}, {"request_params": ' + b"[" * 63 + b"]" * 63 + b"}]",  # 65, in the second record
        _brackets_in_strings(62),  # 64 levels, thousands of brackets in strings
        _brackets_in_strings(63),  # 65
        b"[" * 2000 + b"]" * 2000,  # past orjson's own limit (1,024 when it parses)
        b'[{"request_params": ' + b"[" * 5000 + b"]" * 5000 + b"}]",  # past msgspec's (Python's recursion)
    ],
)
def test_call_records_keeps_what_json_value_gives_with_its_problems(text):
    fast, general = _same_or_same_error(text)
    assert fast == _reduced(general) or fast == general or (fast != fast and general != general)
    assert type(fast) is type(general)
    if not (isinstance(general, str) and general.startswith("error")):
        assert _read(fast) == _read(general)


def test_call_records_of_the_real_database_keep_what_json_value_gives():
    texts = _real_records()
    assert texts  # the fixture's cais events, each ~10 KB
    for text in texts:
        fast, general = _same_or_same_error(text)
        assert fast == _reduced(general)
        assert list(fast[0]) == ["output_text", "output_tool_calls"]  # the real server writes both
        assert _read(fast) == _read(general)


def _random_record(rng: random.Random, levels: int) -> dict:
    """A call record with random fields, its request nested ``2 * levels`` below it, strings
    with brackets at each level."""
    request: object = _random_value(rng, 3)
    for _ in range(levels):
        request = {"messages": [request, "[{[{"], "n": 1}
    return {"request_params": request, "output_text": rng.choice(["hi", "[{", ""]), "usage": _random_value(rng, 4)}


def test_call_records_depth_limit_is_json_values_on_random_records():
    rng = random.Random(7)
    deep = shallow = 0
    for _ in range(300):
        records = [_random_record(rng, rng.randint(0, 34)) for _ in range(rng.randint(1, 3))]
        text = json.dumps(records).encode()
        levels = jsonsafe.depth(records, 10_000)  # the walk over the parsed value
        fast, general = _same_or_same_error(text)
        if levels > 64:
            deep += 1
            assert fast == general == "error: decision 1 cais event call_records: JSON nested deeper than 64 levels"
        else:
            shallow += 1
            assert fast == _reduced(general)
    assert deep > 50 and shallow > 50  # both sides of the limit were tried


def test_only_what_is_kept_is_built():
    # the request (its long seed too) and the second record are checked, never built: the
    # first record's output_text and output_tool_calls are, as json reads them
    text = (
        b'[{"request_params": {"seed": 18446744073709551617}, "output_text": "hi", '
        b'"output_tool_calls": [{"name": "interact_many", "arguments_json": "{\\"actions\\": [\\"do\\"]}"}]}, '
        b'{"output_text": "later"}]'
    )
    fast = call_records(text, None, "here")
    assert fast == [
        {
            "output_text": "hi",
            "output_tool_calls": [{"name": "interact_many", "arguments_json": '{"actions": ["do"]}'}],
        }
    ]
    row_fast, row_general = (1, 1, fast), (1, 1, json.loads(text))
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


def test_a_tasks_arrays_narrowed_only_when_every_value_fits():
    fits = np.array([[0, 5], [2**31 - 1, -(2**31)]], dtype=np.int64)  # int32's own bounds
    narrowed = _narrowed(fits)
    assert narrowed.dtype == np.int32 and np.array_equal(narrowed, fits)
    for past in (2**31, -(2**31) - 1):  # one past either bound: kept, for the episode to name it
        wide = np.array([[0, past]], dtype=np.int64)
        assert _narrowed(wide) is wide


def test_a_tasks_episodes_are_each_sessions_own():
    # the real database's sessions read at once, each episode equal to the one its session makes alone
    batch = read_trace_sessions(REAL_DB)
    assert batch.episodes and not batch.errors
    alone = {
        e.id: e
        for e in (
            read_trace_sessions(REAL_DB, skip={o.id for o in batch.episodes if o.id != e.id}).episodes[0]
            for e in batch.episodes
        )
    }
    for episode in batch.episodes:
        other = alone[episode.id]
        for name in ("inventory", "achievement_counts", "achievement_status", "player_pos", "env_reward"):
            assert np.array_equal(getattr(episode, name), getattr(other, name))
        assert episode.inventory.dtype == np.int32 and episode.achievement_counts.dtype == np.int32


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        # the second decision's state says a health that is no integer
        (
            "system_state_before",
            {"text": "Step: 1/100\nHealth: x\nInventory: empty\nAchievements: none\n"},
            "decision 2.system_state_before: Health: 'x' is not an integer in 0..2147483647",
        ),
        (
            "system_state_before",
            ["not", "an object"],
            "decision 2.system_state_before: neither a raw observation (with 'inventory') nor a text observation "
            "(with 'text')",
        ),
        (
            "system_state_after",
            {"inventory": {"wood": -1}},
            "decision 2.system_state_after: inventory.wood: -1 is outside 0..2147483647",
        ),
    ],
)
def test_a_bad_state_is_named_by_its_decision_and_column(tmp_path, column, value, expected):
    db = tmp_path / "synth_ai.db"
    with sqlite3.connect(REAL_DB) as source, sqlite3.connect(db) as target:
        source.backup(target)
        # the second decision of the first session: its environment event (and the copy of it)
        sid, turn = target.execute(
            "SELECT t.session_id, t.id FROM session_timesteps t WHERE t.turn_number = 1 ORDER BY t.id LIMIT 1"
        ).fetchone()
        target.execute(
            f"UPDATE events SET {column} = ? WHERE timestep_id = ? AND event_type = 'environment'",
            (json.dumps(value), turn),
        )
        if column == "system_state_after":  # made the session's last decision: its later rows gone
            target.execute("DELETE FROM events WHERE session_id = ? AND timestep_id > ?", (sid, turn))
            target.execute("DELETE FROM session_timesteps WHERE session_id = ? AND id > ?", (sid, turn))
    result = import_traces(db, progress=False)
    (error,) = [e for e in result.errors if e.location == f"session {sid}"]
    assert error.message == expected
