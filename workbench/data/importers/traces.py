"""synth-ai's SQLite trace database (``task-app serve --trace``) read into episodes, one per finished session.

For ``workbench import traces`` (``import_traces``) and a live follower such as ``workbench
watch`` (``trace_sessions`` lists, ``read_trace_sessions`` reads what the follower lacks). How
it reads (read-only, each query its own short read transaction: ``trace_db``) and what an
episode holds (text states, the actions played by the task app's rules over the assistant
messages' or, in 0.2.16-0.2.24, the ``cais`` events' tool calls, rows stored twice kept once,
estimated counts): docs/importing-rollouts.md, "The trace database".
"""

import sqlite3
from collections.abc import Collection, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from workbench.data.episodes import Episode
from workbench.data.importers import trace_outcomes
from workbench.data.importers.batch import BadInput, ImportIssue, ImportResult, batch_files, unexpected
from workbench.data.importers.producers import Producer, producer_for_version
from workbench.data.importers.toolcalls import policy_tool_calls
from workbench.data.importers.trace_batch import TraceBatch, TraceSession, report_batch
from workbench.data.importers.trace_build import SessionParts, episodes_of, session_parts
from workbench.data.importers.trace_columns import (
    cais_tool_calls,
    call_records,
    json_value,
    session_metadata,
)
from workbench.data.importers.trace_db import Locked, NoTraceTables, connect, is_locked, rows


def trace_sessions(db: str | Path, *, timeout: float | None = None, skip: Collection[str] = ()) -> list[TraceSession]:
    """Every session of the trace database ``db``, oldest first, in one query.

    Args:
        db: The SQLite file, opened read-only (``trace_db.connect``).
        timeout: Seconds to wait for a writer's lock (None: ``READ_TIMEOUT_S``).
        skip: Session ids the caller leaves out: listed with their state, but with no time or
            metadata read.

    Returns:
        Every row of ``session_traces`` by creation time, each with whether it has finished.

    Raises:
        Locked: A writer holds the database locked past ``timeout`` (read again later).
        NoTraceTables: ``db`` is an SQLite database without synth-ai's trace tables.
        BadInput: ``db`` is missing or not a synth-ai trace database.
    """
    with closing(connect(Path(db), timeout=timeout)) as connection:
        try:
            # Metadata and times as bytes: one session's invalid UTF-8 must fail that session only.
            found = rows(
                connection,
                "SELECT s.session_id, CAST(s.created_at AS BLOB), CAST(s.metadata AS BLOB), "
                "EXISTS (SELECT 1 FROM outcome_rewards o WHERE o.session_id = s.session_id) "
                "FROM session_traces s ORDER BY s.created_at, s.session_id",
            )
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                raise NoTraceTables("", f"not a synth-ai trace database ({error})") from None
            raise BadInput("", f"not a synth-ai trace database ({error})") from None
        except sqlite3.DatabaseError as error:
            raise BadInput("", f"not a synth-ai trace database ({error})") from None
    sessions = []
    for r in found:
        if str(r[0]) in skip:  # left out by the caller: its metadata is never read (a follower's
            sessions.append(TraceSession(str(r[0]), None, {}, bool(r[3])))  # polls stay O(new))
            continue
        metadata, problem = session_metadata(r[2])
        created = r[1].decode("utf-8", "replace") if isinstance(r[1], bytes) else r[1]
        sessions.append(TraceSession(str(r[0]), created, metadata, bool(r[3]), problem))
    return sessions


def read_trace_sessions(
    db: str | Path,
    *,
    skip: Collection[str] = (),
    config: Mapping[str, Any] | None = None,
    progress: bool = False,
    producer: Producer | None = None,
    timeout: float | None = None,
) -> TraceBatch:
    """The episodes of ``db``'s finished sessions whose id is not in ``skip``. Cheap to call
    again: sessions in ``skip`` and running ones cost only the one listing query, so a follower
    passes the ids it holds (``batch.imported`` and earlier ones) and calls again.

    Args:
        db: The trace database file.
        skip: Session ids not to read (already imported).
        config: The step_rewards table the rollouts ran with, if known (``metadata["step_rewards"]``).
        progress: Show a progress bar (when there are two sessions or more to read).
        producer: The loop that wrote ``db``, if the user says (None: told per session from its rows).
        timeout: Seconds to wait for a writer's lock (None: ``READ_TIMEOUT_S``).

    Returns:
        The episodes, one error per bad session (not raised), the running ids, the ids
        locked past ``timeout`` and the empty sessions' ids (skipped, said as warnings).

    Raises:
        Locked: The listing itself is locked by a writer.
        NoTraceTables: ``db`` has no synth-ai trace tables.
        BadInput: ``db`` is missing or not a trace database.
    """
    db = Path(db)
    batch = TraceBatch()
    every = trace_sessions(db, timeout=timeout, skip=skip)
    sessions = [s for s in every if s.session_id not in skip]
    batch.skipped = len(every) - len(sessions)
    batch.running = [s.session_id for s in sessions if not s.finished]
    todo = [s for s in sessions if s.finished]
    read = read_sessions(db, todo, config=config, progress=progress, producer=producer, timeout=timeout)
    batch.episodes, batch.errors, batch.locked, batch.empty = read.episodes, read.errors, read.locked, read.empty
    return batch


def read_sessions(
    db: Path,
    sessions: list[TraceSession],
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = False,
    producer: Producer | None = None,
    timeout: float | None = None,
) -> TraceBatch:
    """The episodes of some finished ``sessions`` of ``db`` (listed by ``trace_sessions``):
    ``read_trace_sessions`` without the listing, for a worker given its share of them.

    Args:
        db: The trace database file.
        sessions: Finished sessions to read.
        config: The step_rewards table the rollouts ran with, if known.
        progress: Show a progress bar (when there are two sessions or more).
        producer: The loop that wrote ``db``, if the user says (None: told per session).
        timeout: Seconds to wait for a writer's lock (None: ``READ_TIMEOUT_S``).

    Returns:
        The episodes, one error per bad session and the ids locked past ``timeout``.
    """
    batch = TraceBatch()
    read: list[tuple[int, TraceSession, SessionParts]] = []
    problems: list[tuple[int, ImportIssue]] = []  # by the session's place, to keep them in order
    with closing(connect(db, timeout=timeout)) as connection:
        for place, session in enumerate(
            tqdm(sessions, desc="sessions", unit="session", disable=not progress or len(sessions) < 2)
        ):
            if session.problem is not None:
                problems.append((place, ImportIssue(str(db), f"session {session.session_id}", session.problem)))
                continue
            try:
                read.append((place, session, _session_parts(connection, db, session, config, producer)))
            except Locked:
                batch.locked.append(session.session_id)  # transient: never reported as unreadable
            except sqlite3.OperationalError as error:
                if not is_locked(error):
                    problems.append((place, _issue(db, session, error)))
                else:
                    batch.locked.append(session.session_id)
            except trace_outcomes.EmptySession:
                batch.empty.append(session.session_id)
            except Exception as error:  # noqa: BLE001 - one bad session never costs the others
                problems.append((place, _issue(db, session, error)))
    # the arrays of every session read, built at once (one numpy call a task, not a session)
    for (place, session, _), made in zip(read, episodes_of([parts for _, _, parts in read]), strict=True):
        if isinstance(made, Episode):
            batch.episodes.append(made)
        else:
            problems.append((place, _issue(db, session, made)))
    batch.errors = [issue for _, issue in sorted(problems, key=lambda p: p[0])]
    return batch


def import_traces(
    db: str | Path,
    *,
    config: Mapping[str, Any] | None = None,
    skip: Collection[str] = (),
    progress: bool = True,
    producer: str | None = None,
) -> ImportResult:
    """Import a synth-ai trace database (or a folder of ``*.db`` files): one episode per finished
    session not in ``skip``.

    Args:
        db: A ``.db`` file or a folder searched recursively for them.
        config: The step_rewards table the rollouts ran with, if known.
        skip: Session ids not to import (already held).
        progress: Show a progress bar over each file's sessions.
        producer: The loop that wrote them, ``"synth-ai==X"`` (None: told per session).

    Returns:
        The episodes; an error per bad or locked session and per file that is no trace
        database (the others still import); running sessions as warnings.

    Raises:
        WorkbenchError: ``producer`` names no known Crafter loop.
    """
    told = producer_for_version(producer) if producer is not None else None  # "" is refused
    files, collected = batch_files(Path(db), ("*.db",), "trace databases (.db)")
    notes: list[str] = []
    for file in files:
        try:
            batch = read_trace_sessions(file, skip=skip, config=config, progress=progress, producer=told)
        except BadInput as error:
            collected.errors.append(ImportIssue(str(file), error.location, error.message))
            continue
        for episode in batch.episodes:
            collected.add(episode, str(file))
        collected.errors.extend(batch.errors)
        report_batch(collected, notes, file, batch)
    result = collected.result(len(files))
    result.notes.extend(notes)
    return result


def _issue(db: Path, session: TraceSession, error: Exception) -> ImportIssue:
    """The import's issue for a session that cannot be read: at ``session <id>`` exactly (a
    follower reads the id from it), the place inside the session, when known, leading the message."""
    if isinstance(error, BadInput):
        message = f"{error.location}: {error.message}" if error.location else error.message
    else:
        message = unexpected(error)
    return ImportIssue(str(db), f"session {session.session_id}", message)


def _session_parts(
    connection: sqlite3.Connection,
    db: Path,
    session: TraceSession,
    config: Mapping[str, Any] | None,
    told: Producer | None,
) -> SessionParts:
    """What one finished session's rows give, its metadata complete (``BadInput`` naming the
    decision when rows are missing); its arrays and episode are made with its task's others
    (``trace_build.episodes_of``).

    The tool calls are the assistant messages' (synth-ai 0.2.14); where the session has none
    (0.2.16-0.2.24 write no messages), they are the policy's reading of each ``cais`` event's
    ``output_tool_calls`` (``policy_tool_calls``), what its rollout's steps hold."""
    sid = session.session_id
    # "+event_type" / "+message_type": the session's index, not the type's. SQLite (no ANALYZE
    # statistics) otherwise picks idx_event_type and scans every session's events of that type for
    # each session: an import quadratic in the database (10,000 decisions: 38 of 51 s in queries).
    turns = {
        int(r[0]): int(r[1] if r[1] is not None else r[2])
        for r in rows(connection, "SELECT id, turn_number, step_index FROM session_timesteps WHERE session_id = ?", sid)
    }
    environment = _per_turn(
        turns,
        rows(
            connection,
            "SELECT id, timestep_id, reward, system_state_before, system_state_after, metadata FROM events "
            "WHERE session_id = ? AND +event_type = 'environment' ORDER BY id",
            sid,
        ),
        "environment event",
    )
    assistant = _per_turn(
        turns,
        rows(
            connection,
            "SELECT id, timestep_id, content FROM messages WHERE session_id = ? AND +message_type = 'assistant' "
            "ORDER BY id",
            sid,
        ),
        "assistant message",
        required=False,
    )
    llm = _per_turn(turns, _llm_rows(connection, sid), "LLM call event", required=False)
    n = len(environment)
    if n == 0:
        raise trace_outcomes.EmptySession("", trace_outcomes.EMPTY)
    producer, basis = trace_outcomes.session_producer(told, len(assistant), len(llm))
    source, what = (assistant, "assistant message") if assistant or not llm else (llm, "cais event")
    missing = [t + 1 for t in range(n) if t not in source]
    if missing:
        raise BadInput("", f"decision(s) {missing[:5]} have no {what} (rows lost while tracing?)")
    # Each decision's call_records parsed once (the tool calls and the model's words both read it).
    llm = {
        t: (row[0], row[1], call_records(row[2], row[3], f"decision {t + 1} cais event call_records"))
        for t, row in llm.items()
        if t < n
    }
    if source is assistant:
        calls = [json_value(assistant[t][2], f"decision {t + 1} assistant message") for t in range(n)]
    else:
        calls = [policy_tool_calls(cais_tool_calls(llm[t], t)) for t in range(n)]
    parts = session_parts(db, session, environment, calls, llm, config, producer)
    parts.metadata["producer_basis"] = basis
    trace_outcomes.outcome_metadata(connection, sid, parts.metadata)
    partial = trace_outcomes.partial_note(n, len(turns))  # a decision begun but never played: the rollout failed there
    if partial:
        parts.metadata["partial"] = partial
    return parts


def _llm_rows(connection: sqlite3.Connection, sid: str) -> list[tuple[Any, ...]]:
    """A session's ``cais`` events: ``(id, timestep_id, call_records as UTF-8 bytes when TEXT
    (else None), call_records as stored when not TEXT (else None))``. Bytes: the ~10 KB a decision
    is parsed from bytes, with no decode to ``str`` and encode back (``call_records``)."""
    connection.text_factory = bytes
    try:
        return rows(
            connection,
            "SELECT id, timestep_id, CASE WHEN typeof(call_records) = 'text' THEN call_records END, "
            "CASE WHEN typeof(call_records) <> 'text' THEN call_records END FROM events "
            "WHERE session_id = ? AND +event_type = 'cais' ORDER BY id",
            sid,
        )
    finally:
        connection.text_factory = str


def _per_turn(
    turns: Mapping[int, int], rows: list[tuple[Any, ...]], what: str, *, required: bool = True
) -> dict[int, tuple[Any, ...]]:
    """The rows by decision (0-based), duplicates (same content, stored twice) dropped; a turn
    with two different rows is an error; turns must run 0..n-1 when ``required``."""
    by_turn: dict[int, tuple[Any, ...]] = {}
    for row in rows:
        turn = turns.get(int(row[1])) if row[1] is not None else None
        if turn is None:
            raise BadInput("", f"a {what} (row {row[0]}) belongs to no decision")
        if turn in by_turn:
            if by_turn[turn][2:] != row[2:]:
                raise BadInput("", f"decision {turn + 1} has two different {what}s (rows {by_turn[turn][0]}, {row[0]})")
            continue  # the copy written when the session ended
        by_turn[turn] = row
    if required and sorted(by_turn) != list(range(len(by_turn))):
        gaps = sorted(set(range(max(by_turn, default=-1) + 1)) - set(by_turn))
        raise BadInput("", f"decision(s) {[g + 1 for g in gaps[:5]]} have no {what} (rows lost while tracing?)")
    return by_turn
