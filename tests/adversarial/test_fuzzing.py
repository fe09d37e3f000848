"""Fuzzing: any input gives a result or a WorkbenchError, never a traceback."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from helpers.episodes import make_episode
from helpers.hostile import put, raw_obs, rollout, saved_sample, text_obs
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.importers import import_rollouts
from workbench.data.importers.observations import text_observation  # noqa: E402
from workbench.errors import WorkbenchError

_FIELDS = ["Step", "Health", "Position", "Inventory", "Achievements", "Local Map View (5x5)"]
_VALUES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "inf",
            "nan",
            "1e30",
            "-0",
            "8.7",
            "99999999999999999999",
            "9" * 5000,
            "[3, 4]",
            "(1 2)",
            "wood:1, stone:2",
            "wood:",
            ":3",
            "empty",
            "none",
            "collect_wood, eat_cow",
            "0/10000",
        ]
    ),
)
_LINES = st.lists(st.tuples(st.sampled_from(_FIELDS), _VALUES).map(lambda kv: f"{kv[0]}: {kv[1]}"), max_size=8)
_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_FUZZ
@given(lines=_LINES, noise=st.text(max_size=40))
def test_fuzz_text_observation(lines, noise):
    text = "\n".join(lines) + "\n" + noise
    try:
        observed = text_observation(text, "fuzz")
    except WorkbenchError:
        return
    assert all(0 <= v <= 2**31 - 1 for v in observed.state["inventory"].values())


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@_FUZZ
@given(
    path=st.lists(
        st.sampled_from(
            [
                "trajectories",
                0,
                "steps",
                1,
                "obs",
                "inventory",
                "wood",
                "done",
                "reward",
                "tool_calls",
                "final",
                "observation",
                "text",
                "achievements_status",
            ]
        ),
        min_size=1,
        max_size=6,
    ),
    value=_JSON,
)
def test_fuzz_rollout_reader(tmp_path_factory, path, value):
    document = json.loads(json.dumps(rollout("f", [raw_obs(), text_obs(1), raw_obs()])))
    put(document, path, value)
    file = tmp_path_factory.mktemp("fuzz") / "r.json"
    file.write_text(json.dumps(document, allow_nan=True))
    result = import_rollouts(file, progress=False)  # never raises
    for episode in result.corpus:
        assert np.isfinite(episode.env_reward).all() and (episode.inventory >= 0).all()


@_FUZZ
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.lists(
            st.tuples(
                st.sampled_from(
                    [
                        "enabled",
                        "mode",
                        "strategy",
                        "indicator_lambda",
                        "step_beta",
                        "weights",
                        "k_limits",
                        "weights.collect_wood",
                        "k_limits.collect_wood",
                    ]
                ),
                st.sampled_from(
                    [
                        "true",
                        "1e308",
                        "1.0e3",
                        "-inf",
                        "nan",
                        "[[[[",
                        "{a = 1}",
                        "'x'",
                        "3",
                        "1" + "0" * 30,
                        "9" * 5000,
                        "",
                        '"1.5"',
                    ]
                ),
            ),
            max_size=6,
        ).map(lambda kvs: "\n".join(f"{k} = {v}" for k, v in kvs)),
    ),
    suffix=st.sampled_from([".yaml", ".toml"]),
)
def test_fuzz_config_readers(tmp_path_factory, text, suffix):
    path = tmp_path_factory.mktemp("cfg") / f"c{suffix}"
    path.write_text(text if suffix == ".toml" else text.replace(" = ", ": "))
    try:
        config = RewardConfig.from_file(path)
    except WorkbenchError:
        return
    assert all(abs(w) <= 1e9 for w in config.weights.values())


@pytest.mark.storage_contract
@_FUZZ
@given(value=_JSON, key=st.sampled_from(["format", "schema_version", "layout", "tables", "extra"]))
def test_fuzz_corpus_index_reader(tmp_path_factory, value, key):
    from workbench.data.storage import load_corpus

    root = saved_sample(tmp_path_factory.mktemp("idx"))
    document = json.loads((root / "corpus.json").read_text())
    document[key] = value
    (root / "corpus.json").write_text(json.dumps(document))
    try:
        corpus = load_corpus(root)
        [episode.n_decisions for episode in corpus]
    except WorkbenchError:
        pass


def _arrow_values(kind: pa.DataType) -> st.SearchStrategy:
    """Any value an Arrow column of ``kind`` can hold (null included)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_boolean(kind):
        base = st.booleans()
    elif pa.types.is_integer(kind):
        bits = kind.bit_width
        signed = pa.types.is_signed_integer(kind)
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
        base = st.one_of(st.integers(low, high), st.sampled_from([low, high, 0, -1 if signed else 1]))
    elif pa.types.is_floating(kind):
        base = st.floats(allow_nan=True, allow_infinity=True)
    elif pa.types.is_list(kind):
        base = st.lists(_arrow_values(kind.value_type), max_size=4)
    else:  # strings: JSON-ish text, achievement-like names, odd characters
        base = st.one_of(
            st.text(max_size=40),
            _JSON.map(lambda v: json.dumps(v, allow_nan=True)),
            st.sampled_from(["{}", "null", "[]", '{"seed": 1}', "collect_wood", "observed", "[" * 50]),
        )
    return st.one_of(st.none(), base)


def _fuzzed_column(table: str) -> st.SearchStrategy:
    from workbench.data.storage.schema import DECISION_SCHEMA, EPISODE_SCHEMA

    schema = EPISODE_SCHEMA if table == "episodes" else DECISION_SCHEMA
    return st.sampled_from([field for field in schema if field.name != "episode" or table == "episodes"]).flatmap(
        lambda field: st.tuples(st.just(field.name), st.integers(0, 3), _arrow_values(field.type))
    )


def _nullable(field: pa.Field) -> pa.Field:
    if pa.types.is_list(field.type):
        return pa.field(field.name, pa.list_(pa.field("item", field.type.value_type, nullable=True)))
    return field.with_nullable(True)


def _read_everything(root) -> None:
    """Open ``root`` and touch everything a user can: the index, every episode's values,
    metadata, logged data and frames, and the whole state columns."""
    from workbench.data.storage import load_corpus

    corpus = load_corpus(root)
    index = corpus.index
    assert np.isfinite(index["env_return"].to_numpy(dtype=float)).all()
    assert (index["steps"] >= index["decisions"]).all() and (index["decisions"] >= 1).all()
    for position in range(len(corpus)):
        episode = corpus[position]
        assert isinstance(episode.metadata, dict)
        assert (episode.inventory >= 0).all() and (episode.inventory <= 9).all()
        assert np.isfinite(episode.env_reward).all()
        if episode.has_frames:
            episode.frames  # noqa: B018 - read and checked
    corpus.decision_arrays()


@pytest.mark.storage_contract
@_FUZZ
@given(table=st.sampled_from(["episodes", "decisions"]), data=st.data())
def test_fuzz_corpus_table_values(tmp_path_factory, table, data):
    """Any value in any column and row of a part's tables: a WorkbenchError, or values in range."""
    import pyarrow.parquet as pq

    from workbench.data.storage import save_corpus

    root = tmp_path_factory.mktemp("tables") / "c"
    save_corpus(Corpus([make_episode("a", frames=True), make_episode("b", seed=2)]), root)
    column, row, value = data.draw(_fuzzed_column(table))
    (path,) = (root / table).glob("*.parquet")
    stored = pq.read_table(path)
    rows = stored.to_pylist()
    rows[row % len(rows)][column] = value
    # nullable, so a null can be written too (tables written before the required columns were)
    schema = pa.schema([_nullable(field) for field in stored.schema])
    try:
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return  # not a value the column's type can hold: no file can carry it
    try:
        _read_everything(root)
    except WorkbenchError:
        pass
