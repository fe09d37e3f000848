"""Opening a corpus: each decisions table streamed in batches of whole episodes, checked.

Each batch is kept only as the episodes' ``decision_events``, so opening and scoring never hold
the state columns (``workbench.data.storage.decode`` reads them whole when they are asked for).
The status columns are not read here (``OPEN_COLUMNS``): scoring derives the status from the
counts, and the whole-column read checks the stored one against them.

Arrow decodes the next batch on a second thread (``read_ahead``) while this one checks the last
and computes its events; the decoded rows go into one block whose buffers are reused batch
after batch (on this project's VM each fresh page is a fault costing microseconds).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from workbench.data.episodes import STATE_DTYPES, DecisionArrays, check_values
from workbench.data.episodes.events import DecisionEvents, decision_events
from workbench.data.storage.decode import (
    OPEN_COLUMNS,
    STATE_COPIES,
    Part,
    check_batch,
    check_totals,
    checked,
    copy_columns,
    open_decisions,
)
from workbench.data.storage.events_table import read_part_events
from workbench.data.storage.layout import open_file, part_file
from workbench.data.storage.parquet import READ_POOL
from workbench.data.storage.schema import COUNT_COLUMNS
from workbench.errors import CorpusValueError, EpisodeValueError

#: Rows per batch of the streaming read (at most; a row group is cut in batches of this many):
#: its block (~5 MB) is reused batch after batch.
STREAM_BATCH = 1 << 16


def read_events(root: Path, parts: list[Part]) -> DecisionEvents | None:
    """The ``decision_events`` of every part's episodes as one batch, numbered across the
    parts: from the part's events table when it matches its decisions table
    (``workbench.data.storage.events_table``), else read from the decisions table in batches
    of whole episodes that are checked (see the module) and dropped; None for parts without
    episodes."""
    joined = _Joined(sum(int(p.episodes.column("decisions").to_numpy().sum()) + p.episodes.num_rows for p in parts))
    first_decision = 0
    for part in parts:
        stored = read_part_events(root, part, first_decision)
        if stored is not None:
            joined.add(stored, rows=int(stored.lengths.sum()) + len(stored.lengths))
        else:
            path = part_file(root, "decisions", part.name)
            with open_file(path) as handle:
                for events in part_events(handle, path, root, part, first_decision):
                    joined.add(events, rows=int(events.lengths.sum()) + len(events.lengths))
        first_decision += int(part.episodes.column("decisions").to_numpy().sum())
    READ_POOL.release_unused()
    return joined.result()


class _Joined:
    """Batches' events appended into one growing array per key, sized ahead from the share of
    the rows read so far (memory never written stays unallocated), so joining them copies
    nothing at the end: at 10M decisions a final concatenation was ~70 MB of fresh memory."""

    _SLACK = 1.25

    def __init__(self, total_rows: int) -> None:
        self.total_rows = total_rows
        self.rows = 0
        self.arrays: dict[str, np.ndarray] = {}
        self.used: dict[str, int] = {}

    def add(self, events: DecisionEvents, rows: int) -> None:
        self.rows += rows
        for key, values in events.arrays().items():
            used = self.used.get(key, 0)
            array = self.arrays.get(key)
            if array is None or used + len(values) > len(array):
                expected = int(self._SLACK * (used + len(values)) * self.total_rows / max(self.rows, 1)) + 16
                grown = np.empty((max(expected, 2 * used, used + len(values)), *values.shape[1:]), values.dtype)
                if array is not None:
                    grown[:used] = array[:used]
                self.arrays[key] = array = grown
            array[used : used + len(values)] = values
            self.used[key] = used + len(values)

    def result(self) -> DecisionEvents | None:
        if not self.arrays:
            return None
        return DecisionEvents(**{key: array[: self.used[key]] for key, array in self.arrays.items()})


def part_events(handle: Any, path: Path, root: Path, part: Part, first_decision: int) -> Iterator[DecisionEvents]:
    """The ``decision_events`` of ``part``'s episodes, read from its decisions table (``handle``,
    at ``path``) in batches of whole episodes, each checked first (see the module); decisions
    numbered from ``first_decision``."""
    reader, episodes = open_decisions(handle, path, root, part)
    ids = part.episodes.column("episode").to_pylist()
    lengths = part.episodes.column("decisions").to_numpy().astype(np.int64)
    env_return = part.episodes.column("env_return").to_numpy().astype(np.float64)
    steps = part.episodes.column("steps").to_numpy().astype(np.int64)
    ends = np.cumsum(lengths + 1)  # the part's row after each episode's last
    decisions_before = np.concatenate([[0], np.cumsum(lengths)])
    batches = read_ahead(_row_groups(reader))
    block = _Block()  # counts stay uint16 here: the block is dropped, nothing to narrow
    emitted = decoded = 0
    try:
        while (batch := checked(lambda: next(batches, None), path)) is not None:
            if not batch.num_rows:
                continue
            check_batch(batch, path, decoded, episodes, reader)
            block.append(decoded, batch)
            decoded += batch.num_rows
            complete = int(np.searchsorted(ends, decoded, side="right"))  # episodes wholly read
            if complete == emitted:
                continue
            first, cut = int(ends[emitted - 1]) if emitted else 0, int(ends[complete - 1])
            arrays = block.arrays(
                first, cut, ids[emitted:complete], lengths[emitted:complete], env_return[emitted:complete]
            )
            try:
                check_values(arrays)
            except EpisodeValueError as error:
                raise CorpusValueError(f"{path}: {error}") from None
            check_totals(arrays, steps[emitted:complete], part_file(root, "episodes", part.name), emitted)
            yield decision_events(arrays, first_decision + int(decisions_before[emitted]), part.first_episode + emitted)
            block.drop_before(cut)
            emitted = complete
    finally:
        batches.close()  # stops the reading thread before the file closes
    episodes.finish(reader)


def _row_groups(reader: Any) -> Iterator[pa.RecordBatch]:
    """The table's rows, a row group at a time (``OPEN_COLUMNS``; Arrow decodes a group's
    columns on its threads). Arrow's own batch scan decoded up to 16 groups ahead: 62-81 MB
    of its pool at 1M decisions, where this holds the group being checked and the next one."""
    for group in range(reader.num_row_groups):
        table = reader.read_row_group(group, columns=OPEN_COLUMNS, use_threads=True)
        yield from table.to_batches(max_chunksize=STREAM_BATCH)


def read_ahead(items: Iterator[Any]) -> Generator[Any, None, None]:
    """``items`` produced one ahead on a second thread: Arrow decodes the next batch (without
    the GIL) while this thread checks and copies the last one (measured 60-100 ms less of a
    400 ms open). An error on that thread is raised here; closing the generator stops it."""
    slots: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def hand_over(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for value in items:
                if not hand_over(("item", value)):
                    return
        except BaseException as error:  # handed to the consuming thread, raised there
            hand_over(("error", error))
            return
        hand_over(("end", None))

    thread = threading.Thread(target=produce, name="workbench-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = slots.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        thread.join()


class _Block:
    """Decoded rows of one part, column-major, from part row ``first_row``: the rows of the
    episodes not yet complete, then the next batch. Its buffers are reused batch after batch
    (each fresh array would be page faults again), so ``arrays`` are views valid until the next
    ``append``."""

    def __init__(self) -> None:
        self.first_row = self.n_rows = self.n_actions = 0
        self.inventory: np.ndarray = np.empty((0, 16), STATE_DTYPES["inventory"])
        self.counts: np.ndarray = np.empty((0, 22), STATE_DTYPES["achievement_counts"])
        self.pos: np.ndarray = np.empty((0, 2), STATE_DTYPES["player_pos"])
        self.env_reward = np.empty(0)
        self.done = np.empty(0, bool)
        self.action_offsets = np.zeros(1, np.int64)
        self.action_ids = np.empty(0, np.uint8)

    def _reserve(self, rows: int, actions: int) -> None:
        """Room for ``rows`` rows and ``actions`` action ids, keeping the rows held."""
        if rows <= len(self.env_reward) and actions <= len(self.action_ids):
            return
        held, steps = self.n_rows, self.n_actions
        old = (self.inventory, self.counts, self.pos, self.env_reward, self.done, self.action_offsets, self.action_ids)
        capacity, action_capacity = max(rows, 2 * held), max(actions, 2 * steps)
        self.inventory = np.empty((16, capacity), STATE_DTYPES["inventory"]).T
        self.counts = np.empty((22, capacity), STATE_DTYPES["achievement_counts"]).T
        self.pos = np.empty((2, capacity), STATE_DTYPES["player_pos"]).T
        self.env_reward = np.empty(capacity)
        self.done = np.empty(capacity, bool)
        self.action_offsets = np.zeros(capacity + 1, np.int64)
        self.action_ids = np.empty(action_capacity, np.uint8)
        fresh: tuple[np.ndarray, ...] = (self.inventory, self.counts, self.pos, self.env_reward, self.done)
        for target, values in zip(fresh, old[:5]):
            target[:held] = values[:held]
        self.action_offsets[: held + 1] = old[5][: held + 1]
        self.action_ids[:steps] = old[6][:steps]

    def append(self, first_row: int, batch: pa.RecordBatch) -> None:
        """``batch``'s rows after the held ones (``first_row``: its first part row)."""
        if not self.n_rows:
            self.first_row, self.n_actions = first_row, 0
            self.action_offsets[0] = 0
        actions = batch.column("actions")
        offsets = actions.offsets.to_numpy()
        steps = int(offsets[-1] - offsets[0])
        keep, n = self.n_rows, self.n_rows + batch.num_rows
        self._reserve(n, self.n_actions + steps)
        copy_columns(self.inventory, keep, batch, STATE_COPIES[0][1])
        copy_columns(self.counts, keep, batch, COUNT_COLUMNS)
        copy_columns(self.pos, keep, batch, STATE_COPIES[2][1])
        copy_columns(self.env_reward[:, None], keep, batch, ["env_reward"])
        copy_columns(self.done[:, None], keep, batch, ["done"])
        self.action_offsets[keep + 1 : n + 1] = self.n_actions + (offsets[1:] - offsets[0])
        self.action_ids[self.n_actions : self.n_actions + steps] = actions.flatten().to_numpy(zero_copy_only=False)
        self.n_rows, self.n_actions = n, self.n_actions + steps

    def arrays(
        self, first: int, last: int, ids: Sequence[str], lengths: np.ndarray, env_return: np.ndarray
    ) -> DecisionArrays:
        """Part rows ``first .. last - 1`` (whole episodes ``ids``) as ``DecisionArrays`` (views)."""
        a, b = first - self.first_row, last - self.first_row
        offsets = self.action_offsets[a : b + 1]
        return DecisionArrays(
            ids=tuple(ids),
            lengths=lengths,
            env_return=env_return,
            inventory=self.inventory[a:b],
            achievement_counts=self.counts[a:b],
            player_pos=self.pos[a:b],
            env_reward=self.env_reward[a:b],
            done=self.done[a:b],
            action_ids=self.action_ids[int(offsets[0]) : int(offsets[-1])],
            action_offsets=offsets - offsets[0],
        )

    def drop_before(self, first: int) -> None:
        """Forget the rows before part row ``first`` (the rest move to the front)."""
        a = first - self.first_row
        rest = self.n_rows - a
        for name in ("inventory", "counts", "pos", "env_reward", "done"):
            values = getattr(self, name)
            values[:rest] = values[a : self.n_rows]  # numpy copies overlapping rows safely
        base = int(self.action_offsets[a])
        self.action_offsets[: rest + 1] = self.action_offsets[a : self.n_rows + 1] - base
        self.action_ids[: self.n_actions - base] = self.action_ids[base : self.n_actions]
        self.first_row, self.n_rows, self.n_actions = first, rest, self.n_actions - base
