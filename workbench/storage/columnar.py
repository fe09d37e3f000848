"""Writing and reading columnar corpus folders (schema_version 2): parts appended under a lock.

A write (``append``) holds the folder's lock, checks the ids it adds against every committed
part, then writes one new part: its decisions table, its frames table (when any episode has
frames) and last its episodes table, the commit record, each to a temporary file renamed into
place. Values are checked before anything is renamed. A read lists the committed parts, reads
each one's episodes table whole and its decisions table column by column into one set of
preallocated arrays, and checks every value again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from workbench.atomic import atomic_path
from workbench.episodes import (
    INDEX_COLUMNS,
    STATE_DTYPES,
    ColumnStore,
    Corpus,
    DecisionArrays,
    EpisodeExtras,
    Frames,
    check_status,
    check_values,
    count_dtype,
    index_frame,
    narrow,
)
from workbench.errors import CorpusFormatError, CorpusValueError, EpisodeError, EpisodeValueError, UnsafeCorpusPathError
from workbench.storage import frames as frame_codec
from workbench.storage.layout import (
    READ_POOL,
    arrow_reads,
    committed_parts,
    jsonable,
    new_part_name,
    open_file,
    part_file,
    refuse_symlinks,
)
from workbench.storage.tables import (
    COUNT_COLUMNS,
    DECISION_SCHEMA,
    EPISODE_SCHEMA,
    STATE_GROUPS,
    STATUS_COLUMNS,
    check_schema,
    decisions_table,
    episodes_table,
)

#: Rows per row group and per batch written: bounds a write's memory, and a read's Arrow
#: memory (a read goes row group by row group).
WRITE_BATCH = 1 << 18
_READ_ERRORS = (pa.ArrowException, OSError, ValueError)


# -- writing ----------------------------------------------------------------------------------
#: Ids of parts already read, by (folder, part): a committed part is never rewritten, so a
#: recording that appends one part per episode reads each part's ids once, not once per append.
_PART_IDS: dict[tuple[str, str], list[str]] = {}


def stored_ids(root: Path) -> dict[str, str]:
    """Episode id -> the part holding it, over the committed parts (call under the lock)."""
    held: dict[str, str] = {}
    for part in committed_parts(root):
        key = (str(root.resolve()), part)
        if key not in _PART_IDS:
            path = part_file(root, "episodes", part)
            _PART_IDS[key] = _read_table(path, columns=["episode"]).column("episode").to_pylist()
        for episode_id in _PART_IDS[key]:
            held[episode_id] = part
    return held


def append(root: Path, corpus: Corpus, replaces: set[str], *, progress: bool = False) -> str | None:
    """Write ``corpus`` as one new part of ``root`` (under the lock, ids already checked);
    ``replaces`` are ids an earlier part holds; ``progress`` shows a tqdm bar per table. Returns
    the part's name (None for no episodes)."""
    if len(corpus) == 0:
        return None
    part = new_part_name()
    extras = [corpus.episode_extras(i) for i in range(len(corpus))]
    texts = _texts(extras)
    metadata = [json.dumps(jsonable(e.metadata, f"episode {e.id!r}", "metadata")) for e in extras]
    logged = [
        None if e.logged is None else json.dumps(jsonable(e.logged, f"episode {e.id!r}", "logged")) for e in extras
    ]
    written: list[Path] = []
    try:
        decisions = part_file(root, "decisions", part)
        with atomic_path(decisions) as tmp:
            writer = None
            batches = corpus.decision_batches(WRITE_BATCH)
            for start, arrays in tqdm(batches, desc="decisions", unit="batch", disable=not progress):
                check_values(arrays)
                table = decisions_table(
                    narrow(arrays), None if texts is None else texts[start : start + arrays.n_episodes]
                )
                writer = writer or pq.ParquetWriter(
                    str(tmp), table.schema, compression="zstd", write_page_checksum=True
                )
                writer.write_table(table, row_group_size=WRITE_BATCH)
            if writer is not None:
                writer.close()
        written.append(decisions)
        groups = _write_frames(root, part, extras, written, progress)
        index = corpus.index
        rows = []
        for i, e in enumerate(extras):
            row = {column: index[column].iat[i] for column in index.columns}
            seed = row["seed"]
            rows.append(
                {
                    **row,
                    "seed": int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else None,
                    "unlocked": list(row["unlocked"]),
                    "metadata": metadata[i],
                    "logged": logged[i],
                    "has_frames": groups[i] >= 0,
                    "has_views": e.views is not None,
                    "has_messages": e.messages is not None,
                    "frames_group": groups[i],
                    "replaces": e.id in replaces,
                }
            )
        episodes = part_file(root, "episodes", part)
        with atomic_path(episodes) as tmp:
            pq.write_table(episodes_table(rows), str(tmp), compression="zstd", write_page_checksum=True)
    except BaseException:
        for path in written:  # we hold the lock: nobody reads or writes this uncommitted part
            path.unlink(missing_ok=True)
        raise
    return part


def _texts(extras: list[EpisodeExtras]) -> list[tuple[list[str] | None, list[str] | None]] | None:
    if all(e.views is None and e.messages is None for e in extras):
        return None
    return [(e.views, e.messages) for e in extras]


def _write_frames(root: Path, part: str, extras: list[EpisodeExtras], written: list[Path], progress: bool) -> list[int]:
    """Frames of the episodes that have them, streamed one episode at a time; their row groups (-1 = none)."""
    if not any(e.frames_loader is not None for e in extras):
        return [-1] * len(extras)
    groups = []
    path = part_file(root, "frames", part)
    with atomic_path(path) as tmp:
        writer = frame_codec.FramesWriter(tmp)
        try:
            for e in tqdm(extras, desc="frames", unit="episode", disable=not progress):
                groups.append(-1 if e.frames_loader is None else writer.add(e.id, e.frames_loader()))
        finally:
            writer.close()
    written.append(path)
    return groups


# -- reading ----------------------------------------------------------------------------------
@dataclass
class _Part:
    name: str
    episodes: pa.Table
    first_episode: int  # in the store
    first_row: int


def load(root: Path) -> Corpus:
    """Open a columnar corpus folder: every committed part's columns, checked (see the module)."""
    refuse_symlinks(root)
    parts: list[_Part] = []
    episodes_seen = rows_seen = 0
    for name in committed_parts(root):
        path = part_file(root, "episodes", name)
        table = _read_table(path)
        _checked(partial(check_schema, table.schema, EPISODE_SCHEMA, str(path)), path)
        parts.append(_Part(name, table, episodes_seen, rows_seen))
        episodes_seen += table.num_rows
        rows_seen += int(pa.compute.sum(table.column("decisions")).as_py() or 0) + table.num_rows
    if not parts:  # a folder whose only writes failed their checks: an empty corpus
        return Corpus()
    arrays = _allocate(rows_seen, [p.episodes for p in parts], count_dtype(_largest_count(root, parts)))
    values = [_fill(root, part, arrays) for part in parts]
    object.__setattr__(arrays, "action_ids", np.concatenate(values) if len(values) > 1 else values[0])
    READ_POOL.release_unused()  # the read's Arrow memory goes back now, not seconds later
    for part in parts:
        try:
            check_values(arrays.rows(part.first_episode, part.first_episode + part.episodes.num_rows))
        except EpisodeValueError as error:
            raise CorpusValueError(f"{part_file(root, 'decisions', part.name)}: {error}") from None
    store = ColumnStore(arrays, _Extras(root, parts).get)
    live, index_rows = _live_episodes(root, parts)
    index = index_frame(index_rows)
    return Corpus.from_store(store, live, index)


def _largest_count(root: Path, parts: list[_Part]) -> int | None:
    """The largest achievement count the parts' decisions tables hold, from their Parquet
    statistics (None when a table has none: then counts stay uint16). A read checks the
    values against it (``_fit_counts``)."""
    largest = 0
    for part in parts:
        path = part_file(root, "decisions", part.name)
        with open_file(path) as handle:
            metadata = _checked(lambda: pq.read_metadata(handle), path)
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


def _fill(root: Path, part: _Part, arrays: DecisionArrays) -> np.ndarray:
    """Read a part's decisions table into ``arrays`` (its rows), batch by batch, checking its
    episode and status columns and refusing nulls on the way. Returns the part's action ids (``arrays.action_offsets`` are filled)."""
    path = part_file(root, "decisions", part.name)
    with open_file(path) as handle:
        return _fill_from(handle, path, root, part, arrays)


#: Columns a read copies into ``DecisionArrays`` (``decision`` is the row's position, not read;
#: the status is read to be checked against the counts, then dropped: it is ``counts > 0``).
_STATE_COPIES = tuple((field, names) for field, names, _ in STATE_GROUPS if field != "achievement_status")
_READ_COLUMNS = [
    "episode",
    *(name for _, names in _STATE_COPIES for name in names),
    *STATUS_COLUMNS,
    "env_reward",
    "done",
    "actions",
]


def _fill_from(handle: Any, path: Path, root: Path, part: _Part, arrays: DecisionArrays) -> np.ndarray:
    reader = _parquet_file(handle, path)
    _checked(lambda: check_schema(reader.schema_arrow, DECISION_SCHEMA, str(path)), path)
    lengths = part.episodes.column("decisions").to_numpy().astype(np.int64)
    n_rows = int(lengths.sum()) + len(lengths)
    if reader.metadata.num_rows != n_rows:
        raise CorpusFormatError(
            f"{path}: holds {reader.metadata.num_rows} rows, but {part_file(root, 'episodes', part.name)} "
            f"lists {n_rows} (decisions + 1 per episode)"
        )
    episodes = _EpisodeColumn(path, part.episodes.column("episode").to_pylist(), lengths)
    values = []
    row = part.first_row
    for group in range(reader.num_row_groups):
        # A row group's columns in one read: Arrow decodes them on all cores.
        batch = _checked(partial(reader.read_row_group, group, columns=_READ_COLUMNS, use_threads=True), path)
        batch = batch.combine_chunks(READ_POOL).to_batches()[0] if batch.num_rows else None
        if batch is None:
            continue
        size = batch.num_rows
        _refuse_nulls(batch, path, row - part.first_row)
        episodes.add(batch.column("episode"), reader)
        _fit_counts(batch, arrays.achievement_counts.dtype, path)
        for field, names in _STATE_COPIES:
            _copy_columns(getattr(arrays, field), row, batch, names)
        _check_status(batch, arrays, row, path)
        _copy_columns(arrays.env_reward[:, None], row, batch, ["env_reward"])
        _copy_columns(arrays.done[:, None], row, batch, ["done"])
        actions = batch.column("actions")
        offsets = actions.offsets.to_numpy()
        arrays.action_offsets[row + 1 : row + size + 1] = arrays.action_offsets[row] + (offsets[1:] - offsets[0])
        values.append(actions.flatten().to_numpy(zero_copy_only=False))
        del batch, actions
        row += size
    episodes.finish(reader)
    return np.concatenate(values).astype(np.uint8, copy=False)  # a copy: Arrow's buffers go


def _parquet_file(handle: Any, path: Path) -> pq.ParquetFile:
    """A reader of an open decisions table (allocating from the storage's read pool)."""
    with arrow_reads():
        return _checked(
            lambda: pq.ParquetFile(handle, read_dictionary=["episode"], page_checksum_verification=True), path
        )


def _copy_columns(target: np.ndarray, first_row: int, batch: pa.RecordBatch, names: Sequence[str]) -> None:
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
        value = pc.max(batch.column(name), memory_pool=READ_POOL).as_py()
        if value is not None and value > largest:
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


def _check_status(batch: pa.RecordBatch, arrays: DecisionArrays, first_row: int, path: Path) -> None:
    """The batch's status columns must be its counts > 0 (compared in Arrow, bit-packed); a
    disagreement is a ``CorpusValueError`` naming the file, episode, decision and column."""
    for status, count in zip(STATUS_COLUMNS, COUNT_COLUMNS):
        positive = pc.greater(batch.column(count), 0, memory_pool=READ_POOL)
        wrong = pc.xor(batch.column(status), positive, memory_pool=READ_POOL)
        if pc.any(wrong, memory_pool=READ_POOL).as_py():
            values = np.empty((len(STATUS_COLUMNS), batch.num_rows), bool).T
            _copy_columns(values, 0, batch, STATUS_COLUMNS)
            try:
                check_status(arrays, values, first_row)
            except EpisodeValueError as error:
                raise CorpusValueError(f"{path}: {error}") from None


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

    def add(self, column: pa.Array, reader: Any) -> None:
        """Check one batch's ``episode`` column (``reader`` re-reads the column on an error)."""
        if not len(column):
            return
        if not pa.types.is_dictionary(column.type):
            column = column.dictionary_encode()
        names = column.dictionary.to_pylist()
        lookup = np.array([self.position.get(name, -1) for name in names] or [-1], dtype=np.int64)
        stored = lookup[column.indices.to_numpy(zero_copy_only=False)]
        if stored.min() < 0 or stored[0] < self.last or (np.diff(stored) < 0).any():
            self._fail(reader)
        self.rows += np.bincount(stored, minlength=len(self.ids))
        self.last = int(stored[-1])

    def finish(self, reader: Any) -> None:
        """After the last batch: every episode had its rows."""
        if not np.array_equal(self.rows, self.lengths + 1):
            self._fail(reader)

    def _fail(self, reader: Any) -> None:
        """Find and name the first wrong row (reads the whole column again: only on an error)."""
        column = _checked(lambda: reader.read(columns=["episode"]), self.path).column("episode")
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


def _live_episodes(root: Path, parts: list[_Part]) -> tuple[list[int], list[dict[str, Any]]]:
    """The store episodes the corpus shows, in order, and their index rows: an id written again
    with ``replaces`` takes its first position and its newest data; an id in two parts
    otherwise is an error naming both (ids never collide)."""
    position: dict[str, int] = {}
    owner: dict[str, str] = {}
    live: list[int] = []
    rows: list[dict[str, Any]] = []
    for part in parts:
        table = part.episodes
        records = table.select([*INDEX_COLUMNS, "replaces"]).to_pylist()
        for offset, record in enumerate(records):
            episode_id = record["episode"]
            replaces = record.pop("replaces")
            if record["seed"] is None:
                record["seed"] = _metadata(table, offset).get("seed")
            if episode_id in position:
                if not replaces:
                    raise CorpusFormatError(
                        f"{root}: episode id {episode_id!r} is in parts {owner[episode_id]} and {part.name}; "
                        "ids must be unique (was a part copied in by hand?)"
                    )
                live[position[episode_id]] = part.first_episode + offset
                rows[position[episode_id]] = record
            else:
                position[episode_id] = len(live)
                live.append(part.first_episode + offset)
                rows.append(record)
            owner[episode_id] = part.name
    return live, rows


def _metadata(table: pa.Table, row: int) -> dict[str, Any]:
    return json.loads(table.column("metadata")[row].as_py())


class _Extras:
    """``EpisodeExtras`` of a loaded store's episodes, read from the parts' tables on demand."""

    def __init__(self, root: Path, parts: list[_Part]) -> None:
        self.root, self.parts = root, parts
        self._firsts = np.array([p.first_episode for p in parts])
        self._texts: dict[str, pa.Table] = {}

    def get(self, k: int) -> EpisodeExtras:
        part = self.parts[int(np.searchsorted(self._firsts, k, side="right")) - 1]
        row = k - part.first_episode
        table = part.episodes
        value = {
            name: table.column(name)[row].as_py()
            for name in ("episode", "metadata", "logged", "has_views", "has_messages", "frames_group")
        }
        views = messages = None
        if value["has_views"] or value["has_messages"]:
            views, messages = self._text(part, row)
            views = views if value["has_views"] else None
            messages = messages if value["has_messages"] else None
        group = value["frames_group"]
        loader = (
            None
            if group is None or group < 0
            else _FramesLoader(part_file(self.root, "frames", part.name), group, value["episode"])
        )
        try:
            return EpisodeExtras(
                value["episode"],
                json.loads(value["metadata"]),
                None if value["logged"] is None else json.loads(value["logged"]),
                views,
                messages,
                loader,
            )
        except json.JSONDecodeError as error:
            raise CorpusFormatError(
                f"{part_file(self.root, 'episodes', part.name)}: episode {value['episode']!r}: "
                f"metadata is not JSON ({error.msg})"
            ) from None

    def _text(self, part: _Part, row: int) -> tuple[list[str], list[str]]:
        path = part_file(self.root, "decisions", part.name)
        if part.name not in self._texts:
            self._texts[part.name] = _read_table(path, columns=["view", "message"])
        lengths = part.episodes.column("decisions").to_numpy().astype(np.int64)
        first = int((lengths[:row] + 1).sum())
        block = self._texts[part.name].slice(first, int(lengths[row]) + 1)
        return block.column("view").to_pylist(), block.column("message").to_pylist()[1:]


class _FramesLoader:
    """Reads one episode's frames from its part's frames table when called."""

    def __init__(self, path: Path, group: int, episode_id: str) -> None:
        self.path, self.group, self.episode_id = path, group, episode_id

    def __call__(self) -> Frames:
        with open_file(self.path) as handle:
            return frame_codec.read_frames(self.path, handle, self.group, self.episode_id)


def _read_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    with open_file(path) as handle:
        with arrow_reads():
            return _checked(lambda: pq.read_table(handle, columns=columns, page_checksum_verification=True), path)


def _checked(action: Any, path: Path) -> Any:
    """Run ``action``; Arrow, OS and value errors become ``CorpusFormatError`` naming ``path``."""
    try:
        return action()
    except (CorpusFormatError, UnsafeCorpusPathError, EpisodeError):
        raise
    except _READ_ERRORS as error:
        raise CorpusFormatError(f"{path}: not a readable corpus table ({type(error).__name__}: {error})") from None
