"""A live synth-ai trace database: the sessions a task app finishes, read in short transactions."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from workbench.data.episodes import Corpus, Episode
from workbench.data.importers import ImportIssue, read_trace_sessions
from workbench.data.importers.batch import BadInput
from workbench.data.importers.trace_db import Locked, NoTraceTables
from workbench.data.watch.source import Poll, source_key, with_origin

#: How ``read_trace_sessions`` names a bad session's location.
_SESSION = "session "
#: Seconds a poll waits for a writer's lock (short: a locked poll is retried, and Ctrl-C waits for it).
LOCK_WAIT_S = 1.0
#: Polls in a row the database may stay locked before it is reported (still retried after).
LOCKED_POLLS = 5
#: Seconds an SQLite file may lack the trace tables before it is reported (a starting server
#: makes the file first; still retried after).
NO_TABLES_GRACE_S = 30.0


class TraceDatabase:
    """A trace database (``task-app serve --trace-db``) that a running server writes into.

    Each poll lists the sessions (one query) and reads the finished ones not taken yet, every
    query its own read transaction fetched at once (``workbench.data.importers.traces``): a
    reader holding one past the server's 5 s busy timeout would make it drop tracing rows. A
    session is complete once its outcome row exists; running ones count as settling. A session
    that cannot be read is a problem, reported once and not read again."""

    kind = "traces"
    #: An item (an episode id in the corpus, a session id in the database) names one episode for good.
    items_are_identities = True

    def __init__(self, path: Path, *, config: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.config = config
        self._done: set[str] = set()
        self._reported: set[str] = set()
        self._locked_polls = 0
        self._tables_missing_since: float | None = None

    @property
    def key(self) -> str:
        """See ``Source.key``."""
        return source_key(self.kind, self.path)

    def poll(self) -> Poll:
        """Read the sessions finished since the last poll; see ``Source.poll``."""
        if not self.path.is_file():
            return Poll()
        try:
            batch = read_trace_sessions(self.path, skip=self._done, config=self.config, timeout=LOCK_WAIT_S)
        except Locked as error:
            self._locked_polls += 1
            if self._locked_polls < LOCKED_POLLS:
                return Poll(settling=1)  # read again at the next poll
            issue = ImportIssue(str(self.path), error.location, f"{error.message} (retrying at every poll)")
            return Poll(problems=self._once([issue]), settling=1)
        except NoTraceTables as error:
            # A server makes the file before its tables: wait, and say so only if it lasts.
            self._tables_missing_since = self._tables_missing_since or time.monotonic()
            if time.monotonic() - self._tables_missing_since < NO_TABLES_GRACE_S:
                return Poll(settling=1)
            issue = ImportIssue(str(self.path), error.location, f"{error.message} (retrying at every poll)")
            return Poll(problems=self._once([issue]), settling=1)
        except BadInput as error:
            return Poll(problems=self._once([ImportIssue(str(self.path), error.location, error.message)]))
        self._locked_polls, self._tables_missing_since = 0, None
        landed = self.path.stat().st_mtime  # the last write: when the server recorded the outcome, or later
        episodes: list[Episode] = []
        for episode in batch.episodes:
            self._done.add(episode.id)
            episodes.append(with_origin(episode, self.key, episode.id))
        for issue in batch.errors:
            if issue.location.startswith(_SESSION):
                self._done.add(issue.location[len(_SESSION) :])
        settling = len(batch.running) + len(batch.locked)
        return Poll(Corpus(episodes), [landed] * len(episodes), self._once(batch.errors), settling)

    def _once(self, issues: list[ImportIssue]) -> list[ImportIssue]:
        fresh = [issue for issue in issues if str(issue) not in self._reported]
        self._reported.update(str(issue) for issue in fresh)
        return fresh

    def progress(self) -> dict[str, Any]:
        """The sessions taken (read, or reported as unreadable)."""
        return {"sessions": sorted(self._done)}

    def restore(self, progress: dict[str, Any]) -> None:
        """Skip the sessions an earlier run took."""
        sessions = progress.get("sessions") if isinstance(progress, dict) else None
        if isinstance(sessions, list):
            self._done.update(str(s) for s in sessions)

    def watch_paths(self) -> list[Path]:
        """The database's folder (SQLite writes the file and its journal there)."""
        return [self.path.parent] if self.path.parent.is_dir() else []
