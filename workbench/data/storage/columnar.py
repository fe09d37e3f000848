"""Writing and reading columnar corpus folders (schema_version 2): parts appended under a lock.

A write (``append``) holds the folder's lock, checks the ids it adds against every committed
part, then writes one new part: its decisions table, its frames table (when any episode has
frames) and last its episodes table, the commit record, each to a temporary file renamed into
place. Values are checked before anything is renamed. A read (``load``) lists the committed
parts, reads each one's episodes table whole and streams its decisions table, checking every
value again and keeping only the episodes' events (``workbench.data.storage.decode``); the state
columns are decoded whole when first asked for.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.data.episodes import (
    INDEX_COLUMNS,
    ColumnStore,
    Corpus,
    DecisionArrays,
    EpisodeExtras,
    check_values,
    count_dtype,
    index_frame,
    narrow,
)
from workbench.data.episodes.events import DecisionEvents, decision_events
from workbench.data.storage import frames as frame_codec
from workbench.data.storage.decode import Part, checked, largest_count, read_arrays, read_table
from workbench.data.storage.events_table import file_digest, write_events
from workbench.data.storage.extras import PartExtras
from workbench.data.storage.layout import (
    committed_parts,
    new_part_name,
    part_file,
    read_marker,
    refuse_symlinks,
)
from workbench.data.storage.rows import check_episodes_table, episode_row, parse_json
from workbench.data.storage.schema import EPISODE_SCHEMA, Texts, check_schema, decisions_table, episodes_table
from workbench.data.storage.stream import read_events
from workbench.errors import CorpusFormatError
from workbench.util.atomic import atomic_path, fsync_file

#: Rows per batch written: bounds a write's memory.
WRITE_BATCH = 1 << 18
#: Rows per row group: bounds a read's Arrow memory, since Arrow decodes a row group whole
#: before cutting it into batches and decodes a few ahead (at 2^18 rows a group, opening 1M
#: decisions peaked at 62-81 MB in Arrow's pool).
ROW_GROUP = 1 << 17


# -- writing ----------------------------------------------------------------------------------
#: Ids of parts already read, by (folder, part): a committed part is never rewritten, so a
#: recording that appends one part per episode reads each part's ids once, not once per append.
_PART_IDS: dict[tuple[str, str], list[str]] = {}


def part_ids(root: Path) -> dict[str, list[str]]:
    """Committed part -> the ids of the episodes its episodes table holds, in commit order."""
    ids: dict[str, list[str]] = {}
    for part in committed_parts(root):
        key = (str(root.resolve()), part)
        if key not in _PART_IDS:
            path = part_file(root, "episodes", part)
            _PART_IDS[key] = read_table(path, columns=["episode"]).column("episode").to_pylist()
        ids[part] = _PART_IDS[key]
    return ids


def stored_ids(root: Path) -> dict[str, str]:
    """Episode id -> the part holding it, over the committed parts (call under the lock)."""
    return {episode_id: part for part, ids in part_ids(root).items() for episode_id in ids}


def append(
    root: Path,
    corpus: Corpus,
    replaces: set[str],
    *,
    progress: bool = False,
    staged: list[Path] | None = None,
    logged_texts: Sequence[str | None] | None = None,
) -> str | None:
    """Write ``corpus`` as one new part of ``root`` (under the lock, ids already checked);
    ``replaces`` are ids an earlier part holds; ``progress`` shows a tqdm bar per table. Returns
    the part's name (None for no episodes).

    With ``staged`` (a list), the part is written but not committed: its episodes table, the
    commit record, is left under a temporary name, and every file of the part is appended to
    ``staged`` (the temporary episodes table last) for ``commit_staged`` or ``discard_staged``.

    ``logged_texts``: per episode, its ``logged`` document's text as ``check_storable`` made it
    for this same, unchanged episode (an import checks each episode before it is saved), so it
    is not encoded again; None (or None for an episode): made here."""
    if len(corpus) == 0:
        return None
    part = new_part_name()
    extras = [corpus.episode_extras(i) for i in range(len(corpus))]
    texts = _texts(extras)
    index = corpus.index
    columns = {column: index[column].tolist() for column in index.columns}  # a column at a time, not a cell
    index_rows = [{column: values[i] for column, values in columns.items()} for i in range(len(extras))]
    # Every row built and checked before anything is written (its JSON texts made once).
    given: list[str | None] = [None] * len(extras) if logged_texts is None else list(logged_texts)
    if len(given) != len(extras):
        raise ValueError(f"logged_texts: {len(given)} texts for {len(extras)} episodes")
    rows = [episode_row(row, e, -1, e.id in replaces, text) for row, e, text in zip(index_rows, extras, given)]
    written: list[Path] = []
    try:
        decisions = part_file(root, "decisions", part)
        events: list[DecisionEvents] = []
        steps: list[np.ndarray] = []
        with atomic_path(decisions) as tmp:
            writer = None
            batches = corpus.decision_batches(WRITE_BATCH)
            first_decision = 0
            for start, arrays in _bar()(batches, desc="decisions", unit="batch", disable=not progress):
                check_values(arrays)
                narrowed = narrow(arrays)
                table = decisions_table(narrowed, None if texts is None else texts[start : start + arrays.n_episodes])
                writer = writer or pq.ParquetWriter(
                    str(tmp), table.schema, compression="zstd", write_page_checksum=True
                )
                writer.write_table(table, row_group_size=ROW_GROUP)
                # What opening computes from the stored rows, whose status it derives from the counts.
                events.append(decision_events(replace(narrowed, stored_status=None), first_decision))
                steps.append(arrays.steps())
                first_decision += arrays.n_decisions
            if writer is not None:
                writer.close()
            digest = file_digest(tmp)
        written.append(decisions)
        events_path = part_file(root, "events", part)
        written.append(events_path)  # removed with the rest if anything after it fails
        write_events(events_path, [e.id for e in extras], np.concatenate(steps), events, digest)
        groups = _write_frames(root, part, extras, written, progress)
        for row, group in zip(rows, groups):
            row["frames_group"], row["has_frames"] = group, group >= 0
        episodes = part_file(root, "episodes", part)
        if staged is not None:
            # A temporary name (atomic's): a crash leaves it for the next writer to remove.
            pending = episodes.with_name(f".{episodes.name}.{secrets.token_hex(8)}.tmp")
            written.append(pending)
            pq.write_table(episodes_table(rows), str(pending), compression="zstd", write_page_checksum=True)
            fsync_file(pending)
            staged.extend(written)
            return part
        with atomic_path(episodes) as tmp:
            pq.write_table(episodes_table(rows), str(tmp), compression="zstd", write_page_checksum=True)
    except BaseException:
        for path in written:  # we hold the lock: nobody reads or writes this uncommitted part
            path.unlink(missing_ok=True)
        raise
    return part


def _bar() -> Any:
    """tqdm's bar, imported when a save runs (tqdm.auto imports asyncio and importlib.metadata:
    ~25 ms of every command that only opens a corpus)."""
    from tqdm.auto import tqdm

    return tqdm


def _texts(extras: list[EpisodeExtras]) -> list[Texts] | None:
    if all(e.views is None and e.messages is None and e.calls is None for e in extras):
        return None
    return [(e.views, e.messages, e.calls) for e in extras]


def _write_frames(root: Path, part: str, extras: list[EpisodeExtras], written: list[Path], progress: bool) -> list[int]:
    """Frames of the episodes that have them, streamed one episode at a time; their row groups (-1 = none)."""
    if not any(e.frames_loader is not None for e in extras):
        return [-1] * len(extras)
    groups = []
    path = part_file(root, "frames", part)
    with atomic_path(path) as tmp:
        writer = frame_codec.FramesWriter(tmp)
        try:
            for e in _bar()(extras, desc="frames", unit="episode", disable=not progress):
                groups.append(-1 if e.frames_loader is None else writer.add(e.id, e.frames_loader()))
        finally:
            writer.close()
    written.append(path)
    return groups


# -- reading ----------------------------------------------------------------------------------
def load(root: Path, only: Collection[str] | None = None) -> Corpus:
    """Open a columnar corpus folder: every committed part (or those named in ``only``) read and
    checked (see the module), keeping the episodes' events for scoring; the state columns are
    read again, whole, when first asked for (an episode, ``decision_arrays``)."""
    refuse_symlinks(root)
    read_marker(root)
    parts = read_parts(root, only)
    rows_seen = sum(int(p.episodes.column("decisions").to_numpy().sum()) + p.episodes.num_rows for p in parts)
    if not parts:  # a folder whose only writes failed their checks: an empty corpus
        return Corpus()
    events = read_events(root, parts)
    extras = PartExtras(root, parts)
    store = ColumnStore(
        None,
        extras.get,
        metadata=extras.metadata,
        load_arrays=partial(_read_arrays, root, parts, rows_seen),
        ids=[i for p in parts for i in p.episodes.column("episode").to_pylist()],
        lengths=np.concatenate([p.episodes.column("decisions").to_numpy() for p in parts]),
        events=None if events is None else [events],
    )
    live, index = live_episodes(root, parts)
    return Corpus.from_store(store, live, index)


def read_parts(root: Path, only: Collection[str] | None) -> list[Part]:
    """The committed parts of ``root`` (those named in ``only``, when given), their episodes
    tables read and checked.

    Args:
        root: The corpus folder.
        only: Part names to read (None: every part).

    Returns:
        The parts, in commit order.

    Raises:
        CorpusFormatError: An episodes table does not read or holds a bad value; names the file.
    """
    parts: list[Part] = []
    episodes_seen = rows_seen = 0
    for name in committed_parts(root):
        if only is not None and name not in only:
            continue
        path = part_file(root, "episodes", name)
        table = read_table(path)
        checked(partial(check_schema, table.schema, EPISODE_SCHEMA, str(path)), path)
        check_episodes_table(table, path)
        parts.append(Part(name, table, episodes_seen, rows_seen))
        episodes_seen += table.num_rows
        rows_seen += int(pa.compute.sum(table.column("decisions")).as_py() or 0) + table.num_rows
    return parts


def _read_arrays(root: Path, parts: list[Part], rows: int) -> DecisionArrays:
    """The parts' state columns whole, counts narrowed to what the tables' statistics allow
    (read only now: opening needs no decisions table's footer when the events tables serve)."""
    return read_arrays(root, parts, rows, count_dtype(largest_count(root, parts)))


def live_episodes(root: Path, parts: list[Part]) -> tuple[list[int], pd.DataFrame]:
    """The store episodes the corpus shows, in order, and its index: an id written again with
    ``replaces`` takes its first position and its newest data; an id in two parts otherwise is
    an error naming both (ids never collide). Read column by column (a dict per row took 26 of
    the ~45 ms this took for 3,000 episodes).

    Args:
        root: The corpus folder.
        parts: Its parts (``read_parts``).

    Returns:
        The store positions of the episodes shown, and the corpus index.

    Raises:
        CorpusFormatError: An id is in two parts without ``replaces``, or a metadata document
            does not read; names the file.
    """
    columns: dict[str, list[Any]] = {name: [] for name in INDEX_COLUMNS}
    replaces: list[bool] = []
    part_names: list[str] = []
    for part in parts:
        table = part.episodes
        values = {name: table.column(name).to_pylist() for name in INDEX_COLUMNS}
        path = part_file(root, "episodes", part.name)
        seeds = values["seed"]
        for offset, text in enumerate(table.column("metadata").to_pylist()):
            metadata = parse_json(text, path, offset, "metadata")  # checked on every open
            if seeds[offset] is None:
                seeds[offset] = metadata.get("seed") if metadata is not None else None
        for name, column in columns.items():
            column.extend(values[name])
        replaces.extend(table.column("replaces").to_pylist())
        part_names.extend([part.name] * table.num_rows)
    ids = columns["episode"]
    if len(set(ids)) == len(ids):  # no id written twice: every stored episode, in store order
        return list(range(len(ids))), index_frame(columns)
    position: dict[str, int] = {}
    owner: dict[str, str] = {}
    live: list[int] = []
    for k, episode_id in enumerate(ids):
        if episode_id in position:
            if not replaces[k]:
                raise CorpusFormatError(
                    f"{root}: episode id {episode_id!r} is in parts {owner[episode_id]} and {part_names[k]}; "
                    "ids must be unique (was a part copied in by hand?)"
                )
            live[position[episode_id]] = k
        else:
            position[episode_id] = len(live)
            live.append(k)
        owner[episode_id] = part_names[k]
    return live, index_frame({name: [column[k] for k in live] for name, column in columns.items()})
