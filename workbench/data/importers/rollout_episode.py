"""One episode of a task-app rollout trajectory, built from its steps.

Its states, the actions its decisions played, its counts (observed, logged or estimated), what
the task app logged, and what the model said.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, overload

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward_rule import logs_rises
from workbench.data.episodes import Episode
from workbench.data.importers.batch import BadInput
from workbench.data.importers.counts import estimated_counts, inventory_disagreements, logged_counts
from workbench.data.importers.decisions import calls_text, decision_actions, executed_actions, model_messages
from workbench.data.importers.jsonfiles import as_mapping, dig
from workbench.data.importers.observations import Observed, observation
from workbench.data.importers.producers import STEPWISE, Producer, weights_ignored
from workbench.data.importers.values import INT32_MAX, finite, flag, integer
from workbench.errors import EpisodeError


@dataclass
class RolloutContext:
    """What every episode of one response shares."""

    file: Path
    where: str
    response: Mapping[str, Any]
    config: dict[str, Any] | None
    config_source: str | None
    summary: dict[str, Any] | None
    producer: Producer = STEPWISE
    producer_basis: str = "assumed"


@dataclass(frozen=True)
class Segment:
    """One episode's place in its trajectory: ``steps[start:stop]``, episode ``k`` of ``count``."""

    t: int
    path: str
    trajectory: Mapping[str, Any]
    steps: list[Mapping[str, Any]]
    start: int
    stop: int
    k: int
    count: int


def step_done(step: Mapping[str, Any], where: str) -> bool:
    """A step's ``done``: true/false or 0/1 (absent or null: false); ``BadInput`` for anything else."""
    value = step.get("done")
    return False if value is None else flag(value, where, "done")


def state_arrays(states: list[Observed]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (inventory, achievement status, player position) arrays of some read states."""
    inventory = np.array([_row(s.state["inventory"], _INVENTORY, INVENTORY_ITEMS, 0) for s in states], dtype=np.int64)
    status = np.array([_row(s.state["achievements_status"], _STATUS, ACHIEVEMENTS, False) for s in states], dtype=bool)
    positions = np.array([s.position or (-1, -1) for s in states], dtype=np.int32)
    return inventory, status, positions


_INVENTORY = itemgetter(*INVENTORY_ITEMS)
_STATUS = itemgetter(*ACHIEVEMENTS)


def _row(values: Mapping[str, Any], getter: itemgetter, names: tuple[str, ...], missing: Any) -> Any:
    """``values`` of ``names`` in order (``missing`` for an absent one); a text state, which has
    every name, in one call."""
    try:
        return getter(values)
    except KeyError:
        return [values.get(name, missing) for name in names]


def check_step_order(states: list[Observed], places: Sequence[str]) -> None:
    """Raise ``BadInput`` at the first state whose ``Step: i/max`` counter is below the one
    before it (``places[k]`` names state ``k``; the last state, after the last decision, is named
    after it): states in an order the game never ran, e.g. a file edited or reordered."""
    steps = [(k, s.step) for k, s in enumerate(states) if s.step is not None]
    for (_, before), (k, now) in zip(steps, steps[1:]):
        if now < before:
            place = places[k] if k < len(places) else f"the state after {places[-1]}"
            raise BadInput(
                place,
                f"step counter runs backwards (Step {now} after Step {before}): the states are out of order "
                "(the file may have been edited or reordered)",
            )


def normalised_decisions(notes: list[tuple[str, ...]]) -> list[list[Any]]:
    """``[[decision, [notes...]], ...]`` for the decisions (1-based) whose calls the task app normalised
    (kept in ``metadata["normalised_calls"]``; the import report counts them)."""
    return [[i, list(n)] for i, n in enumerate(notes, start=1) if n]


def rollout_episode(context: RolloutContext, segment: Segment, previous: Episode | None) -> Episode:
    """The episode of ``segment``; its states are its steps' obs plus the state after.
    ``previous`` is the episode before it in the same trajectory (on_done = reset), if any."""
    path, steps = segment.path, segment.steps[segment.start : segment.stop]
    # Each location is spelt out only for an error (a decision's f-strings were ~2% of an import).
    observed, played = [], []
    for i, step in enumerate(steps, segment.start):
        try:
            observed.append(observation(step.get("obs"), ""))
        except BadInput as error:
            raise BadInput(f"{path}.steps[{i}].obs", error.message) from None
    cap = context.producer.action_cap
    for i, step in enumerate(steps, segment.start):
        try:
            played.append(decision_actions(step.get("tool_calls"), "", cap))
        except BadInput as error:
            raise BadInput(f"{path}.steps[{i}].tool_calls", error.message) from None
    actions = [p.actions for p in played]
    infos: list[Mapping[str, Any]] = [as_mapping(step.get("info")) for step in steps]
    stepwise = [s if type(s) is dict or isinstance(s, Mapping) else None for s in (i.get("stepwise") for i in infos)]
    metadata: dict[str, Any] = {}
    last = observed[-1]
    after = _after_last(segment.trajectory, segment.steps, segment.stop, last, f"{path}.final.observation")
    if after is None:
        state, note = _terminal_state(last.state, stepwise[-1])
        after = Observed(state, None, None, last.kind)
        metadata["terminal_state"] = note
    if steps[-1].get("done") is True or steps[-1].get("done") == 1:
        actions[-1] = executed_actions(actions[-1], last)
    states = observed + [after]
    check_step_order(states, _Places(path, segment.start, segment.stop))
    rewards = [_reward(step.get("reward"), path, i) for i, step in enumerate(steps, segment.start)]
    metadata.update(_episode_metadata(context, segment, states))
    if previous is not None:
        # The task app scores this episode's first decision against the previous one's end
        # (quirk 7): parity scoring needs to know which episode came before.
        metadata["follows"] = previous.id
    normalised = normalised_decisions([p.notes for p in played])
    if normalised:
        metadata["normalised_calls"] = normalised
    inventory, status, positions = state_arrays(states)
    counts, metadata["counts"], metadata["counts_note"] = _counts(
        states, status, inventory, actions, stepwise, previous
    )
    disagree = inventory_disagreements(inventory, stepwise) if last.kind == "text" else []
    if disagree:
        metadata["inventory_disagrees"] = disagree
    try:
        return Episode(
            id=_episode_id(context, segment.t, segment.k, segment.count),
            inventory=inventory,
            achievement_counts=counts,
            achievement_status=status,
            actions=actions,
            env_reward=np.array(rewards, dtype=np.float64),
            done=np.array([step_done(step, path) for step in steps], dtype=bool),
            player_pos=positions,
            metadata=metadata,
            logged=_logged(context, stepwise, infos),
            views=views_of(states),
            messages=model_messages(infos) if last.kind == "text" else None,
            calls=[calls_text(step.get("tool_calls")) for step in steps],
        )
    except (EpisodeError, ValueError, TypeError) as error:
        raise BadInput(path, str(error)) from None


class _Places(Sequence[str]):
    """``[f"{path}.steps[{i}].obs" for i in range(start, stop)]``, each made only when asked for."""

    def __init__(self, path: str, start: int, stop: int) -> None:
        self.path, self.start, self.stop = path, start, stop

    def __len__(self) -> int:
        return self.stop - self.start

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        if isinstance(k, slice):
            return [self[j] for j in range(len(self))[k]]
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        return f"{self.path}.steps[{self.start + k % len(self)}].obs"


def _reward(value: Any, path: str, i: int) -> float:
    """A step's reward as a finite float (absent or null: 0.0); ``BadInput`` at the step otherwise."""
    if type(value) is float and math.isfinite(value):
        return value  # the usual cases, without the general check's calls
    if type(value) is int and -(2**53) <= value <= 2**53:
        return float(value)  # exact
    return finite(value if value is not None else 0.0, f"{path}.steps[{i}]", "reward")


def _counts(
    states: list[Observed],
    status: np.ndarray,
    inventory: np.ndarray,
    actions: list[list[str]],
    stepwise: list[Mapping[str, Any] | None],
    previous: Episode | None,
) -> tuple[np.ndarray, str, str]:
    """The episode's counts (n+1, 22), where they come from and how (``COUNT_SOURCES``)."""
    if all("achievements_counts" in s.state for s in states):
        counts = np.array(
            [[s.state["achievements_counts"].get(a, 0) for a in ACHIEVEMENTS] for s in states], dtype=np.int64
        )
        return counts, "observed", "Crafter's own counts, stored in the observations"
    start = None
    if previous is not None:
        if previous.metadata.get("counts") == "estimated":
            return (
                estimated_counts(status, inventory, actions),
                "estimated",
                "the episode before it in the rollout has estimated counts",
            )
        start = previous.achievement_counts[-1].astype(np.int64)
    rebuilt, reason = logged_counts(status, stepwise, start)
    if rebuilt is not None:
        return rebuilt, "logged", reason
    return (
        estimated_counts(status, inventory, actions),
        "estimated",
        f"lower bounds from inventory changes, actions and unlocks ({reason})",
    )


def views_of(states: list[Observed]) -> list[str] | None:
    """Each state's text map view ("" where a state had none), or None when no state had one."""
    if all(s.view is None for s in states):
        return None
    return [s.view or "" for s in states]


def _episode_id(context: RolloutContext, t: int, k: int, count: int) -> str:
    """``<run_id>[-t<trajectory>][-e<episode>]`` (suffixes only where needed); without a run id,
    the file's stem and the response's place in it."""
    place = re.sub(r"[^0-9A-Za-z]+", "", context.where)  # "line 3" -> "line3", "[1]" -> "1"
    base = context.response.get("run_id") or (f"{context.file.stem}-{place}" if place else context.file.stem)
    trajectory = f"-t{t}" if len(context.response["trajectories"]) > 1 else ""
    return f"{base}{trajectory}" + (f"-e{k}" if count > 1 else "")


def _after_last(
    trajectory: Mapping[str, Any], steps: list[Mapping[str, Any]], stop: int, last: Observed, where: str
) -> Observed | None:
    """The state after an episode's last decision, or None when the rollout did not store it.

    Only the trajectory's last episode has it (``final.observation``), and not even that one
    when its last step was ``done`` and the rollout reset: then ``final`` is a reset observation,
    told by its step counter being no further than the step before.
    """
    if stop < len(steps):
        return None
    final = trajectory.get("final")
    if not isinstance(final, Mapping) or "observation" not in final:
        raise BadInput(where, "missing: the state after the last decision is needed")
    after = observation(final["observation"], where)
    reset = after.step is not None and last.step is not None and after.step <= last.step
    return None if step_done(steps[stop - 1], where) and reset else after


def _terminal_state(previous: Mapping[str, Any], stepwise: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The state after an episode's last decision, rebuilt from that decision's ``info.stepwise``.

    Exact for everything the stepwise reward reads: the new achievements, and (when the task app
    logged per_achievement deltas) every inventory and count rise. Losses are not logged.
    """
    state = {key: dict(value) for key, value in previous.items()}
    if stepwise is None:
        return (
            state,
            "unknown: the rollout reset without storing it and logged no info.stepwise; carried over the state before",
        )
    for name in stepwise.get("new_achievements") or []:
        state["achievements_status"][name] = True
    for item, delta in as_mapping(stepwise.get("inventory_deltas")).items():
        rise = integer(delta, "info.stepwise.inventory_deltas", str(item), low=-INT32_MAX)
        state["inventory"][item] = integer(
            int(state["inventory"].get(item, 0)) + rise, "info.stepwise", f"inventory {item}"
        )
    if "achievements_counts" in state:
        counts = state["achievements_counts"]
        for name, delta in as_mapping(stepwise.get("achievement_count_deltas")).items():
            rise = integer(delta, "info.stepwise.achievement_count_deltas", str(name))
            counts[name] = integer(int(counts.get(name, 0)) + rise, "info.stepwise", f"count {name}")
        for name, on in state["achievements_status"].items():
            if on and not counts.get(name):
                counts[name] = 1  # unlocked means counted at least once
    # Only per_achievement logs the deltas (and then every rise, so none logged means none).
    if logs_rises(stepwise):
        return (
            state,
            "rebuilt from the last decision's info.stepwise: achievements and every rise exact, losses not logged",
        )
    return (
        state,
        "rebuilt from the last decision's info.stepwise: achievements exact, inventory carried over (consistent logs no deltas)",
    )


def _episode_metadata(context: RolloutContext, segment: Segment, states: list[Observed]) -> dict[str, Any]:
    """The metadata every rollout episode carries: where it came from and what it observed."""
    trajectory, k, count = segment.trajectory, segment.k, segment.count
    kinds = sorted({s.kind for s in states})
    metadata = {
        "source": "rollout",
        "file": context.file.name,
        "location": segment.path,
        "run_id": context.response.get("run_id"),
        "env_id": trajectory.get("env_id"),
        "policy": trajectory.get("policy_id") or "unknown",
        "seed": dig(context.response, "request", "env", "seed"),
        "observations": kinds[0] if len(kinds) == 1 else "mixed",
        "episode_in_trajectory": k,
        "episodes_in_trajectory": count,
        "producer": context.producer.name,
        "producer_basis": context.producer_basis,
    }
    policy_name = dig(context.response, "request", "policy", "policy_name")
    if isinstance(policy_name, str):
        metadata["policy_name"] = policy_name  # as a trace database's session names it
    if weights_ignored(context.producer, context.config):
        metadata["weights_ignored"] = True
    max_steps = next((s.max_steps for s in states if s.max_steps), None)
    if max_steps:
        metadata["max_steps"] = max_steps
    return metadata


def _logged(
    context: RolloutContext, stepwise: list[Mapping[str, Any] | None], infos: list[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """What the task app logged about its shaped reward, or None when it logged nothing."""
    if context.config is None and context.summary is None and not any(stepwise):
        return None
    decision_rewards = []
    for info in infos:
        meta = as_mapping(info.get("meta"))
        decision_rewards.append(
            rewards if type(rewards := meta.get("decision_rewards")) is dict or isinstance(rewards, Mapping) else None
        )
    return {
        "config": context.config,
        "config_source": context.config_source,
        # a parsed file's own dicts kept as they are (nothing else holds or changes them)
        "stepwise": [s if type(s) is dict else None if s is None else dict(s) for s in stepwise],
        "decision_rewards": decision_rewards,
        "summary": context.summary,
    }
