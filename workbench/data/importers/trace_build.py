"""Trace sessions built into episodes a task at a time: per session what its rows give, then the arrays of all its sessions at once.

A session's rows give its states, actions, texts and metadata (``session_parts``, each problem
a ``BadInput`` naming the decision); the arrays numpy builds (inventories, achievement flags,
positions, estimated counts) are built for the task's sessions together (``episodes_of``: one
numpy call a task, not one a session, where a session is ~12 decisions), then each episode is
made and checked alone, so a bad one costs only its session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.data.episodes import Episode
from workbench.data.importers.batch import BadInput
from workbench.data.importers.counts import estimated_counts, estimated_counts_each
from workbench.data.importers.decisions import calls_text, decision_actions
from workbench.data.importers.observations import Observed, observation, text_observation
from workbench.data.importers.producers import Producer, weights_ignored
from workbench.data.importers.rollout_episode import check_step_order, normalised_decisions, state_arrays, views_of
from workbench.data.importers.toolcalls import PlayedActions
from workbench.data.importers.trace_batch import TraceSession
from workbench.data.importers.trace_columns import cais_model_words, json_object
from workbench.errors import EpisodeError


@dataclass
class SessionParts:
    """What one session's rows give, before its arrays are built.

    Attributes:
        session_id: The session's id (the episode's).
        states: Its states, one a decision and the one after the last.
        actions: Each decision's actions, as the task app's rules play its calls.
        env_reward: Each decision's environment reward as stored (made floats with the episode).
        metadata: The episode's metadata (added to until the episode is made).
        views: Each state's map view, or None.
        messages: What the model said, a decision.
        calls: Each decision's tool calls as JSON text.
    """

    session_id: str
    states: list[Observed]
    actions: list[list[str]]
    env_reward: list[Any]
    metadata: dict[str, Any]
    views: list[str] | None
    messages: list[str]
    calls: list[str]


def session_parts(
    db: Path,
    session: TraceSession,
    environment: dict[int, tuple[Any, ...]],
    calls: list[Any],
    llm: dict[int, tuple[Any, ...]],
    config: Mapping[str, Any] | None,
    producer: Producer,
) -> SessionParts:
    """What one session's deduplicated rows give, by decision.

    Args:
        db: The trace database (its name goes in the metadata).
        session: The session.
        environment: Its environment events by decision (0-based): ``(id, timestep_id, reward,
            system_state_before, system_state_after, metadata)``.
        calls: Each decision's tool calls as the policy gave them.
        llm: Its LLM call events by decision, ``call_records`` parsed.
        config: The step_rewards table the rollouts ran with, if known.
        producer: The loop that wrote it.

    Returns:
        The session's parts.

    Raises:
        BadInput: A state, the step order or a decision's tool calls is wrong (naming it).
    """
    n = len(environment)
    states = _states(environment)
    check_step_order(states, [f"decision {t + 1}.system_state_before" for t in range(n)])
    played = _played(calls, producer)
    metadata: dict[str, Any] = {
        "source": "trace",
        "file": db.name,
        "location": f"session {session.session_id}",
        "run_id": session.metadata.get("run_id", session.session_id),
        "policy": session.metadata.get("policy_id") or session.metadata.get("policy_name") or "unknown",
        "seed": session.metadata.get("seed"),
        "observations": "text",
        "counts": "estimated",
        "counts_note": "lower bounds from inventory changes, actions and unlocks (the trace database logs no counts)",
    }
    if isinstance(session.metadata.get("policy_name"), str):
        metadata["policy_name"] = session.metadata["policy_name"]  # as a rollout's request names it
    if states[0].max_steps:
        metadata["max_steps"] = states[0].max_steps
    metadata["producer"] = producer.name
    if config is not None:
        metadata["step_rewards"] = dict(config)
        if weights_ignored(producer, config):
            metadata["weights_ignored"] = True
    normalised = normalised_decisions([p.notes for p in played])
    if normalised:
        metadata["normalised_calls"] = normalised
    try:  # what was read as the episode was made: its problems said as the episode's
        views, messages = views_of(states), [cais_model_words(llm.get(t)) for t in range(n)]
        texts = [calls_text(c) for c in calls]
    except (EpisodeError, ValueError, TypeError) as error:
        raise BadInput("", str(error)) from None
    return SessionParts(
        session_id=session.session_id,
        states=states,
        actions=[p.actions for p in played],
        env_reward=[environment[t][2] for t in range(n)],
        metadata=metadata,
        views=views,
        messages=messages,
        calls=texts,
    )


def _states(environment: dict[int, tuple[Any, ...]]) -> list[Observed]:
    """Each decision's state before it, then the state after the last (``BadInput`` naming the
    decision's column; a location is spelt out only for an error: a decision's f-strings are ~1%
    of an import)."""
    n = len(environment)
    states: list[Observed] = []
    for t in range(n):
        try:
            states.append(_state(json_object(environment[t][3])))
        except BadInput as error:
            raise BadInput(f"decision {t + 1}.system_state_before", error.message) from None
    try:
        states.append(_state(json_object(environment[n - 1][4])))
    except BadInput as error:
        raise BadInput(f"decision {n}.system_state_after", error.message) from None
    return states


def _played(calls: list[Any], producer: Producer) -> list[PlayedActions]:
    """The actions each decision's tool calls play (``BadInput`` naming the decision)."""
    played = []
    for t, c in enumerate(calls):
        try:
            played.append(decision_actions(c, "", producer.action_cap))
        except BadInput as error:
            raise BadInput(f"decision {t + 1} tool calls", error.message) from None
    return played


def _state(obs: Any) -> Observed:
    """``observation(obs, "")``, a server's ``{"text": ...}`` state read without the ABC checks
    of the general dispatch (a dict whose ``inventory`` is absent is no raw observation)."""
    if type(obs) is dict and obs.get("inventory") is None and type(obs.get("text")) is str:
        return text_observation(obs["text"], "")
    return observation(obs, "")


def episodes_of(parts: list[SessionParts]) -> list[Episode | Exception]:
    """Each session's episode, or the problem that keeps it from being one (a ``BadInput``, or
    an error no check foresaw, for the caller to name as ``batch.unexpected``).

    The states of every session are read into arrays, and their counts estimated, in one go; if
    that fails (it cannot on states ``observation`` read, but one session must never cost the
    others), each session's are built alone.

    Args:
        parts: The sessions' parts.

    Returns:
        Per session, in order, its episode or what is wrong.
    """
    if not parts:
        return []
    lengths = [len(p.actions) for p in parts]
    try:
        inventory, status, positions = state_arrays([s for p in parts for s in p.states])
        counts = estimated_counts_each(status, inventory, [a for p in parts for a in p.actions], lengths)
        counts_all = _narrowed(np.concatenate(counts))
        bounds = np.cumsum([n + 1 for n in lengths])[:-1]
        stacked = (_narrowed(inventory), status, positions, counts_all)
        arrays = list(zip(*(np.split(a, bounds) for a in stacked), strict=True))
    except Exception:  # noqa: BLE001 - then each session alone, so only a bad one fails
        return [_alone(p) for p in parts]
    return [_episode(p, *a) for p, a in zip(parts, arrays, strict=True)]


def _narrowed(array: np.ndarray) -> np.ndarray:
    """A task's integer array as int32 when every value fits, as ``Episode`` stores it (its
    check of an int64 array, ~11 us an array, then has nothing left to do); else as it is, for
    the episode to name the value that does not fit."""
    if array.size and (array.min() < _INT32.min or array.max() > _INT32.max):
        return array
    return array.astype(np.int32)


_INT32 = np.iinfo(np.int32)


def _alone(parts: SessionParts) -> Episode | Exception:
    """One session's episode with its own arrays, or what is wrong."""
    try:
        inventory, status, positions = state_arrays(parts.states)
    except Exception as error:  # noqa: BLE001 - one bad session never costs the others
        return error
    try:
        counts = estimated_counts(status, inventory, parts.actions)
    except (EpisodeError, ValueError, TypeError) as error:  # as when the episode is made
        return BadInput("", str(error))
    except Exception as error:  # noqa: BLE001
        return error
    return _episode(parts, inventory, status, positions, counts)


def _episode(
    parts: SessionParts, inventory: np.ndarray, status: np.ndarray, positions: np.ndarray, counts: np.ndarray
) -> Episode | BadInput:
    """One session's episode from its parts and arrays, or what is wrong with it."""
    n = len(parts.actions)
    try:
        return Episode(
            id=parts.session_id,
            inventory=inventory,
            achievement_counts=counts,
            achievement_status=status,
            actions=parts.actions,
            env_reward=np.array([float(r or 0.0) for r in parts.env_reward], dtype=np.float64),
            done=np.zeros(n, dtype=bool),  # the server never ends a rollout (its JSON's done stays false too)
            player_pos=positions,
            metadata=parts.metadata,
            views=parts.views,
            messages=parts.messages,
            calls=parts.calls,
        )
    except (EpisodeError, ValueError, TypeError) as error:
        return BadInput("", str(error))
