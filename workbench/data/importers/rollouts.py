"""Task-app rollout responses (JSON, JSONL or a folder of them) turned into episodes.

Each trajectory becomes one episode, or several when the rollout ran with ``on_done = "reset"``.
Achievement counts are Crafter's own when the file stored raw observations (``observed``),
rebuilt exactly from the rises a per_achievement rollout logged (``logged``), or lower-bound
estimates (``estimated``); ``metadata["counts"]`` and ``corpus.index["counts"]`` say which.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from workbench.data.episodes import Episode
from workbench.data.importers.batch import (
    BadInput,
    ImportIssue,
    ImportResult,
    batch_files,
    checked_items,
    keep_items,
    unexpected,
)
from workbench.data.importers.jsonfiles import dig, join_path, read_responses
from workbench.data.importers.producers import Producer, chosen_producer, producer_for_version, response_producer
from workbench.data.importers.rollout_episode import RolloutContext, Segment, rollout_episode, step_done
from workbench.errors import WorkbenchError

#: Rollout steps the task app appends when it ends a rollout early without stepping the env.
_NOT_EXECUTED = ("no_tool_calls", "invalid_action")


def import_rollouts(path: str | Path, *, progress: bool = True, producer: str | None = None) -> ImportResult:
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

    The loop that produced each response (``producers``) is told from its shape, or by
    ``producer`` (``"synth-ai==0.2.24"``); its rules decide what a decision played (the 20-action
    cap of 0.2.14, none in 0.2.16-0.2.24) and each episode records it in
    ``metadata["producer"]`` / ``["producer_basis"]`` (``["weights_ignored"]`` when the run asked
    for per_achievement weights an indicator-only loop did not pay).

    Args:
        path: A ``.json`` or ``.jsonl`` file, or a folder searched recursively for them.
        progress: Show a progress bar (only when there are two files or more).
        producer: The loop that produced every response, ``"synth-ai==X"`` or ``"X"``
            (None: told from each response's shape).

    Returns:
        The episodes that imported and one ``ImportIssue`` per item that did not (a bad file,
        line or trajectory is an issue and the batch goes on), with warnings where an episode's
        text disagrees with what the task app logged.

    Raises:
        WorkbenchError: ``producer`` names no known Crafter loop.
    """
    told = producer_for_version(producer) if producer is not None else None  # "" is refused
    files, collected = batch_files(Path(path), ("*.json", "*.jsonl"), "rollout files (.json, .jsonl)")
    for file in tqdm(files, desc="import", unit="file", disable=not progress or len(files) < 2):
        keep_items(collected, str(file), rollout_file_items(file, told))
    return collected.result(len(files))


def rollout_file_items(file: Path, told: Producer | None) -> list[Episode | ImportIssue]:
    """Every episode of one rollout file, each checked storable (else an issue in its place),
    and an issue per response, trajectory or episode that cannot be read, in the file's order.

    Args:
        file: A ``.json`` or ``.jsonl`` file.
        told: The producer the user named (None: told from each response's shape).

    Returns:
        Episodes (ids as the file gives them) and issues, for ``keep_items``.
    """
    return checked_items(rollout_file_read(file, told), str(file))[0]


def rollout_file_read(file: Path, told: Producer | None) -> list[Episode | ImportIssue]:
    """``rollout_file_items`` before the storable check (``checked_items`` makes it).

    Args:
        file: A ``.json`` or ``.jsonl`` file.
        told: The producer the user named (None: told from each response's shape).

    Returns:
        Episodes and issues, in the file's order.
    """
    items: list[Episode | ImportIssue] = []
    try:
        for item in _file_episodes(file, told):
            items.append(item if isinstance(item, Episode) else ImportIssue(str(file), item.location, item.message))
    except Exception as error:  # noqa: BLE001 - whatever a file does, the batch goes on
        items.append(ImportIssue(str(file), "", unexpected(error)))
    return items


def _file_episodes(file: Path, told: Producer | None) -> Iterator[Episode | BadInput]:
    """Every episode of one file, or a ``BadInput`` per response/episode that cannot be read
    (``told``: the producer the user named, else each response's is told from its shape)."""
    for where, response in read_responses(file):
        if isinstance(response, BadInput):
            yield response
            continue
        try:
            yield from _response_episodes(file, where, response, told)
        except BadInput as error:
            yield error
        except Exception as error:  # noqa: BLE001 - one bad response never costs the file's others
            yield BadInput(where, unexpected(error))


def _response_episodes(file: Path, where: str, response: Any, told: Producer | None) -> Iterator[Episode | BadInput]:
    if not isinstance(response, Mapping):
        raise BadInput(where, f"expected a rollout response object, got {type(response).__name__}")
    trajectories = response.get("trajectories")
    if not isinstance(trajectories, list) or not trajectories:
        raise BadInput(where, "no 'trajectories' list: not a task-app rollout response")
    summary = dig(response, "metrics", "details", "stepwise")
    summary = dict(summary) if isinstance(summary, Mapping) else None
    try:
        producer = chosen_producer(told, response_producer(response))
    except WorkbenchError as error:
        raise BadInput(where, str(error)) from None
    context = RolloutContext(file, where, response, *_logged_config(response, summary), summary, *producer)
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


def _trajectory_episodes(context: RolloutContext, t: int, path: str, trajectory: Any) -> Iterator[Episode | BadInput]:
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
        if type(step) is not dict and not isinstance(step, Mapping):  # dict first: no ABC check
            raise BadInput(f"{path}.steps[{i}]", "expected a step object")
    ends = [i for i, step in enumerate(steps) if step_done(step, f"{path}.steps[{i}]")]
    bounds = [0] + [i + 1 for i in ends if i + 1 < len(steps)] + [len(steps)]
    previous: Episode | None = None
    segments = list(zip(bounds[:-1], bounds[1:]))
    for k, (start, stop) in enumerate(segments, start=1):
        try:
            segment = Segment(t, path, trajectory, steps, start, stop, k, len(segments))
            episode = rollout_episode(context, segment, previous)
        except Exception as error:  # noqa: BLE001 - one bad episode never stops the batch
            yield error if isinstance(error, BadInput) else BadInput(path, unexpected(error))
            previous = None
            continue
        if ended and stop == len(steps):
            episode.metadata["ended"] = ended
        previous = episode
        yield episode
