"""The two tables of a part: decisions (a row per state) and episodes (a row per episode), as Arrow.

Decisions: ``episode`` (string, dictionary-encoded), ``decision`` (int32; 0 = the state after
reset, which has no actions, reward 0 and done false), ``inventory_<item>`` (uint8, 16 columns
in Crafter's order), ``count_<achievement>`` (uint16, 22), ``status_<achievement>`` (bool, 22),
``pos_x`` / ``pos_y`` (int16, -1 = unknown), ``actions`` (list of uint8 Crafter action ids, in
``workbench.core.crafter_facts.ACTIONS`` order), ``env_reward`` (float64), ``done`` (bool), and in parts of
text rollouts ``view`` / ``message`` / ``calls`` (string, null where the episode has none;
``calls`` is each decision's tool calls as JSON text, absent in parts written before it).

Episodes: the ``Corpus.index`` columns plus ``metadata`` and ``logged`` (JSON text),
``has_views``, ``has_messages``, ``frames_group`` (row group in the part's frames table, -1 =
none) and ``replaces`` (true when written with ``overwrite=True`` over an episode of an
earlier part).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import DecisionArrays

INVENTORY_COLUMNS = tuple(f"inventory_{item}" for item in INVENTORY_ITEMS)
COUNT_COLUMNS = tuple(f"count_{name}" for name in ACHIEVEMENTS)
STATUS_COLUMNS = tuple(f"status_{name}" for name in ACHIEVEMENTS)
POS_COLUMNS = ("pos_x", "pos_y")
#: (DecisionArrays field, its columns, Arrow type) of the 2-D state arrays.
STATE_GROUPS = (
    ("inventory", INVENTORY_COLUMNS, pa.uint8()),
    ("achievement_counts", COUNT_COLUMNS, pa.uint16()),
    ("achievement_status", STATUS_COLUMNS, pa.bool_()),
    ("player_pos", POS_COLUMNS, pa.int16()),
)
#: Every decisions column but the text ones is required (no nulls): Parquet then stores no
#: definition levels, and a read decodes ~40% faster (measured: 119 against 208 ms for 1M rows).
#: Tables written nullable (before this) read the same.
DECISION_SCHEMA = pa.schema(
    [
        pa.field(name, kind, nullable=False)
        for name, kind in [("episode", pa.dictionary(pa.int32(), pa.string())), ("decision", pa.int32())]
        + [(column, kind) for _, columns, kind in STATE_GROUPS for column in columns]
        + [
            ("actions", pa.list_(pa.field("item", pa.uint8(), nullable=False))),
            ("env_reward", pa.float64()),
            ("done", pa.bool_()),
        ]
    ]
)
TEXT_FIELDS = (("view", pa.string()), ("message", pa.string()), ("calls", pa.string()))
#: An episode's texts as a part stores them: (views, messages, calls), each None when it has none.
Texts = tuple[list[str] | None, list[str] | None, list[str] | None]
EPISODE_SCHEMA = pa.schema(
    [
        ("episode", pa.string()),
        ("source", pa.string()),
        ("policy", pa.string()),
        ("seed", pa.int64()),
        ("decisions", pa.int64()),
        ("steps", pa.int64()),
        ("env_return", pa.float64()),
        ("unlocked", pa.list_(pa.string())),
        ("n_unlocked", pa.int64()),
        ("has_frames", pa.bool_()),
        ("has_logged", pa.bool_()),
        ("counts", pa.string()),
        ("metadata", pa.string()),
        ("logged", pa.string()),
        ("has_views", pa.bool_()),
        ("has_messages", pa.bool_()),
        ("frames_group", pa.int32()),
        ("replaces", pa.bool_()),
    ]
)


def decisions_table(arrays: DecisionArrays, texts: Sequence[Texts] | None) -> pa.Table:
    """The decisions table of ``arrays`` (already checked and narrowed); ``texts`` gives each
    episode's (views, messages, calls) when any episode of the part has them.

    Args:
        arrays: The part's stacked columns.
        texts: Per episode (views, messages, calls), or None.

    Returns:
        The Arrow table.
    """
    lengths = arrays.lengths
    rows = lengths + 1
    starts = arrays.row_starts
    episode = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.arange(arrays.n_episodes, dtype=np.int32), rows)), pa.array(list(arrays.ids), pa.string())
    )
    decision = np.arange(arrays.n_rows, dtype=np.int64) - np.repeat(starts, rows)
    columns: dict[str, Any] = {"episode": episode, "decision": pa.array(decision.astype(np.int32))}
    for field, names, kind in STATE_GROUPS:
        values = getattr(arrays, field)
        for j, name in enumerate(names):
            columns[name] = pa.array(np.ascontiguousarray(values[:, j]), kind)
    columns["actions"] = pa.ListArray.from_arrays(
        pa.array(arrays.action_offsets.astype(np.int32)), pa.array(arrays.action_ids, pa.uint8())
    )
    columns["env_reward"] = pa.array(arrays.env_reward, pa.float64())
    columns["done"] = pa.array(arrays.done, pa.bool_())
    schema = DECISION_SCHEMA
    if texts is not None:
        views: list[str | None] = []
        messages: list[str | None] = []
        calls: list[str | None] = []
        for (episode_views, episode_messages, episode_calls), n in zip(texts, lengths.tolist()):
            views.extend(episode_views if episode_views is not None else [None] * (n + 1))
            for column, values in ((messages, episode_messages), (calls, episode_calls)):
                column.append(None)  # row 0 is the state after reset: no decision
                column.extend(values if values is not None else [None] * n)
        columns["view"], columns["message"] = pa.array(views, pa.string()), pa.array(messages, pa.string())
        columns["calls"] = pa.array(calls, pa.string())
        schema = pa.schema(list(DECISION_SCHEMA) + [pa.field(n, t) for n, t in TEXT_FIELDS])
    return pa.table(columns, schema=schema)


def episodes_table(rows: list[dict[str, Any]]) -> pa.Table:
    """The episodes table of some episode rows (dicts with the ``EPISODE_SCHEMA`` keys).

    Args:
        rows: The rows.

    Returns:
        The Arrow table.
    """
    return pa.Table.from_pylist(rows, schema=EPISODE_SCHEMA)


def check_schema(table_schema: pa.Schema, expected: pa.Schema, where: str) -> None:
    """Check a table's columns against a schema.

    Args:
        table_schema: The table's schema.
        expected: The schema it should have.
        where: What the message names first.

    Raises:
        ValueError: A missing or mistyped column (the first); the caller names the file.
    """
    for field in expected:
        index = table_schema.get_field_index(field.name)
        if index < 0:
            raise ValueError(f"{where}: missing column {field.name!r}")
        actual = table_schema.field(index).type
        if not _same_type(actual, field.type):
            raise ValueError(f"{where}: column {field.name!r} has type {actual}, expected {field.type}")


def _same_type(actual: pa.DataType, expected: pa.DataType) -> bool:
    """Types equal as values go: a list's item name and nullability do not matter (tables
    written before the required columns read the same), and strings may be dictionary-encoded."""
    if pa.types.is_list(actual) and pa.types.is_list(expected):
        return _same_type(actual.value_type, expected.value_type)
    return actual.equals(expected) or (pa.types.is_dictionary(expected) and actual.equals(pa.string()))
