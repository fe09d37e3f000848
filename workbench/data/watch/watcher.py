"""``Watcher``: appends each new episode of a live source into a corpus folder once, across restarts.

What was appended is told by the target corpus itself: an episode's identity is its content
(``content_key``: run id, seed, the hash of its decisions), and a new watcher reads the
contents (and origins: ``ORIGIN_KEY`` metadata) of every episode the folder holds before its
first poll, so a restart, a crash between saving and recording progress, a file moved or read
again, a rotated log or a source imported before never duplicates an episode, while a file
rewritten with another run is read again and its episode appended. The source's progress (files taken, parts read, sessions done) is kept beside it in
``watch-state.json`` so a restart does not read everything again. One watcher at a time writes
into a folder (``.watch.lock``). The source is only read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.data.episodes import Corpus, Episode, unique_id
from workbench.data.importers import ImportIssue
from workbench.data.storage import holds_episodes, load_corpus, save_corpus
from workbench.data.watch.source import Poll, Source, content_key, origin_of
from workbench.data.watch.state import STATE_FILE, WATCH_LOCK, read_state, take_lock, target_folder, write_state
from workbench.errors import WatchError

__all__ = ["STATE_FILE", "WATCH_LOCK", "WatchReport", "Watcher"]
#: How soon to poll again while an item is settling (two polls see it unchanged).
SETTLE_SECONDS = 0.2


@dataclass
class WatchReport:
    """One poll's outcome.

    Attributes:
        appended: The episodes saved, under their ids in the target.
        problems: The source's items that cannot be read, each named.
        settling: How many items are not complete yet.
        skipped: How many items were offered again and are already held.
        latency: Per appended episode, seconds from landing in the source to saved and handed
            to ``on_append``.
        notes: What the source said once (see ``Poll``).
    """

    appended: Corpus = field(default_factory=Corpus)
    problems: list[ImportIssue] = field(default_factory=list)
    settling: int = 0
    skipped: int = 0
    latency: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Watcher:
    """Appends each new episode of ``source`` into the corpus folder ``into``, once.

    Args:
        source: The live source (only read).
        into: The corpus folder to append into (made when missing); the watcher holds its
            watch lock until ``close``.
        on_append: Called with the new episodes after each save (e.g. ``LiveScores.append``).

    Raises:
        WatchError: ``into`` is inside the watched folder (its own writes would be watched), is
            a file, another watcher writes into it, or its state file cannot be read.
        UnsafePathError: The state file is a symlink, a FIFO or a folder.
        CorpusFormatError: ``into`` holds a corpus that cannot be read (``load_corpus``).
    """

    def __init__(self, source: Source, into: str | Path, *, on_append: Callable[[Corpus], None] | None = None) -> None:
        self.source = source
        self.into = Path(into)
        self._on_append = on_append
        watched, target = source.path.resolve(), self.into.resolve()
        if target == watched or watched in target.parents:
            raise WatchError(f"{self.into}: the target corpus must not be inside the watched {source.path}")
        target_folder(self.into)
        self._lock = take_lock(self.into)
        try:
            self._ids, self._origins, self._contents = _held(self.into)
            self._state = read_state(self.into)
            source.restore(self._state.get("sources", {}).get(source.key, {}))
        except BaseException:
            self._lock.release()
            raise

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the folder's watch lock (idempotent)."""
        self._lock.release()

    @property
    def held(self) -> int:
        """How many episodes the target holds."""
        return len(self._ids)

    def poll(self) -> WatchReport:
        """Poll the source once, save what is new into the target, record progress.

        Returns:
            What was appended, skipped, settling and wrong in this poll.

        Raises:
            OutputError: The target or its state file cannot be written (e.g. disk full).
            UnsafePathError: The state file became a symlink.
        """
        found: Poll = self.source.poll()
        fresh: list[Episode] = []
        landed: list[float] = []
        skipped = 0
        for episode, when in zip(found.corpus, found.landed):
            origin, content = origin_of(episode.metadata), content_key(episode)
            # Identity is content (a moved file, an imported episode, a rotated log read again);
            # where a source's items are identities themselves (a corpus's ids), the item too.
            by_item = getattr(self.source, "items_are_identities", False) and origin in self._origins
            if origin is None or content in self._contents or by_item:
                skipped += 1
                continue
            self._origins.add(origin)
            self._contents.add(content)
            episode.id = unique_id(episode.id, self._ids)  # another source's episode may hold the id
            self._ids.add(episode.id)
            fresh.append(episode)
            landed.append(when)
        appended = Corpus(fresh)
        if fresh:
            save_corpus(appended, self.into)  # first the episodes, then the progress (see the module)
        self._save_progress()
        if fresh and self._on_append is not None:
            self._on_append(appended)
        now = time.time()
        latency = [now - t for t in landed]
        return WatchReport(appended, found.problems, found.settling, skipped, latency, found.notes)

    def run(
        self,
        *,
        interval: float = 1.0,
        max_polls: int | None = None,
        stop: threading.Event | None = None,
        on_report: Callable[[WatchReport], bool | None] | None = None,
        events: bool = True,
    ) -> int:
        """Poll until ``stop`` is set, ``max_polls`` polls were made or ``on_report(report)``
        returns True; between polls wait ``interval`` seconds, woken early by file events
        (watchfiles) unless ``events`` is False, and only ``SETTLE_SECONDS`` while an item is
        settling.

        Args:
            interval: Seconds between polls.
            max_polls: Stop after this many polls (None: no limit).
            stop: Set it (from another thread) to stop; None: only the other conditions stop.
            on_report: Called with each poll's report; returning True stops.
            events: Wake early on file events in the source's folders (watchfiles, if installed).

        Returns:
            The number of polls made.

        Raises:
            OutputError: The target or its state file cannot be written.
        """
        stop = stop or threading.Event()
        waits = _Waiter(self.source, stop, events)
        polls = 0
        try:
            while not stop.is_set():
                report = self.poll()
                polls += 1
                if on_report is not None and on_report(report):
                    break
                if max_polls is not None and polls >= max_polls:
                    break
                waits.wait(min(interval, SETTLE_SECONDS) if report.settling else interval)
        finally:
            waits.close()
        return polls

    def _save_progress(self) -> None:
        sources = dict(self._state.get("sources", {}))
        progress = self.source.progress()
        if sources.get(self.source.key, {} if not progress else None) == progress:  # unchanged, or nothing read yet
            return
        sources[self.source.key] = progress
        self._state = write_state(self.into, sources)


def _held(root: Path) -> tuple[set[str], set[tuple[str, str]], set[str]]:
    """The ids, origins and contents (``content_key``) the corpus folder ``root`` holds (nothing
    for a new folder): its imported episodes' contents too, so a watch never appends them again."""
    if not holds_episodes(root):
        return set(), set(), set()
    corpus = load_corpus(root)
    origins = {origin_of(corpus.episode_extras(i).metadata) for i in range(len(corpus))}
    contents = {content_key(episode) for episode in corpus}
    return set(corpus.ids), {o for o in origins if o is not None}, contents


class _Waiter:
    """Waits between polls: on watchfiles' events for the source's folders where it can, else
    (no watchfiles, nothing to watch yet, ``events`` False) on the stop event's timeout. One
    watchfiles iterator is kept while the folders stay the same: it buffers events that arrive
    during a poll, so none is lost between two waits."""

    def __init__(self, source: Source, stop: threading.Event, events: bool) -> None:
        self.source, self.stop, self.events = source, stop, events
        self._iterator: Iterator[Any] | None = None
        self._paths: list[Path] = []

    def wait(self, seconds: float) -> None:
        """Return after ``seconds``, at a file event under the watched folders, or at stop."""
        paths = self.source.watch_paths() if self.events else []
        if paths != self._paths:
            self.close()
            self._iterator = _event_iterator(paths, self.stop) if paths else None
            self._paths = paths
        if self._iterator is None:
            self.stop.wait(seconds)
            return
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stop.is_set():
            try:
                changes = next(self._iterator, None)
            except OSError:  # watchfiles cannot watch a folder (an unreadable subfolder): poll by time
                changes = None
            if changes is None:  # watchfiles stopped (stop set): poll by time
                self._iterator = None
                self.stop.wait(max(0.0, deadline - time.monotonic()))
                return
            if changes:  # a non-empty set of changes (an empty one is a timeout tick)
                return

    def close(self) -> None:
        """Stop watching files."""
        if self._iterator is not None and hasattr(self._iterator, "close"):
            self._iterator.close()
        self._iterator = None


#: How often (ms) the watchfiles iterator hands back control without changes (to check deadlines).
_TICK_MS = 50


def _event_iterator(paths: list[Path], stop: threading.Event) -> Iterator[Any] | None:
    """watchfiles' change sets (an empty one every ``_TICK_MS``), or None without watchfiles."""
    try:
        import watchfiles  # optional: the ``live`` extra; polling works without it
    except ImportError:
        return None
    return iter(
        watchfiles.watch(
            *paths,
            stop_event=stop,
            rust_timeout=_TICK_MS,
            yield_on_timeout=True,
            debounce=20,
            step=10,
            raise_interrupt=True,  # a Ctrl-C it catches must still stop the caller, not just this wait
        )
    )
