"""Task-app rollout responses (JSON, JSONL or a folder of them) turned into episodes.

Each trajectory becomes one episode, or several when the rollout ran with ``on_done = "reset"``.
Achievement counts are Crafter's own when the file stored raw observations (``observed``),
rebuilt exactly from the rises a per_achievement rollout logged (``logged``), or lower-bound
estimates (``estimated``); ``metadata["counts"]`` and ``corpus.index["counts"]`` say which.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward import PER_ACHIEVEMENT
from workbench.data.episodes import Episode
from workbench.data.importers.batch import BadInput, Collector, ImportIssue, ImportResult, batch_files, unexpected
from workbench.data.importers.counts import estimated_counts, inventory_disagreements, logged_counts
from workbench.data.importers.decisions import decision_actions, executed_actions, model_messages
from workbench.data.importers.jsonfiles import as_mapping, dig, join_path, read_responses
from workbench.data.importers.observations import Observed, observation
from workbench.data.importers.values import INT32_MAX, finite, flag, integer
from workbench.errors import EpisodeError

#: Rollout steps the task app appends when it ends a rollout early without stepping the env.
_NOT_EXECUTED = ("no_tool_calls", "invalid_action")


def import_rollouts(path: str | Path, *, progress: bool = True) -> ImportResult:
    """Import task-app rollout responses: a ``.json`` file (one response or a list), a ``.jsonl``
    file (one response a line) or a folder of them.

    Each trajectory becomes one episode, or several when the rollout ran with
    ``on_done = "reset"`` (a ``done`` step is followed by the next episode's reset observation).
    States are ``steps[0].obs ... steps[n-1].obs, final.observation``: raw observation dicts are
    used where present, else the text observation is parsed. Text has no achievement counts:
    they are rebuilt exactly from a per_achievement rollout's logged rises
    (``metadata["counts"] == "logged"``) or estimated as lower bounds (``"estimated"``, e.g. a
    consistent rollout, which logs no rises). For text episodes ``episode.views`` keeps each
    state's map view and ``episode.messages`` what the model said (``info.meta.raw_response``).
    The rollout does not store the state after
    the last decision of an episode it reset; it is rebuilt from that decision's ``info.stepwise``
    and ``metadata["terminal_state"]`` says how. ``episode.logged`` keeps the step_rewards
    config, each decision's ``info.stepwise`` and ``info.meta.decision_rewards``, and the
    rollout's ``metrics.details.stepwise`` summary (for the whole trajectory).
    """
    files, collected = batch_files(Path(path), ("*.json", "*.jsonl"), "rollout files (.json, .jsonl)")
    for file in tqdm(files, desc="import", unit="file", disable=not progress or len(files) < 2):
        try:
            for item in _file_episodes(file):
                if isinstance(item, Episode):
                    if collected.add(item, str(file)):  # an episode that cannot be stored is its own issue
                        _warn(collected, file, item)
                else:
                    collected.errors.append(ImportIssue(str(file), item.location, item.message))
        except Exception as error:  # noqa: BLE001 - whatever a file does, the batch goes on
            collected.errors.append(ImportIssue(str(file), "", unexpected(error)))
    return collected.result(len(files))


def _warn(collected: Collector, file: Path, episode: Episode) -> None:
    """Say where an imported episode's text disagrees with what the task app logged."""
    disagree = episode.metadata.get("inventory_disagrees")
    if disagree:
        collected.warnings.append(
            ImportIssue(
                str(file),
                episode.metadata.get("location", ""),
                f"episode {episode.id!r}: the text inventory disagrees with the logged inventory_deltas "
                f"at decision(s) {disagree[:10]}: the file may have been edited",
            )
        )


def _file_episodes(file: Path) -> Iterator[Episode | BadInput]:
    """Every episode of one file, or a ``BadInput`` per response/episode that cannot be read."""
    for where, response in read_responses(file):
        if isinstance(response, BadInput):
            yield response
            continue
        try:
            yield from _response_episodes(file, where, response)
        except BadInput as error:
            yield error
        except Exception as error:  # noqa: BLE001 - one bad response never costs the file's others
            yield BadInput(where, unexpected(error))


def _done(step: Mapping[str, Any], where: str) -> bool:
    """A step's ``done``: true/false or 0/1 (absent or null: false); ``BadInput`` for anything else."""
    value = step.get("done")
    return False if value is None else flag(value, where, "done")


@dataclass
class _Context:
    """What every episode of one response shares."""

    file: Path
    where: str
    response: Mapping[str, Any]
    config: dict[str, Any] | None
    config_source: str | None
    summary: dict[str, Any] | None


def _response_episodes(file: Path, where: str, response: Any) -> Iterator[Episode | BadInput]:
    if not isinstance(response, Mapping):
        raise BadInput(where, f"expected a rollout response object, got {type(response).__name__}")
    trajectories = response.get("trajectories")
    if not isinstance(trajectories, list) or not trajectories:
        raise BadInput(where, "no 'trajectories' list: not a task-app rollout response")
    summary = dig(response, "metrics", "details", "stepwise")
    summary = dict(summary) if isinstance(summary, Mapping) else None
    context = _Context(file, where, response, *_logged_config(response, summary), summary)
    for t, trajectory in enumerate(trajectories):
        path = join_path(where, f"trajectories[{t}]")
        try:
            yield from _trajectory_episodes(context, t, path, trajectory)
        except BadInput as error:
            yield error
        except Exception as error:  # noqa: BLE001 - one bad trajectory never costs the others
            yield BadInput(path, unexpected(error))


def _logged_config(
    response: Mapping[str, Any], summary: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, str | None]:
    """The step_rewards table the rollout ran with: from its request when the file has one
    (policy config first, as the task app reads it), else rebuilt from the summary's echo."""
    for section in ("policy", "env"):
        requested = dig(response, "request", section, "config", "step_rewards")
        if isinstance(requested, Mapping) and requested:
            return dict(requested), f"request.{section}.config.step_rewards"
    if isinstance(response.get("step_rewards"), Mapping):
        return dict(response["step_rewards"]), "step_rewards"
    if summary is None:
        return None, None
    table: dict[str, Any] = {"enabled": True}
    for key in ("mode", "strategy", "indicator_lambda", "step_beta", "weights", "k_limits"):
        if key in summary:
            table[key] = summary[key]
    return table, "metrics.details.stepwise"


def _trajectory_episodes(context: _Context, t: int, path: str, trajectory: Any) -> Iterator[Episode | BadInput]:
    """Split a trajectory at its ``done`` steps (on_done = reset) and build each episode."""
    if not isinstance(trajectory, Mapping):
        raise BadInput(path, "expected a trajectory object")
    steps = trajectory.get("steps")
    if not isinstance(steps, list) or not steps:
        raise BadInput(path, "has no steps: an episode needs at least one decision")
    ended = None
    last_info = steps[-1].get("info") if isinstance(steps[-1], Mapping) else None
    if isinstance(last_info, Mapping) and last_info.get("terminated") and last_info.get("reason") in _NOT_EXECUTED:
        ended = str(last_info["reason"])  # the env never ran this step: not a decision
        steps = steps[:-1]
        if not steps:
            raise BadInput(
                path,
                f"has no executed steps (the rollout ended at once: {ended}); an episode needs at least one decision",
            )
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise BadInput(f"{path}.steps[{i}]", "expected a step object")
    ends = [i for i, step in enumerate(steps) if _done(step, f"{path}.steps[{i}]")]
    bounds = [0] + [i + 1 for i in ends if i + 1 < len(steps)] + [len(steps)]
    previous: Episode | None = None
    segments = list(zip(bounds[:-1], bounds[1:]))
    for k, (start, stop) in enumerate(segments, start=1):
        try:
            episode = _episode(context, t, path, trajectory, steps, start, stop, k, len(segments), previous)
        except Exception as error:  # noqa: BLE001 - one bad episode never stops the batch
            yield error if isinstance(error, BadInput) else BadInput(path, unexpected(error))
            previous = None
            continue
        if ended and stop == len(steps):
            episode.metadata["ended"] = ended
        previous = episode
        yield episode


def _episode(
    context: _Context,
    t: int,
    path: str,
    trajectory: Mapping[str, Any],
    steps: list[Mapping[str, Any]],
    start: int,
    stop: int,
    k: int,
    count: int,
    previous: Episode | None,
) -> Episode:
    """The episode of ``steps[start:stop]``; its states are those steps' obs plus the state after.
    ``previous`` is the episode before it in the same trajectory (on_done = reset), if any."""
    observed = [
        observation(step.get("obs"), f"{path}.steps[{i}].obs") for i, step in enumerate(steps[start:stop], start)
    ]
    actions = [
        decision_actions(step.get("tool_calls"), f"{path}.steps[{i}].tool_calls")
        for i, step in enumerate(steps[start:stop], start)
    ]
    infos: list[Mapping[str, Any]] = [as_mapping(step.get("info")) for step in steps[start:stop]]
    stepwise = [info.get("stepwise") if isinstance(info.get("stepwise"), Mapping) else None for info in infos]
    metadata: dict[str, Any] = {}
    last = observed[-1]
    after = _after_last(trajectory, steps, stop, last, f"{path}.final.observation")
    if after is None:
        state, note = _terminal_state(last.state, stepwise[-1])
        after = Observed(state, None, None, last.kind)
        metadata["terminal_state"] = note
    if steps[stop - 1].get("done") is True or steps[stop - 1].get("done") == 1:
        actions[-1] = executed_actions(actions[-1], last)
    states = observed + [after]
    rewards = [
        finite(step.get("reward") if step.get("reward") is not None else 0.0, f"{path}.steps[{i}]", "reward")
        for i, step in enumerate(steps[start:stop], start)
    ]
    metadata.update(_episode_metadata(context, path, trajectory, states, k, count))
    if previous is not None:
        # The task app scores this episode's first decision against the previous one's end
        # (quirk 7): parity scoring needs to know which episode came before.
        metadata["follows"] = previous.id
    inventory = np.array(
        [[s.state["inventory"].get(item, 0) for item in INVENTORY_ITEMS] for s in states], dtype=np.int64
    )
    status = np.array([[bool(s.state["achievements_status"].get(a, False)) for a in ACHIEVEMENTS] for s in states])
    counts, metadata["counts"], metadata["counts_note"] = _counts(
        states, status, inventory, actions, stepwise, previous
    )
    disagree = inventory_disagreements(inventory, stepwise) if last.kind == "text" else []
    if disagree:
        metadata["inventory_disagrees"] = disagree
    try:
        episode = Episode(
            id=_episode_id(context, t, k, count),
            inventory=inventory,
            achievement_counts=counts,
            achievement_status=status,
            actions=actions,
            env_reward=np.array(rewards, dtype=np.float64),
            done=np.array([_done(step, path) for step in steps[start:stop]], dtype=bool),
            player_pos=np.array([s.position or (-1, -1) for s in states], dtype=np.int32),
            metadata=metadata,
            logged=_logged(context, stepwise, infos),
            views=_views(states),
            messages=model_messages(infos) if last.kind == "text" else None,
        )
    except (EpisodeError, ValueError, TypeError) as error:
        raise BadInput(path, str(error)) from None
    return episode


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


def _views(states: list[Observed]) -> list[str] | None:
    """Each state's text map view ("" where a state had none), or None when no state had one."""
    if all(s.view is None for s in states):
        return None
    return [s.view or "" for s in states]


def _episode_id(context: _Context, t: int, k: int, count: int) -> str:
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
    return None if _done(steps[stop - 1], where) and reset else after


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
    if stepwise.get("strategy") == PER_ACHIEVEMENT:
        return (
            state,
            "rebuilt from the last decision's info.stepwise: achievements and every rise exact, losses not logged",
        )
    return (
        state,
        "rebuilt from the last decision's info.stepwise: achievements exact, inventory carried over (consistent logs no deltas)",
    )


def _episode_metadata(
    context: _Context, path: str, trajectory: Mapping[str, Any], states: list[Observed], k: int, count: int
) -> dict[str, Any]:
    kinds = sorted({s.kind for s in states})
    metadata = {
        "source": "rollout",
        "file": context.file.name,
        "location": path,
        "run_id": context.response.get("run_id"),
        "env_id": trajectory.get("env_id"),
        "policy": trajectory.get("policy_id") or "unknown",
        "seed": dig(context.response, "request", "env", "seed"),
        "observations": kinds[0] if len(kinds) == 1 else "mixed",
        "episode_in_trajectory": k,
        "episodes_in_trajectory": count,
    }
    max_steps = next((s.max_steps for s in states if s.max_steps), None)
    if max_steps:
        metadata["max_steps"] = max_steps
    return metadata


def _logged(
    context: _Context, stepwise: list[Mapping[str, Any] | None], infos: list[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """What the task app logged about its shaped reward, or None when it logged nothing."""
    if context.config is None and context.summary is None and not any(stepwise):
        return None
    decision_rewards = []
    for info in infos:
        meta = as_mapping(info.get("meta"))
        decision_rewards.append(
            meta.get("decision_rewards") if isinstance(meta.get("decision_rewards"), Mapping) else None
        )
    return {
        "config": context.config,
        "config_source": context.config_source,
        "stepwise": [dict(s) if s is not None else None for s in stepwise],
        "decision_rewards": decision_rewards,
        "summary": context.summary,
    }
