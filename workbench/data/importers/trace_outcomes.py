"""How a trace session ended and which loop wrote it: its outcome row, a failed rollout's empty or partial session.

A rollout that fails (the policy's reply has no tool call: HTTP 500) still ends its session: a
failure at decision 1 leaves a session without a played decision (``EmptySession``: skipped and
said, not an error that fails the import), a later one a session whose last timestep has no
environment event (imported, ``metadata["partial"]`` saying where it stopped). The outcome row
(``outcome_rewards.reward_metadata``) holds the ids a rollout response gives per trajectory
(``policy_id``, ``env_id``) and the seed, so both imports of one run carry the same metadata.
A ``--producer`` that contradicts the session's own rows is refused (``session_producer``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from workbench.data.episodes import Episode
from workbench.data.importers.batch import BadInput, ImportIssue
from workbench.data.importers.producers import Producer, chosen_producer, trace_producer
from workbench.data.importers.trace_columns import session_metadata
from workbench.data.importers.trace_db import rows
from workbench.errors import WorkbenchError

#: What an import says of a session with no played decision.
EMPTY = "empty session: the rollout failed before its first decision was played (no environment events)"


class EmptySession(BadInput):
    """A finished session without a played decision: skipped and said, not an error."""


def session_producer(told: Producer | None, assistant_messages: int, llm_events: int) -> tuple[Producer, str]:
    """The loop a session is read with and how it was told (``chosen_producer`` of what the user
    said and ``trace_producer``'s reading of its rows).

    Args:
        told: The profile ``--producer`` named (None: not given).
        assistant_messages: The session's assistant messages.
        llm_events: Its LLM (cais) events.

    Returns:
        The profile and how it was told.

    Raises:
        BadInput: ``told`` contradicts the session's rows (names both).
    """
    try:
        return chosen_producer(told, trace_producer(assistant_messages, llm_events))
    except WorkbenchError as error:
        raise BadInput("", str(error)) from None


def outcome_metadata(connection: sqlite3.Connection, session_id: str, metadata: dict[str, Any]) -> None:
    """Add to an episode's ``metadata`` what its session's outcome row says of the run, as a
    rollout response gives it: ``policy`` (the policy's id, as ``trajectories[].policy_id``),
    ``env_id``, and the seed when the session's own metadata lacks it.

    Args:
        connection: The open trace database.
        session_id: The session.
        metadata: The episode's metadata, changed in place.
    """
    found = rows(
        connection, "SELECT CAST(reward_metadata AS BLOB) FROM outcome_rewards WHERE session_id = ?", session_id
    )
    outcome = session_metadata(found[0][0])[0] if found else {}
    for key, name in (("policy_id", "policy"), ("env_id", "env_id")):
        if isinstance(outcome.get(key), str) and outcome[key]:
            metadata[name] = outcome[key]
    if metadata.get("seed") is None and isinstance(outcome.get("env_seed"), int):
        metadata["seed"] = outcome["env_seed"]


def partial_note(played: int, timesteps: int) -> str | None:
    """What ``metadata["partial"]`` says of a session with ``timesteps`` decisions begun and
    ``played`` played (None when every one was played).

    Args:
        played: Decisions with an environment event.
        timesteps: Decisions begun (timesteps written).

    Returns:
        The note, or None.
    """
    if timesteps <= played:
        return None
    return (
        f"the rollout stopped after {played} played decision(s); decision {played + 1} of its {timesteps} "
        "timesteps has no environment event (the rollout failed there)"
    )


def session_warnings(file: str, empty: Iterable[str], episodes: Iterable[Episode]) -> list[ImportIssue]:
    """The import report's warnings for one database: each empty session skipped, each partial
    one imported.

    Args:
        file: The database file, as given.
        empty: The ids of its empty sessions.
        episodes: Its imported episodes.

    Returns:
        One warning per empty or partial session.
    """
    warnings = [ImportIssue(file, f"session {sid}", f"{EMPTY}: no episode to import; skipped") for sid in empty]
    warnings += [
        ImportIssue(file, f"session {e.id}", f"imported as partial: {e.metadata['partial']}")
        for e in episodes
        if e.metadata.get("partial")
    ]
    return warnings
