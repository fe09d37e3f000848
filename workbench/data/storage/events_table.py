"""A part's events table: its episodes' ``decision_events`` kept beside its decisions table.

``events/<part>.parquet`` holds one row per episode of the part, in its episodes table's order:
``episode``, ``decisions``, ``steps`` (as the episodes table has them, checked against it), the
four status rows (``reset_status`` ... ``seen_status``, lists of 22 bools in Crafter's order)
and the episode's events as lists: ``reward_decision`` / ``reward_value``, ``unlock_decision`` /
``unlock_name`` / ``unlock_ordinal`` / ``unlock_first``, ``gain_decision`` / ``gain_slot`` /
``gain_delta`` (decisions numbered within the episode). Its metadata holds the SHA-256 of the
part's decisions table as written.

Opening a part reads its events from here when that digest is the decisions table's: the table
was then written with those very decisions, whose values the writer checked. Decoding ~40
state columns to find a few events took most of an open (~75 of ~180 ms CPU at 1M decisions);
hashing the compressed decisions table takes ~1 ms. A part without an events table (written
before it), or whose decisions table changed since, is read from its decisions table as before
(``workbench.data.storage.stream``), so the table is never trusted over the data it came from.
Every value read is checked (ranges, order, pairing, the episodes table's columns); an events
table that fails a check is not used (a logged warning names it and what is wrong), and the
decisions read in its place checks the part as before.

What made the table is part of its key: its metadata also holds the ``EVENTS_VERSION`` of the
``decision_events`` that computed it (a table of another version is read from its decisions
instead, as a stale one is) and the SHA-256 of its own values (``content_digest``), checked on
every open: a table edited with its metadata kept (gains multiplied, unlock lists cleared,
events moved) is named in a warning and not used. Hashing the values costs a few ms at 1M
decisions. A table forged with both digests recomputed is caught only by re-deriving it from
its decisions: ``workbench corpus check --deep`` (``workbench.data.storage.checks``), and
``workbench corpus events --rebuild`` rewrites every table from its decisions.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes.events import EVENTS_VERSION, N_ACHIEVEMENTS, N_ITEMS, DecisionEvents
from workbench.data.storage.decode import Part, checked
from workbench.data.storage.layout import open_file, part_file
from workbench.data.storage.parquet import ParquetReader
from workbench.data.storage.schema import check_schema
from workbench.errors import CorpusFormatError, CorpusValueError, UnsafeCorpusPathError
from workbench.util.atomic import atomic_path

_LOG = logging.getLogger(__name__)

#: The metadata key holding the decisions table's SHA-256 (hex).
DIGEST_KEY = b"workbench.decisions_sha256"
#: The metadata key holding the ``EVENTS_VERSION`` that computed the table (decimal).
VERSION_KEY = b"workbench.events_version"
#: The metadata key holding the SHA-256 (hex) of the table's own values (``content_digest``).
CONTENT_KEY = b"workbench.events_sha256"
#: Gain slots: the inventory items, then the achievement counts (``decision_events``'s numbering).
N_SLOTS = N_ITEMS + N_ACHIEVEMENTS
STATUS_KEYS = ("reset_status", "final_status", "ever_status", "seen_status")
#: Event lists by kind: the decision column first, then its companions, with their types.
EVENT_GROUPS: dict[str, tuple[tuple[str, pa.DataType], ...]] = {
    "reward": (("reward_decision", pa.int32()), ("reward_value", pa.float64())),
    "unlock": (
        ("unlock_decision", pa.int32()),
        ("unlock_name", pa.int8()),
        ("unlock_ordinal", pa.int32()),
        ("unlock_first", pa.bool_()),
    ),
    "gain": (("gain_decision", pa.int32()), ("gain_slot", pa.int8()), ("gain_delta", pa.int32())),
}
EVENTS_SCHEMA = pa.schema(
    [pa.field("episode", pa.string(), nullable=False)]
    + [pa.field(name, pa.int64(), nullable=False) for name in ("decisions", "steps")]
    + [pa.field(key, pa.list_(pa.field("item", pa.bool_(), nullable=False)), nullable=False) for key in STATUS_KEYS]
    + [
        pa.field(name, pa.list_(pa.field("item", kind, nullable=False)), nullable=False)
        for group in EVENT_GROUPS.values()
        for name, kind in group
    ]
)
#: numpy dtypes of the event arrays as ``decision_events`` returns them.
_DTYPES = {"unlock_name": np.int8, "unlock_ordinal": np.int32, "gain_slot": np.int8, "gain_delta": np.int32}


def file_digest(path: Path) -> str:
    """The SHA-256 (hex) of a corpus file, read without following symlinks."""
    digest = hashlib.sha256()
    with open_file(path) as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def events_table(ids: list[str], steps: np.ndarray, events: list[DecisionEvents], decisions_digest: str) -> pa.Table:
    """The events table of a part: ``ids`` and ``steps`` per episode, ``events`` the
    ``decision_events`` of its batches in order (decisions numbered from the part's first),
    ``decisions_digest`` its decisions table's SHA-256."""
    columns: dict[str, Any] = {"episode": pa.array(ids, pa.string()), "steps": pa.array(steps, pa.int64())}
    joined = DecisionEvents.join(events)
    starts, lengths = joined.starts, joined.lengths.astype(np.int64)
    columns["decisions"] = pa.array(lengths, pa.int64())
    row_offsets = np.arange(len(ids) + 1, dtype=np.int32) * len(ACHIEVEMENTS)
    for key in STATUS_KEYS:
        values = getattr(joined, key).ravel()
        columns[key] = pa.ListArray.from_arrays(pa.array(row_offsets), pa.array(values, pa.bool_()))
    bounds = np.append(starts, starts[-1] + lengths[-1]) if len(starts) else np.zeros(1, np.int64)
    for group in EVENT_GROUPS.values():
        decision = getattr(joined, group[0][0])
        offsets = np.searchsorted(decision, bounds).astype(np.int32)  # sorted: each episode's run
        episode = np.repeat(np.arange(len(ids)), np.diff(offsets))
        for name, kind in group:
            values = getattr(joined, name)
            if name == group[0][0]:
                values = values - starts[episode]  # within the episode
            columns[name] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, kind))
    table = pa.table(columns).select(EVENTS_SCHEMA.names).cast(EVENTS_SCHEMA)
    return table.replace_schema_metadata(
        {
            DIGEST_KEY: decisions_digest.encode(),
            VERSION_KEY: str(EVENTS_VERSION).encode(),
            CONTENT_KEY: content_digest(table).encode(),
        }
    )


def content_digest(table: pa.Table) -> str:
    """The SHA-256 (hex) of an events table's values, column by column in the schema's order:
    each list column as its row lengths and its values, as little-endian arrays of its type (so
    the same values give the same digest however the file chunks or compresses them)."""
    digest = hashlib.sha256()
    for field in EVENTS_SCHEMA:
        column = table.column(field.name)
        digest.update(field.name.encode() + b"\0")
        if field.name == "episode":
            digest.update(json.dumps(column.to_pylist()).encode())
            continue
        values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if pa.types.is_list(field.type):
            digest.update(values.value_lengths().to_numpy(zero_copy_only=False).astype("<i8").tobytes())
            values = values.flatten()
        array = values.to_numpy(zero_copy_only=False)
        # No copy when it is little-endian and contiguous already; .data: the array's own buffer
        # (a memoryview, which the hash takes as typed; numpy's stubs give ndarray no Buffer before 3.12).
        digest.update(np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).data)
    return digest.hexdigest()


def write_events(
    path: Path, ids: list[str], steps: np.ndarray, events: list[DecisionEvents], decisions_digest: str
) -> None:
    """Write a part's events table to ``path`` (atomically; replacing one there, a table its
    folder owns), from what ``events_table`` takes."""
    with atomic_path(path, overwrite=True, own=True) as tmp:
        # No dictionaries: event values are mostly distinct, and decoding them cost a fifth more.
        pq.write_table(
            events_table(ids, steps, events, decisions_digest),
            str(tmp),
            compression="zstd",
            use_dictionary=False,
            write_page_checksum=True,
        )


@dataclass(frozen=True)
class StoredEvents:
    """What a part's events table gives: its checked ``events`` (None when it is not used) and
    why it is not used (``reason``; None when used or when there is no table). ``damaged``: it
    failed a check (unreadable, a value out of range, its values edited), rather than being
    absent or stale (made from other decisions, or by another ``EVENTS_VERSION``)."""

    events: DecisionEvents | None
    reason: str | None = None
    damaged: bool = False


def stored_events(root: Path, part: Part, first_decision: int) -> StoredEvents:
    """The events of ``part``'s episodes from its events table, decisions numbered from
    ``first_decision``, when the table is current (made from this decisions table by this
    ``EVENTS_VERSION``) and passes every check; else why not (see ``StoredEvents``).

    Args:
        root: The corpus folder.
        part: The part.
        first_decision: The number of its first decision.

    Returns:
        The events, or why the table is not used.

    Raises:
        UnsafeCorpusPathError: The events table is a symlink.
    """
    path = part_file(root, "events", part.name)
    if not path.exists() and not path.is_symlink():
        return StoredEvents(None)
    try:
        with open_file(path) as handle:  # a FIFO or device: a CorpusFormatError, never a wait
            reader = checked(lambda: ParquetReader(handle), path)
            metadata = reader.schema_arrow.metadata or {}
            version = metadata.get(VERSION_KEY, b"").decode("ascii", "replace")
            if version != str(EVENTS_VERSION):
                made = f"events version {version}" if version else "a workbench before events versions"
                return StoredEvents(None, f"{path}: made by {made}, not {EVENTS_VERSION} (stale)")
            recorded = metadata.get(DIGEST_KEY)
            if recorded is None or recorded.decode("ascii", "replace") != file_digest(
                part_file(root, "decisions", part.name)
            ):  # written before the decisions table last changed: not its events
                return StoredEvents(None, f"{path}: made from other decisions than the part holds now (stale)")
            table = checked(lambda: reader.read(use_threads=True), path)
        checked(lambda: check_schema(table.schema, EVENTS_SCHEMA, str(path)), path)
        table = table.combine_chunks()
        events = _events(table, part, first_decision, path)
        if metadata.get(CONTENT_KEY, b"").decode("ascii", "replace") != content_digest(table):
            raise CorpusFormatError(f"{path}: its values changed since it was written (their SHA-256 differs)")
        return StoredEvents(events)
    except UnsafeCorpusPathError:
        raise
    except CorpusFormatError as error:  # CorpusValueError included
        return StoredEvents(None, str(error), damaged=True)


def read_part_events(root: Path, part: Part, first_decision: int) -> DecisionEvents | None:
    """The events of ``part``'s episodes from its events table (``stored_events``), or None when
    they must be read from the decisions table instead; a damaged table is logged as a warning
    (the decisions read that follows checks the part and names what is wrong with it, if anything).

    Args:
        root: The corpus folder.
        part: The part.
        first_decision: The number of its first decision.

    Returns:
        The events, or None.

    Raises:
        UnsafeCorpusPathError: The events table is a symlink.
    """
    stored = stored_events(root, part, first_decision)
    if stored.damaged:
        _LOG.warning("%s; reading the part's decisions table instead", stored.reason)
    return stored.events


def _events(table: pa.Table, part: Part, first_decision: int, path: Path) -> DecisionEvents:
    """The checked events of one events table (``part``'s), numbered from ``first_decision``."""
    episodes = part.episodes
    n = episodes.num_rows
    if table.num_rows != n:
        raise CorpusFormatError(f"{path}: holds {table.num_rows} episodes, its episodes table {n}")
    for name in table.column_names:
        if table.column(name).null_count:
            raise CorpusFormatError(f"{path}: column {name!r}: a missing value (null)")
    for name in ("episode", "decisions", "steps"):
        if not table.column(name).equals(episodes.column(name).cast(table.schema.field(name).type)):
            raise CorpusFormatError(
                f"{path}: column {name!r} differs from {part_file(path.parent.parent, 'episodes', part.name)}'s"
            )
    lengths = episodes.column("decisions").to_numpy().astype(np.int64)
    starts = first_decision + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    events: dict[str, np.ndarray] = {
        "starts": starts,
        "lengths": lengths,
        "env_return": episodes.column("env_return").to_numpy().astype(np.float64),
    }
    for key in STATUS_KEYS:
        values, per_row = _flat(table, key)
        if (per_row != len(ACHIEVEMENTS)).any():
            row = int(np.flatnonzero(per_row != len(ACHIEVEMENTS))[0])
            raise CorpusValueError(f"{path}: row {row}, column {key!r}: {per_row[row]} values, not {len(ACHIEVEMENTS)}")
        events[key] = values.astype(bool).reshape(n, len(ACHIEVEMENTS))
    for group in EVENT_GROUPS.values():
        name = group[0][0]
        local, per_row = _flat(table, name)
        companions = {other: _flat(table, other) for other, _ in group[1:]}
        for other, (_, other_per_row) in companions.items():
            if not np.array_equal(other_per_row, per_row):
                raise CorpusFormatError(f"{path}: columns {name!r} and {other!r} differ in length in some row")
        # Each row's first and last decision inside its episode; with the order checked below
        # (``_check_values``), every decision between them is too.
        ends = np.cumsum(per_row)
        rows = np.flatnonzero(per_row)
        if len(rows) and (
            (local[ends[rows] - per_row[rows]] < 0).any() or (local[ends[rows] - 1] >= lengths[rows]).any()
        ):
            episode = np.repeat(np.arange(n), per_row)
            at = int(np.flatnonzero((local < 0) | (local >= lengths[episode]))[0])
            raise CorpusValueError(
                f"{path}: row {int(episode[at])}, column {name!r}: decision {int(local[at])} is outside the "
                f"episode's {int(lengths[episode[at]])} decisions"
            )
        events[name] = local.astype(np.int64) + np.repeat(starts, per_row)
        for other, (values, _) in companions.items():
            events[other] = values.astype(_DTYPES.get(other, values.dtype), copy=False)
    _check_values(events, path)
    return DecisionEvents(**events)


def _flat(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A list column's values (one array) and each row's number of values."""
    column = table.column(name).chunk(0) if table.num_rows else pa.array([], table.schema.field(name).type)
    return column.flatten().to_numpy(zero_copy_only=False), column.value_lengths().to_numpy(zero_copy_only=False)


def _check_values(events: dict[str, np.ndarray], path: Path) -> None:
    """Ranges and order of the events: rewards finite and not +0.0, one per decision; unlocks
    and gains ordered by (decision, column) without repeats, names and slots Crafter's, gains
    positive, ordinals from 0, and Crafter's rewards summing to each episode's ``env_return``."""

    def fail(column: str, at: np.ndarray, why: str) -> None:
        raise CorpusValueError(f"{path}: column {column!r}: event {int(np.flatnonzero(at)[0])} {why}")

    value = events["reward_value"]
    invalid = ~np.isfinite(value) | ((value == 0) & ~np.signbit(value))
    if invalid.any():
        fail("reward_value", invalid, "is not a finite non-zero reward")
    for key, column, width in (
        ("reward_decision", None, 1),
        ("unlock_decision", "unlock_name", len(ACHIEVEMENTS)),
        ("gain_decision", "gain_slot", N_SLOTS),
    ):
        order = events[key]
        if column is not None:
            second = events[column]
            if len(second) and (second.min() < 0 or second.max() >= width):
                fail(column, (second < 0) | (second >= width), f"is outside 0..{width - 1}")
            order = order * width + second
        later = order[1:] > order[:-1]
        if not later.all():
            fail(key, np.append(False, ~later), "is not after the one before (events are ordered)")
    for key, low in (("gain_delta", 1), ("unlock_ordinal", 0)):
        if len(events[key]) and events[key].min() < low:
            fail(key, events[key] < low, f"is below {low}")
    starts, env_return = events["starts"], events["env_return"]
    episode = np.searchsorted(starts, events["reward_decision"], side="right") - 1
    sums = np.bincount(episode, weights=value, minlength=len(starts)) if len(starts) else np.zeros(0)
    off = np.abs(sums - env_return) > 1e-9 * np.maximum(1.0, np.abs(sums))
    if off.any():
        k = int(np.flatnonzero(off)[0])
        raise CorpusValueError(
            f"{path}: row {k}: the rewards sum to {float(sums[k])!r}, but the episode's env_return is "
            f"{float(env_return[k])!r}"
        )
