"""Reading decisions tables whole (``read_arrays``), and the checks every read makes.

Two readers share the checks here (a null anywhere is refused, the ``episode`` column must
follow the episodes table, and ``check_values`` on every row): ``read_arrays`` decodes every
part into one column-major ``DecisionArrays`` (what episodes and whole-column consumers use; a
store reads it on first use), narrowing counts to the dtype the tables' statistics chose (each
count checked to fit) and checking the status to be ``counts > 0``;
``workbench.data.storage.stream`` reads the same tables but the status in batches while a corpus
opens and keeps only the episodes' events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.data.episodes import STATE_DTYPES, DecisionArrays, check_values
from workbench.data.storage.layout import open_file, part_file
from workbench.data.storage.parquet import READ_POOL, ParquetReader
from workbench.data.storage.schema import COUNT_COLUMNS, DECISION_SCHEMA, STATE_GROUPS, STATUS_COLUMNS, check_schema
from workbench.errors import CorpusFormatError, CorpusValueError, EpisodeError, EpisodeValueError, UnsafeCorpusPathError

_READ_ERRORS = (pa.ArrowException, OSError, ValueError, KeyError)  # KeyError: a column the table lacks


@dataclass
class Part:
    """One committed part of a corpus folder: its name, its episodes table, and where its
    episodes and rows start in the store."""

    name: str
    episodes: pa.Table
    first_episode: int  # in the store
    first_row: int


def largest_count(root: Path, parts: list[Part]) -> int | None:
    """The largest achievement count the parts' decisions tables hold, from their Parquet
    statistics (None when a table has none: then counts stay uint16). A read checks the
    values against it (``_fit_counts``)."""
    largest = 0
    for part in parts:
        path = part_file(root, "decisions", part.name)
        with open_file(path) as handle:
            metadata = checked(lambda: pq.read_metadata(handle), path)
        names = metadata.schema.names
        positions = [names.index(column) for column in COUNT_COLUMNS if column in names]
        if len(positions) != len(COUNT_COLUMNS):
            return None  # the schema check names the missing column
        for group in range(metadata.num_row_groups):
            if metadata.row_group(group).num_rows == 0:
                continue
            for position in positions:
                stats = metadata.row_group(group).column(position).statistics
                if stats is None or not stats.has_min_max:
                    return None
                largest = max(largest, int(stats.max))
    return largest


def _allocate(rows: int, tables: list[pa.Table], counts: np.dtype) -> DecisionArrays:
    def column(name: str, kind: Any) -> np.ndarray:
        return np.concatenate([t.column(name).to_numpy() for t in tables]).astype(kind)

    def state(field: str, width: int, dtype: Any = None) -> np.ndarray:
        # column-major: a column is one copy
        return np.empty((width, rows), dtype or STATE_DTYPES[field]).T

    ids = tuple(i for t in tables for i in t.column("episode").to_pylist())
    return DecisionArrays(
        ids=ids,
        lengths=column("decisions", np.int64),
        env_return=column("env_return", np.float64),
        inventory=state("inventory", 16),
        achievement_counts=state("achievement_counts", 22, counts),
        player_pos=state("player_pos", 2),
        env_reward=np.empty(rows, np.float64),
        done=np.empty(rows, bool),
        action_ids=np.empty(0, np.uint8),
        action_offsets=np.zeros(rows + 1, np.int64),
    )


#: Columns a read copies into ``DecisionArrays`` (``decision`` is the row's position, not read;
#: the status is read to be checked against the counts, then dropped: it is ``counts > 0``).
STATE_COPIES = tuple((field, names) for field, names, _ in STATE_GROUPS if field != "achievement_status")
READ_COLUMNS = [
    "episode",
    *(name for _, names in STATE_COPIES for name in names),
    *STATUS_COLUMNS,
    "env_reward",
    "done",
    "actions",
]
#: Columns opening a corpus streams: all but the status, which scoring never reads (it is
#: ``counts > 0``) and which took half of the decode (~100 of ~200 ms at 1M decisions); it is
#: checked against the counts when the state columns are read whole (``read_arrays``).
OPEN_COLUMNS = [name for name in READ_COLUMNS if name not in STATUS_COLUMNS]


# -- whole columns ------------------------------------------------------------------------------
def read_arrays(root: Path, parts: list[Part], rows: int, counts: np.dtype) -> DecisionArrays:
    """Every part's rows (``rows`` in all) in one column-major ``DecisionArrays``, counts in
    ``counts``, checked (see the module); ``CorpusFormatError`` / ``CorpusValueError`` name the file."""
    arrays = _allocate(rows, [p.episodes for p in parts], counts)
    values = [_fill(root, part, arrays) for part in parts]
    object.__setattr__(arrays, "action_ids", np.concatenate(values) if len(values) > 1 else values[0])
    READ_POOL.release_unused()  # the read's Arrow memory goes back now, not seconds later
    for part in parts:
        try:
            check_values(arrays.rows(part.first_episode, part.first_episode + part.episodes.num_rows))
        except EpisodeValueError as error:
            raise CorpusValueError(f"{part_file(root, 'decisions', part.name)}: {error}") from None
    return arrays


def _fill(root: Path, part: Part, arrays: DecisionArrays) -> np.ndarray:
    """Read a part's decisions table into ``arrays`` (its rows), row group by row group (Arrow
    decodes a group's columns on all cores), checking as it goes. Returns the part's action
    ids (``arrays.action_offsets`` are filled)."""
    path = part_file(root, "decisions", part.name)
    with open_file(path) as handle:
        reader, episodes = open_decisions(handle, path, root, part)
        values = []
        row = part.first_row
        for group in range(reader.num_row_groups):
            table = checked(partial(reader.read_row_group, group, columns=READ_COLUMNS, use_threads=True), path)
            if not table.num_rows:
                continue
            batch = table.combine_chunks(READ_POOL).to_batches()[0]
            size = batch.num_rows
            check_batch(batch, path, row - part.first_row, episodes, reader)
            _fit_counts(batch, arrays.achievement_counts.dtype, path)
            for field, names in STATE_COPIES:
                copy_columns(getattr(arrays, field), row, batch, names)
            rows = arrays.achievement_counts[row : row + size]
            check_status_bits(batch, rows, arrays.ids, arrays.row_starts, row, path)
            copy_columns(arrays.env_reward[:, None], row, batch, ["env_reward"])
            copy_columns(arrays.done[:, None], row, batch, ["done"])
            actions = batch.column("actions")
            offsets = actions.offsets.to_numpy()
            arrays.action_offsets[row + 1 : row + size + 1] = arrays.action_offsets[row] + (offsets[1:] - offsets[0])
            values.append(actions.flatten().to_numpy(zero_copy_only=False))
            del table, batch, actions
            row += size
        episodes.finish(reader)
    return np.concatenate(values).astype(np.uint8, copy=False)  # a copy: Arrow's buffers go


# -- shared checks --------------------------------------------------------------------------------
def open_decisions(handle: Any, path: Path, root: Path, part: Part) -> tuple[ParquetReader, _EpisodeColumn]:
    """A reader of ``part``'s decisions table (``handle``), its schema and row count checked
    against the episodes table, and the checker of its ``episode`` column."""
    reader = _parquet_file(handle, path)
    checked(lambda: check_schema(reader.schema_arrow, DECISION_SCHEMA, str(path)), path)
    lengths = part.episodes.column("decisions").to_numpy().astype(np.int64)
    n_rows = int(lengths.sum()) + len(lengths)
    if reader.metadata.num_rows != n_rows:
        raise CorpusFormatError(
            f"{path}: holds {reader.metadata.num_rows} rows, but {part_file(root, 'episodes', part.name)} "
            f"lists {n_rows} (decisions + 1 per episode)"
        )
    return reader, _EpisodeColumn(path, part.episodes.column("episode").to_pylist(), lengths)


def check_batch(batch: pa.RecordBatch, path: Path, first_row: int, episodes: _EpisodeColumn, reader: Any) -> None:
    """The checks a batch gets before it is copied: no nulls, and its rows' episodes."""
    _refuse_nulls(batch, path, first_row)
    episodes.add(batch.column("episode"), reader)


def _parquet_file(handle: Any, path: Path) -> ParquetReader:
    """A reader of an open decisions table (allocating from the storage's read pool)."""
    return checked(lambda: ParquetReader(handle, dictionary=["episode"]), path)


def copy_columns(target: np.ndarray, first_row: int, batch: pa.RecordBatch, names: Sequence[str]) -> None:
    """Copy ``batch``'s columns ``names`` into ``target[first_row:, j]`` (a contiguous column
    of a column-major target: one copy each)."""
    for j, name in enumerate(names):
        column = batch.column(name)
        target[first_row : first_row + len(column), j] = column.to_numpy(zero_copy_only=False)


def _fit_counts(batch: pa.RecordBatch, dtype: np.dtype, path: Path) -> None:
    """Counts narrower than the table's uint16 (chosen from its statistics) must hold every
    count: a table whose statistics understate its counts is an error, never a wrapped count."""
    largest = np.iinfo(dtype).max
    if largest >= np.iinfo(STATE_DTYPES["achievement_counts"]).max:
        return
    for name in COUNT_COLUMNS:
        value = int(batch.column(name).to_numpy(zero_copy_only=False).max(initial=0))
        if value > largest:
            raise CorpusFormatError(
                f"{path}: column {name!r} holds {value}, above the largest count its statistics give"
            )


def _refuse_nulls(batch: pa.RecordBatch, path: Path, first_row: int) -> None:
    """A missing value anywhere but the text columns is an error naming the column and row
    (numpy would turn it into a number silently)."""
    for name, column in zip(batch.schema.names, batch.columns):
        if column.null_count:
            at = first_row + int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise CorpusFormatError(f"{path}: row {at}, column {name!r}: a missing value (null)")


def check_status_bits(
    batch: pa.RecordBatch, counts: np.ndarray, ids: Sequence[str], row_starts: np.ndarray, first_row: int, path: Path
) -> None:
    """The batch's status columns must be its counts > 0 (``counts``: the batch's rows, already
    copied). Compared bit-packed, as Arrow holds booleans. A disagreement is a
    ``CorpusValueError`` naming the file and, from ``ids`` and ``row_starts`` (the episodes
    holding row ``first_row`` on), the episode, decision and column."""
    n = batch.num_rows
    # (22, bytes): each column's expected bits, packed as Arrow packs them (least significant first)
    expected = np.packbits(np.greater(counts, 0, order="F").T, axis=1, bitorder="little")
    full, spare = divmod(n, 8)
    last_mask = np.uint8((1 << spare) - 1)  # the last byte's bits past the batch are not compared
    for j, name in enumerate(STATUS_COLUMNS):
        column = batch.column(name)
        if not column.offset % 8:  # bits start on a byte: compare them packed
            bits = np.frombuffer(column.buffers()[1], np.uint8, count=len(expected[j]), offset=column.offset // 8)
            same = np.array_equal(bits[:full], expected[j, :full])
            if same and (not spare or not (bits[full] ^ expected[j, full]) & last_mask):
                continue
        stored = column.to_numpy(zero_copy_only=False)
        wrong = np.flatnonzero(stored != (counts[:, j] > 0))
        if len(wrong):
            row = first_row + int(wrong[0])
            k = int(np.searchsorted(row_starts, row, side="right")) - 1
            raise CorpusValueError(
                f"{path}: episode {ids[k]!r}: decision {row - int(row_starts[k])}, column {name!r}: "
                f"{bool(stored[wrong[0]])!r} disagrees with the count {int(counts[wrong[0], j])} "
                "(status is true exactly when the count is positive)"
            )


def check_totals(arrays: DecisionArrays, steps: np.ndarray, path: Path, first_row: int) -> None:
    """The episodes table's ``steps`` and ``env_return`` of ``arrays``' episodes (its rows from
    ``first_row``) must be what their decisions hold: the actions taken, and Crafter's rewards
    summed (to 1e-9: the sum's rounding). ``CorpusValueError`` naming the file, row and column."""
    held = arrays.steps()
    wrong = np.flatnonzero(held != steps)
    if len(wrong):
        k = int(wrong[0])
        raise CorpusValueError(
            f"{path}: row {first_row + k}, column 'steps': {int(steps[k])}, but episode {arrays.ids[k]!r} "
            f"took {int(held[k])} actions"
        )
    sums = np.add.reduceat(arrays.env_reward, arrays.row_starts) if arrays.n_rows else np.zeros(0)
    off = np.flatnonzero(np.abs(sums - arrays.env_return) > 1e-9 * np.maximum(1.0, np.abs(sums)))
    if len(off):
        k = int(off[0])
        raise CorpusValueError(
            f"{path}: row {first_row + k}, column 'env_return': {float(arrays.env_return[k])!r}, but the rewards "
            f"of episode {arrays.ids[k]!r} sum to {float(sums[k])!r}"
        )


class _EpisodeColumn:
    """Checks, row group by row group, that the decisions table's ``episode`` column is each
    episode's rows in the episodes table's order: the rows' episode positions never fall and
    each episode has its length + 1 rows (together: exactly the expected sequence). A crafted or
    mismatched episodes row is an error naming the first wrong row."""

    def __init__(self, path: Path, ids: list[str], lengths: np.ndarray) -> None:
        self.path, self.ids, self.lengths = path, ids, lengths
        self.position = {episode_id: i for i, episode_id in enumerate(ids)}
        self.rows = np.zeros(len(ids), np.int64)
        self.last = -1
        self._dictionary: pa.Array | None = None
        self._lookup = np.zeros(1, np.int64)

    def add(self, column: pa.Array, reader: Any) -> None:
        """Check one batch's ``episode`` column (``reader`` re-reads the column on an error)."""
        if not len(column):
            return
        if not pa.types.is_dictionary(column.type):
            column = column.dictionary_encode()
        if self._dictionary is None or not column.dictionary.equals(self._dictionary):
            # the batches of one row group share its dictionary: look its ids up once
            self._dictionary = column.dictionary
            names = column.dictionary.to_pylist()
            self._lookup = np.array([self.position.get(name, -1) for name in names] or [-1], dtype=np.int64)
        # Checked run by run (a run: rows with one dictionary index, so one episode): the rows'
        # positions never fall exactly when the runs' never do, and each run adds its length to
        # its episode's rows (a lookup and a bincount per row took 5 of the ~11 ms at 1M rows).
        indices = column.indices.to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(indices[1:] != indices[:-1]) + 1
        stored = self._lookup[indices[np.concatenate([[0], starts])]]
        if stored.min() < 0 or stored[0] < self.last or (np.diff(stored) < 0).any():
            self._fail(reader)
        np.add.at(self.rows, stored, np.diff(starts, prepend=0, append=len(indices)))
        self.last = int(stored[-1])

    def finish(self, reader: Any) -> None:
        """After the last batch: every episode had its rows."""
        if not np.array_equal(self.rows, self.lengths + 1):
            self._fail(reader)

    def _fail(self, reader: Any) -> None:
        """Find and name the first wrong row (reads the whole column again: only on an error)."""
        column = checked(lambda: reader.read(columns=["episode"]), self.path).column("episode")
        expected = np.repeat(np.arange(len(self.ids), dtype=np.int64), self.lengths + 1)
        row = 0
        for chunk in column.chunks:
            values = chunk.to_pylist()
            for offset, value in enumerate(values):
                at = row + offset
                if at >= len(expected) or self.position.get(value, -1) != expected[at]:
                    listed = f"episode {self.ids[expected[at]]!r}" if at < len(expected) else "no episode"
                    raise CorpusFormatError(
                        f"{self.path}: row {at} belongs to episode {value!r}, but the episodes table puts {listed} there"
                    )
            row += len(values)
        raise CorpusFormatError(f"{self.path}: the episode column does not match the episodes table")


def read_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A whole Parquet table (``columns`` only, when given), page checksums verified;
    ``CorpusFormatError`` naming ``path`` when it does not read. On this thread: the tables
    read whole are small, and a process that only writes then never starts Arrow's thread
    pool (the suspect in a writer's rare abort at exit: "terminate called without an active
    exception")."""
    with open_file(path) as handle:
        return checked(
            lambda: ParquetReader(handle).read(columns=columns, use_threads=False),
            path,
        )


def checked(action: Any, path: Path) -> Any:
    """Run ``action``; Arrow, OS and value errors become ``CorpusFormatError`` naming ``path``."""
    try:
        return action()
    except (CorpusFormatError, UnsafeCorpusPathError, EpisodeError):
        raise
    except _READ_ERRORS as error:
        raise CorpusFormatError(f"{path}: not a readable corpus table ({type(error).__name__}: {error})") from None
