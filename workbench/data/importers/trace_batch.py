"""What reading a synth-ai trace database gives: its sessions (``TraceSession``), a read's episodes and problems (``TraceBatch``) and how an import reports them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.data.episodes import Episode
from workbench.data.importers import trace_outcomes
from workbench.data.importers.batch import Collector, ImportIssue


@dataclass(frozen=True)
class TraceSession:
    """One row of ``session_traces``: its id (the rollout's run id), when it began, its metadata
    (the seed among others) and whether it has ended (an outcome row exists).

    Attributes:
        session_id: The session's id (the rollout's run id; its episode's id).
        created_at: When it began, as stored (None when not stored).
        metadata: The session's metadata object ({} when unreadable: see ``problem``).
        finished: Whether it has ended (its ``outcome_rewards`` row exists).
        problem: Why it cannot be read at all (metadata not UTF-8, nested too deeply), or None.
    """

    session_id: str
    created_at: str | None
    metadata: dict[str, Any]
    finished: bool
    problem: str | None = None


@dataclass
class TraceBatch:
    """What one read of the database gave: episodes of finished sessions, problems, running ids.

    Attributes:
        episodes: One episode per finished session read, its id the session's.
        errors: One issue per finished session that cannot be read (location ``session <id>``).
        running: The ids of sessions not finished yet (not read).
        skipped: How many sessions (finished or running) were left out for their id in ``skip``.
        locked: The ids of finished sessions a writer held locked at their read: read again later.
        empty: The ids of finished sessions with no played decision (no episode, no error).
    """

    episodes: list[Episode] = field(default_factory=list)
    errors: list[ImportIssue] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    skipped: int = 0
    locked: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)

    @property
    def imported(self) -> list[str]:
        """The session ids read into episodes (a follower adds them to its ``skip``)."""
        return [e.id for e in self.episodes]


def report_batch(collected: Collector, notes: list[str], file: Path, batch: TraceBatch) -> None:
    """What an import reports of one database besides its episodes and bad sessions: locked
    sessions (errors), sessions skipped (a note), empty sessions skipped, partial sessions imported
    and sessions still running (warnings).

    Args:
        collected: The import's collector.
        notes: The import's notes.
        file: The database.
        batch: What reading it gave.
    """
    for session_id in batch.locked:
        collected.errors.append(
            ImportIssue(str(file), f"session {session_id}", "locked by another process: import again later")
        )
    if batch.skipped:
        notes.append(f"{file}: {batch.skipped} session(s) already imported (ids the corpus holds) skipped")
    collected.warnings.extend(trace_outcomes.session_warnings(str(file), batch.empty, batch.episodes))
    for session_id in batch.running:
        collected.warnings.append(
            ImportIssue(
                str(file),
                f"session {session_id}",
                "still running (no outcome row yet): not imported; import again later",
            )
        )
