"""Importing into a corpus folder in bounded parts, on worker processes or a cluster: ``import_into``.

The input is cut into tasks (about ``TASK_BYTES`` of files, or ``SESSIONS_PER_TASK`` sessions
of a trace database), read and checked where they run (this process, ``workers`` spawned
processes, or a Dask cluster through a ``Mapper``), and kept here in input order, so ids are
made unique exactly as a serial import makes them. Every ``BATCH_DECISIONS`` decisions kept
are written as one uncommitted part (``storage.staged_save``): memory holds a batch and the
tasks in flight, never the run. The parts commit together at the end; an error, Ctrl-C or a
crash leaves the folder as it was.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from workbench.data.episodes import Corpus, Episode
from workbench.data.importers import trace_outcomes
from workbench.data.importers.batch import (
    BadInput,
    Collector,
    ImportIssue,
    Normalised,
    batch_files,
    checked_items,
    keep_items,
    report_text,
    storable_texts,
)
from workbench.data.importers.crafter_recorder import recorder_file_items
from workbench.data.importers.producers import producer_for_version
from workbench.data.importers.rollouts import rollout_file_read
from workbench.data.importers.trace_batch import TraceBatch, report_batch
from workbench.data.importers.traces import read_sessions, trace_sessions
from workbench.data.storage import remove_empty_corpus, staged_save
from workbench.util.gc_pause import gc_paused
from workbench.util.processes import die_with_parent

#: Decisions kept before they are written as a part: bounds the memory of an import.
BATCH_DECISIONS = 50_000
#: Input bytes of files per task (about 2,600 decisions of task-app rollouts with text observations).
TASK_BYTES = 16 << 20
#: Sessions of a trace database per task.
SESSIONS_PER_TASK = 64
#: The input kinds and the file patterns each reads.
SOURCES: dict[str, tuple[tuple[str, ...], str]] = {
    "recorder": (("*.npz",), "crafter.Recorder episode files (.npz)"),
    "rollouts": (("*.json", "*.jsonl"), "rollout files (.json, .jsonl)"),
    "traces": (("*.db",), "trace databases (.db)"),
}

#: ``mapper(function, tasks)``: each task's result, in task order (a few tasks in flight).
Mapper = Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[Any]]


@dataclass
class ImportReport:
    """What ``import_into`` saved and the problems with everything else (``ImportResult``'s
    report without the episodes themselves, which are in the corpus folder).

    Attributes:
        episodes: How many episodes were saved.
        decisions: How many decisions they hold.
        files: How many files were read.
        parts: How many parts the save wrote.
        errors: One issue per item that did not import.
        warnings: Issues about episodes that did import.
        normalised: Per file, the decisions the task app's tool-call rules normalised.
        notes: Other things the report says.
        metadata: Each saved episode's producer fields (for the report's producer lines).
        ids: The saved episodes' ids.
        counts: Their counts sources.
    """

    episodes: int = 0
    decisions: int = 0
    files: int = 0
    parts: int = 0
    errors: list[ImportIssue] = field(default_factory=list)
    warnings: list[ImportIssue] = field(default_factory=list)
    normalised: dict[str, list[Normalised]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    metadata: list[dict[str, Any]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    counts: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every item imported (warnings do not count)."""
        return not self.errors

    def __str__(self) -> str:
        return report_text(self, self.episodes, self.decisions, self.metadata, self.ids, self.counts)


def import_into(
    source: str,
    path: str | Path,
    out: str | Path,
    *,
    overwrite: bool = False,
    workers: int = 1,
    mapper: Mapper | None = None,
    progress: bool = True,
    producer: str | None = None,
    config: Mapping[str, Any] | None = None,
    skip: Collection[str] = (),
    batch_decisions: int = BATCH_DECISIONS,
    hint: str = "overwrite=True",
) -> ImportReport:
    """Import ``path`` (``source``: ``recorder``, ``rollouts`` or ``traces``) into the corpus
    folder ``out``, all or nothing: the episodes ``import_crafter_recorder``,
    ``import_rollouts`` or ``import_traces`` give, under the same ids, saved in parts of about
    ``batch_decisions`` decisions that commit together when every task has run.

    Args:
        source: ``recorder``, ``rollouts`` or ``traces``.
        path: A file or a folder of them.
        out: The corpus folder (made if missing; removed again if nothing was saved in it).
        overwrite: Replace episodes ``out`` already holds under the same ids.
        workers: Worker processes reading in parallel (1: this process).
        mapper: Runs the tasks instead (e.g. on a Dask cluster: ``workbench.cluster``).
        progress: Show a progress bar over the tasks.
        producer: The loop that produced rollouts or traces, ``"synth-ai==X"`` (None: told
            from their shape).
        config: A trace database's step_rewards table, if known.
        skip: Trace session ids not to import (already held).
        batch_decisions: Decisions a part holds (bounds the memory).
        hint: How the error for an id ``out`` holds names the way to replace it.

    Returns:
        The report (nothing saved when no episode imported).

    Raises:
        TargetExistsError: An id ``out`` holds, without ``overwrite`` (nothing saved).
        WorkbenchError: ``producer`` names no known Crafter loop; ``out`` is no corpus folder.
        OutputError: ``out`` cannot be written (nothing saved).
    """
    if producer is not None:  # "" too: refused by name, never read as "not given"
        producer_for_version(producer)  # an unknown producer fails before anything is read
    out = Path(out)
    files, collected = batch_files(Path(path), *SOURCES[source])
    report = ImportReport(files=len(files))
    tasks, running = _plan(source, files, collected, producer, config, skip)
    existed = out.exists()
    try:
        # The collector off: its walks over the batch held were a fifth of an import's CPU (gc_pause).
        with gc_paused(), _runner(workers, mapper) as run, staged_save(out, overwrite=overwrite, hint=hint) as save:
            bar = tqdm(total=len(tasks), desc="import", unit="task", disable=not progress or len(tasks) < 2)
            with bar:
                texts: list[str | None] = []  # the logged text of each episode held, as its check made it
                for results in run(_read_task, tasks):
                    for file, items, warnings, logged in results:
                        keep_items(collected, file, items)
                        texts += logged
                        collected.warnings.extend(warnings)
                    bar.update()
                    if sum(e.n_decisions for e in collected.episodes) >= batch_decisions:
                        _write(save, collected, report, texts)
                _write(save, collected, report, texts)
            report.parts = len(save.parts)
    except BaseException:
        if not existed:
            remove_empty_corpus(out)  # only a folder this import made, and only while it is empty
        raise
    if not report.episodes and not existed:
        remove_empty_corpus(out)
    for file, batch in running:
        report_batch(collected, report.notes, file, batch)
    report.errors, report.warnings, report.normalised = collected.errors, collected.warnings, collected.normalised
    return report


def _write(save: Any, collected: Collector, report: ImportReport, texts: list[str | None]) -> None:
    """Write what ``collected`` holds as one staged part and forget the episodes (their ids stay
    in ``collected``, so later ones are still made unique against them) and their ``texts``
    (each one's logged text, as its storable check made it: not encoded again)."""
    if not collected.episodes:
        return
    corpus = Corpus(collected.episodes)
    save.hand_logged_texts(texts)
    save.add(corpus)
    report.episodes += len(corpus)
    report.decisions += corpus.n_decisions
    report.ids += list(corpus.ids)
    report.counts += [e.metadata.get("counts", "observed") for e in collected.episodes]
    report.metadata += [
        {key: e.metadata[key] for key in ("producer", "weights_ignored") if key in e.metadata}
        for e in collected.episodes
    ]
    collected.episodes = []
    texts.clear()
    del corpus
    # Any cycles of the batch let go (the collector is paused during an import): the two young
    # generations hold everything made since the pause, the older one the process's modules,
    # whose walk (~0.1 s) it skips.
    gc.collect(1)


def _plan(
    source: str,
    files: list[Path],
    collected: Collector,
    producer: str | None,
    config: Mapping[str, Any] | None,
    skip: Collection[str],
) -> tuple[list[tuple[Any, ...]], list[tuple[Path, TraceBatch]]]:
    """The tasks, and per trace database what its listing reports (running, skipped sessions)."""
    if source != "traces":
        chunks: list[list[str]] = []
        size = TASK_BYTES
        for file in files:
            if size >= TASK_BYTES:
                chunks.append([])
                size = 0
            chunks[-1].append(str(file))
            size += file.stat().st_size
        return [(source, chunk, producer) for chunk in chunks], []
    tasks: list[tuple[Any, ...]] = []
    running = []
    for file in files:
        try:
            every = trace_sessions(file, skip=skip)
        except BadInput as error:
            collected.errors.append(ImportIssue(str(file), error.location, error.message))
            continue
        sessions = [s for s in every if s.session_id not in skip]
        listed = TraceBatch(
            skipped=len(every) - len(sessions), running=[s.session_id for s in sessions if not s.finished]
        )
        running.append((file, listed))
        todo = [s for s in sessions if s.finished]
        for start in range(0, len(todo), SESSIONS_PER_TASK):
            tasks.append((source, [str(file)], producer, todo[start : start + SESSIONS_PER_TASK], config))
    return tasks, running


#: One file's part of a task: its name, its items (episodes checked storable, and issues), its
#: warnings, and the logged text of each of its episodes (as the check made it; None: not made).
FileItems = tuple[str, list[Episode | ImportIssue], list[ImportIssue], list[str | None]]


def _read_task(task: tuple[Any, ...]) -> list[FileItems]:
    """One task's items per file (runs in a worker): episodes checked storable, and issues
    (errors); its warnings (a trace database's empty sessions skipped, partial ones imported);
    the episodes' logged texts."""
    with gc_paused():  # a task's documents and episodes hold no cycles: no collector walks (gc_pause)
        return _task_items(task)


def _task_items(task: tuple[Any, ...]) -> list[FileItems]:
    """``_read_task``'s result, read with the collector as it is."""
    source, files, producer = task[:3]
    told = producer_for_version(producer) if producer is not None else None
    found: list[FileItems] = []
    if source == "rollouts":
        for file in files:
            items, texts = checked_items(rollout_file_read(Path(file), told), file)
            found.append((file, items, [], texts))
        return found
    if source == "recorder":
        for file in files:
            items = recorder_file_items(Path(file))
            found.append((file, items, [], [None for item in items if isinstance(item, Episode)]))
        return found
    sessions, config = task[3:]
    db = files[0]
    batch = read_sessions(Path(db), sessions, config=config, producer=told)
    checked, logged = storable_texts(batch.episodes, db)
    rows: list[Episode | ImportIssue] = [issue or e for e, issue in zip(batch.episodes, checked, strict=True)]
    kept = [text for text, issue in zip(logged, checked) if issue is None]
    rows += batch.errors
    rows += [ImportIssue(db, f"session {sid}", "locked by another process: import again later") for sid in batch.locked]
    return [(db, rows, trace_outcomes.session_warnings(db, batch.empty, batch.episodes), kept)]


@contextmanager
def _runner(workers: int, mapper: Mapper | None) -> Iterator[Mapper]:
    """The mapper the tasks run on: ``mapper``, else ``workers`` spawned processes, else here."""
    if mapper is not None:
        yield mapper
        return
    if workers <= 1:
        yield lambda function, tasks: map(function, tasks)
        return
    context = multiprocessing.get_context("spawn")  # numba and fork do not mix; spawn is safe everywhere
    pool = futures.ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),))
    try:
        yield lambda function, tasks: bounded_map(pool.submit, function, tasks, 2 * workers)
    except BaseException:
        # Ctrl-C or a failed save: stop the workers now (what they read is not kept anyway).
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown()


def _init_worker(parent: int) -> None:
    """A worker exits with its parent and leaves Ctrl-C to it (the parent stops the workers)."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def bounded_map(
    submit: Callable[..., Any], function: Callable[[Any], Any], tasks: Iterable[Any], window: int
) -> Iterator[Any]:
    """``function(task)`` for each task through ``submit`` (an executor's or a Dask client's),
    results in task order, at most ``window`` tasks submitted and not yet taken (so finished
    results never pile up in memory).

    Args:
        submit: ``submit(function, task)`` -> a future with ``result()``.
        function: What each task runs.
        tasks: The tasks.
        window: The most tasks in flight.

    Yields:
        Each task's result, in order.
    """
    queue: deque[Any] = deque()
    for task in tasks:
        queue.append(submit(function, task))
        if len(queue) >= window:
            yield _take(queue.popleft())
    while queue:
        yield _take(queue.popleft())


def _take(future: Any) -> Any:
    result = future.result()
    release = getattr(future, "release", None)  # a Dask future: let the worker drop it
    if release is not None:
        release()
    return result
