"""Importers: episodes recorded elsewhere, turned into a workbench ``Corpus``.

- ``import_crafter_recorder(path)``: a folder (or one ``.npz``) written by ``crafter.Recorder``.
- ``import_rollouts(path)``: synth-ai task-app rollout responses (one JSON file, JSONL of many,
  or a folder of both), with what the task app logged about its shaped reward kept in
  ``episode.logged`` so scoring can check its re-computation against it.

Both return an ``ImportResult``: the corpus of good episodes and one ``ImportIssue`` (file,
location, problem) per bad item. A batch goes on past bad items, so one corrupt file never costs
the episodes already read. Nothing here re-simulates Crafter (it is not reproducible from seed
and actions, see crafter.md): every state comes from the file.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
from tqdm.auto import tqdm

from workbench.episodes import (
    ACTION_IDS,
    FRAME_SHAPE,
    Corpus,
    Episode,
    EpisodeError,
    Frames,
    _unique_id,
    reset_state_arrays,
)
from workbench.reward import PER_ACHIEVEMENT
from workbench.tables import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS

#: Arrays every crafter.Recorder episode file holds that the importer needs (``semantic`` and
#: ``discount`` are not needed: the workbench keeps frames, inventories and counts).
RECORDER_ARRAYS = (
    ("image", "action", "reward", "done", "player_pos")
    + tuple(f"achievement_{name}" for name in ACHIEVEMENTS)
    + tuple(f"ainventory_{item}" for item in INVENTORY_ITEMS)
)
#: ``<YYYYmmddTHHMMSS>-ach<N>-len<L>``: the Recorder's file names, which state the episode length.
_RECORDER_NAME = re.compile(r"-ach(\d+)-len(\d+)$")
#: Errors numpy and zipfile raise for a truncated or corrupt ``.npz``.
_NPZ_ERRORS = (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)
#: Rollout steps the task app appends when it ends a rollout early without stepping the env.
_NOT_EXECUTED = ("no_tool_calls", "invalid_action")


# -- results ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportIssue:
    """One bad item: the file, where in it (line, JSON path, array) and what is wrong."""

    file: str
    location: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.location}" if self.location else self.file
        return f"{where}: {self.message}"


@dataclass
class ImportResult:
    """The episodes that imported cleanly and the problems with everything else."""

    corpus: Corpus
    errors: list[ImportIssue] = field(default_factory=list)
    files: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        lines = [
            f"imported {len(self.corpus)} episode(s), {self.corpus.n_decisions} decision(s) "
            f"from {self.files} file(s); {len(self.errors)} problem(s)"
        ]
        lines += [f"  - {issue}" for issue in self.errors]
        return "\n".join(lines)


class _BadInput(Exception):
    """Raised while reading one item; becomes an ``ImportIssue`` once the file is known."""

    def __init__(self, location: str, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


class _Collector:
    """Gathers a batch's episodes and issues, giving repeated ids (two files may carry the same
    run id or stem) a ``-2``, ``-3`` ... suffix as ``Corpus.concat`` does."""

    def __init__(self) -> None:
        self.episodes: list[Episode] = []
        self.errors: list[ImportIssue] = []
        self._seen: set[str] = set()
        self._renamed: dict[str, str] = {}

    def add(self, episode: Episode) -> None:
        unique = _unique_id(episode.id, self._seen)
        self._seen.add(unique)
        # An episode's predecessor in its trajectory arrived just before it: map to its new id.
        if "follows" in episode.metadata:
            episode.metadata["follows"] = self._renamed.get(episode.metadata["follows"], episode.metadata["follows"])
        self._renamed[episode.id] = unique
        episode.id = unique
        self.episodes.append(episode)

    def result(self, files: int) -> ImportResult:
        return ImportResult(Corpus(self.episodes), self.errors, files)


def _files(path: Path, patterns: Sequence[str], what: str) -> tuple[list[Path], _Collector]:
    """The files to read under ``path`` (itself, when it is a file) and a collector for the
    batch, which already holds an issue when there is nothing to read."""
    collected = _Collector()
    if path.is_file():
        return [path], collected
    files = sorted({f for pattern in patterns for f in path.rglob(pattern) if f.is_file()}) if path.is_dir() else []
    if not path.is_dir():
        collected.errors.append(ImportIssue(str(path), "", "no such file or folder"))
    elif not files:
        collected.errors.append(ImportIssue(str(path), "", f"no {what} found (looked for {', '.join(patterns)})"))
    return files, collected


# -- crafter.Recorder -------------------------------------------------------------------------
def import_crafter_recorder(path: str | Path, *, progress: bool = True) -> ImportResult:
    """Import the episode files ``crafter.Recorder`` wrote (a folder of ``.npz``, or one file).

    Each file is one episode of one action per decision. The Recorder's row 0 is the reset
    observation with every other key zero-filled (health 0), so the reset state is Crafter's
    start state (``reset_state_arrays``) and the reset player position is unknown (-1); frames
    are the ``image`` rows (row 0 = reset frame), read lazily from the source file.
    ``stats.jsonl`` and videos are summaries of the same episodes and are not needed.
    """
    files, collected = _files(Path(path), ("*.npz",), "crafter.Recorder episode files (.npz)")
    for file in tqdm(files, desc="import", unit="file", disable=not progress or len(files) < 2):
        try:
            collected.add(_recorder_episode(file))
        except _BadInput as error:
            collected.errors.append(ImportIssue(str(file), error.location, error.message))
    return collected.result(len(files))


def _recorder_episode(file: Path) -> Episode:
    arrays = _read_recorder_arrays(file)
    steps = len(arrays["action"]) - 1
    _check_recorder_shapes(file, arrays, steps)
    inventory0, counts0 = reset_state_arrays()
    inventory = np.column_stack([arrays[f"ainventory_{item}"][1:] for item in INVENTORY_ITEMS])
    counts = np.column_stack([arrays[f"achievement_{name}"][1:] for name in ACHIEVEMENTS])
    try:
        return Episode(
            id=file.stem,
            inventory=np.vstack([inventory0, inventory]),
            achievement_counts=np.vstack([counts0, counts]),
            player_pos=np.vstack([[-1, -1], arrays["player_pos"][1:]]),
            actions=[[ACTIONS[a]] for a in arrays["action"][1:]],
            env_reward=arrays["reward"][1:],
            done=arrays["done"][1:],
            metadata={"source": "crafter-recorder", "file": file.name, "policy": "unknown", "seed": None},
            frames_loader=partial(_recorder_frames, file, steps),
        )
    except EpisodeError as error:
        raise _BadInput("", str(error)) from None


def _read_recorder_arrays(file: Path) -> dict[str, np.ndarray]:
    """All arrays the importer needs, fully read: a truncated file fails here, not later."""
    try:
        with np.load(file, allow_pickle=False) as data:
            missing = [name for name in RECORDER_ARRAYS if name not in data.files]
            if missing:
                shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
                raise _BadInput("", f"missing array(s) {shown}: not a crafter.Recorder episode file")
            return {name: data[name] for name in RECORDER_ARRAYS}
    except _NPZ_ERRORS as error:
        raise _BadInput("", f"corrupt or truncated .npz ({type(error).__name__}: {error})") from None


def _check_recorder_shapes(file: Path, arrays: Mapping[str, np.ndarray], steps: int) -> None:
    if arrays["action"].ndim != 1:
        raise _BadInput("action", f"has shape {arrays['action'].shape}, expected (steps + 1,)")
    if steps < 1:
        raise _BadInput("action", "no step after the reset row: an episode needs at least one decision")
    rows = steps + 1
    expected = {name: (rows,) for name in RECORDER_ARRAYS}
    expected.update(image=(rows, *FRAME_SHAPE), player_pos=(rows, 2))
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            raise _BadInput(name, f"has shape {arrays[name].shape}, expected {shape} (the action array has {rows} rows)")
    if arrays["image"].dtype != np.uint8:
        raise _BadInput("image", f"has dtype {arrays['image'].dtype}, expected uint8")
    action = arrays["action"][1:]
    if not np.issubdtype(action.dtype, np.integer) or action.min() < 0 or action.max() >= len(ACTIONS):
        raise _BadInput("action", f"holds values outside Crafter's action ids 0..{len(ACTIONS) - 1}")
    named = _RECORDER_NAME.search(file.stem)
    if named and int(named.group(2)) != steps:
        raise _BadInput("", f"the file name says len{named.group(2)} but the file holds {steps} steps (truncated?)")


def _recorder_frames(file: Path, steps: int) -> Frames:
    """The ``image`` rows of a Recorder file, read when an episode's frames are first touched."""
    try:
        with np.load(file, allow_pickle=False) as data:
            images = data["image"]
    except _NPZ_ERRORS as error:
        raise EpisodeError(f"{file}: cannot read frames ({type(error).__name__}: {error})") from None
    return Frames(images=images, step_decision=np.arange(1, steps + 1, dtype=np.int32))


# -- task-app rollouts ------------------------------------------------------------------------
def import_rollouts(path: str | Path, *, progress: bool = True) -> ImportResult:
    """Import task-app rollout responses: a ``.json`` file (one response or a list), a ``.jsonl``
    file (one response a line) or a folder of them.

    Each trajectory becomes one episode, or several when the rollout ran with
    ``on_done = "reset"`` (a ``done`` step is followed by the next episode's reset observation).
    States are ``steps[0].obs ... steps[n-1].obs, final.observation``: raw observation dicts are
    used where present, else the text observation is parsed (counts are then derived from the
    status and ``metadata["counts"] == "estimated"``). The rollout does not store the state after
    the last decision of an episode it reset; it is rebuilt from that decision's ``info.stepwise``
    and ``metadata["terminal_state"]`` says how. ``episode.logged`` keeps the step_rewards
    config, each decision's ``info.stepwise`` and ``info.meta.decision_rewards``, and the
    rollout's ``metrics.details.stepwise`` summary (for the whole trajectory).
    """
    files, collected = _files(Path(path), ("*.json", "*.jsonl"), "rollout files (.json, .jsonl)")
    for file in tqdm(files, desc="import", unit="file", disable=not progress or len(files) < 2):
        for item in _file_episodes(file):
            if isinstance(item, Episode):
                collected.add(item)
            else:
                collected.errors.append(ImportIssue(str(file), item.location, item.message))
    return collected.result(len(files))


def _file_episodes(file: Path) -> Iterator[Episode | _BadInput]:
    """Every episode of one file, or a ``_BadInput`` per response/episode that cannot be read."""
    for where, response in _responses(file):
        if isinstance(response, _BadInput):
            yield response
            continue
        try:
            yield from _response_episodes(file, where, response)
        except _BadInput as error:
            yield error


def _responses(file: Path) -> Iterator[tuple[str, Any]]:
    """(location prefix, parsed response or _BadInput) for each response in a JSON/JSONL file."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        yield "", _BadInput("", f"cannot read ({error})")
        return
    if file.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield f"line {number}", _parse_json(line, offset=number - 1)
        return
    document = _parse_json(text, offset=0)
    if isinstance(document, list):
        for i, response in enumerate(document):
            yield f"[{i}]", response
    else:
        yield "", document


def _parse_json(text: str, *, offset: int) -> Any:
    """The parsed JSON, or a _BadInput naming the file's line (``offset`` = lines before ``text``)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        line = error.lineno + offset
        return _BadInput(f"line {line}", f"not valid JSON ({error.msg} at column {error.colno}); truncated file?")


def _join(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def _dig(value: Any, *keys: str) -> Any:
    """``value[k1][k2]...``, or None as soon as a level is missing or not an object."""
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


@dataclass
class _Context:
    """What every episode of one response shares."""

    file: Path
    where: str
    response: Mapping[str, Any]
    config: dict[str, Any] | None
    config_source: str | None
    summary: dict[str, Any] | None


def _response_episodes(file: Path, where: str, response: Any) -> Iterator[Episode | _BadInput]:
    if not isinstance(response, Mapping):
        raise _BadInput(where, f"expected a rollout response object, got {type(response).__name__}")
    trajectories = response.get("trajectories")
    if not isinstance(trajectories, list) or not trajectories:
        raise _BadInput(where, "no 'trajectories' list: not a task-app rollout response")
    summary = _dig(response, "metrics", "details", "stepwise")
    summary = dict(summary) if isinstance(summary, Mapping) else None
    context = _Context(file, where, response, *_logged_config(response, summary), summary)
    for t, trajectory in enumerate(trajectories):
        path = _join(where, f"trajectories[{t}]")
        try:
            yield from _trajectory_episodes(context, t, path, trajectory)
        except _BadInput as error:
            yield error


def _logged_config(response: Mapping[str, Any], summary: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """The step_rewards table the rollout ran with: from its request when the file has one
    (policy config first, as the task app reads it), else rebuilt from the summary's echo."""
    for section in ("policy", "env"):
        table = _dig(response, "request", section, "config", "step_rewards")
        if isinstance(table, Mapping) and table:
            return dict(table), f"request.{section}.config.step_rewards"
    if isinstance(response.get("step_rewards"), Mapping):
        return dict(response["step_rewards"]), "step_rewards"
    if summary is None:
        return None, None
    table: dict[str, Any] = {"enabled": True}
    for key in ("mode", "strategy", "indicator_lambda", "step_beta", "weights", "k_limits"):
        if key in summary:
            table[key] = summary[key]
    return table, "metrics.details.stepwise"


def _trajectory_episodes(context: _Context, t: int, path: str, trajectory: Any) -> Iterator[Episode | _BadInput]:
    """Split a trajectory at its ``done`` steps (on_done = reset) and build each episode."""
    if not isinstance(trajectory, Mapping):
        raise _BadInput(path, "expected a trajectory object")
    steps = trajectory.get("steps")
    if not isinstance(steps, list) or not steps:
        raise _BadInput(path, "has no steps: an episode needs at least one decision")
    ended = None
    last_info = steps[-1].get("info") if isinstance(steps[-1], Mapping) else None
    if isinstance(last_info, Mapping) and last_info.get("terminated") and last_info.get("reason") in _NOT_EXECUTED:
        ended = str(last_info["reason"])  # the env never ran this step: not a decision
        steps = steps[:-1]
        if not steps:
            raise _BadInput(path, f"has no executed steps (the rollout ended at once: {ended}); an episode needs at least one decision")
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise _BadInput(f"{path}.steps[{i}]", "expected a step object")
    ends = [i for i, step in enumerate(steps) if step.get("done")]
    bounds = [0] + [i + 1 for i in ends if i + 1 < len(steps)] + [len(steps)]
    previous_id = None
    segments = list(zip(bounds[:-1], bounds[1:]))
    for k, (start, stop) in enumerate(segments, start=1):
        try:
            episode = _episode(context, t, path, trajectory, steps, start, stop, k, len(segments))
        except (_BadInput, TypeError, ValueError, AttributeError, KeyError) as error:  # the latter: odd field types
            yield error if isinstance(error, _BadInput) else _BadInput(path, f"malformed rollout data ({type(error).__name__}: {error})")
            previous_id = None
            continue
        if previous_id is not None:
            # The task app scores this episode's first decision against the previous one's end
            # (reward.md quirk 7): parity scoring needs to know which episode came before.
            episode.metadata["follows"] = previous_id
        if ended and stop == len(steps):
            episode.metadata["ended"] = ended
        previous_id = episode.id
        yield episode


def _episode(
    context: _Context, t: int, path: str, trajectory: Mapping[str, Any], steps: list[Mapping[str, Any]],
    start: int, stop: int, k: int, count: int,
) -> Episode:
    """The episode of ``steps[start:stop]``; its states are those steps' obs plus the state after."""
    observed = [_observation(step.get("obs"), f"{path}.steps[{i}].obs") for i, step in enumerate(steps[start:stop], start)]
    actions = [_decision_actions(step.get("tool_calls"), f"{path}.steps[{i}].tool_calls") for i, step in enumerate(steps[start:stop], start)]
    infos = [step.get("info") if isinstance(step.get("info"), Mapping) else {} for step in steps[start:stop]]
    stepwise = [info.get("stepwise") if isinstance(info.get("stepwise"), Mapping) else None for info in infos]
    metadata: dict[str, Any] = {}
    last = observed[-1]
    after = _after_last(trajectory, steps, stop, last, f"{path}.final.observation")
    if after is None:
        state, note = _terminal_state(last.state, stepwise[-1])
        after = _Observed(state, None, None, last.kind)
        metadata["terminal_state"] = note
    if steps[stop - 1].get("done"):
        actions[-1] = _executed(actions[-1], last)
    states = observed + [after]
    try:
        rewards = [float(step.get("reward") or 0.0) for step in steps[start:stop]]
    except (TypeError, ValueError):
        raise _BadInput(path, "a step's reward is not a number") from None
    metadata.update(_episode_metadata(context, path, trajectory, states, k, count))
    try:
        episode = Episode.from_states(
            _episode_id(context, t, k, count),
            [s.state for s in states],
            actions,
            env_reward=rewards,
            done=[bool(step.get("done")) for step in steps[start:stop]],
            metadata=metadata,
        )
        episode.player_pos = np.array([s.position or (-1, -1) for s in states], dtype=np.int32)
        episode.logged = _logged(context, stepwise, infos)
        episode.validate()
    except (EpisodeError, ValueError, TypeError) as error:
        raise _BadInput(path, str(error)) from None
    return episode


def _episode_id(context: _Context, t: int, k: int, count: int) -> str:
    """``<run_id>[-t<trajectory>][-e<episode>]`` (suffixes only where needed); without a run id,
    the file's stem and the response's place in it."""
    place = re.sub(r"[^0-9A-Za-z]+", "", context.where)  # "line 3" -> "line3", "[1]" -> "1"
    base = context.response.get("run_id") or (f"{context.file.stem}-{place}" if place else context.file.stem)
    trajectory = f"-t{t}" if len(context.response["trajectories"]) > 1 else ""
    return f"{base}{trajectory}" + (f"-e{k}" if count > 1 else "")


def _after_last(
    trajectory: Mapping[str, Any], steps: list[Mapping[str, Any]], stop: int, last: "_Observed", where: str
) -> "_Observed | None":
    """The state after an episode's last decision, or None when the rollout did not store it.

    Only the trajectory's last episode has it (``final.observation``), and not even that one
    when its last step was ``done`` and the rollout reset: then ``final`` is a reset observation,
    told by its step counter being no further than the step before.
    """
    if stop < len(steps):
        return None
    final = trajectory.get("final")
    if not isinstance(final, Mapping) or "observation" not in final:
        raise _BadInput(where, "missing: the state after the last decision is needed")
    after = _observation(final["observation"], where)
    reset = after.step is not None and last.step is not None and after.step <= last.step
    return None if steps[stop - 1].get("done") and reset else after


def _executed(actions: list[str], before: "_Observed") -> list[str]:
    """The actions of an episode's ``done`` decision that ran: the tool call lists what the
    policy asked, but the env stops at the step limit (known from the ``Step: i/max`` counter)."""
    if before.step is None or not before.max_steps:
        return actions
    return actions[: max(1, before.max_steps - before.step)]


def _terminal_state(previous: Mapping[str, Any], stepwise: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The state after an episode's last decision, rebuilt from that decision's ``info.stepwise``.

    Exact for everything the stepwise reward reads: the new achievements, and (when the task app
    logged per_achievement deltas) every inventory and count rise. Losses are not logged.
    """
    state = {key: dict(value) for key, value in previous.items()}
    if stepwise is None:
        return state, "unknown: the rollout reset without storing it and logged no info.stepwise; carried over the state before"
    for name in stepwise.get("new_achievements") or []:
        state["achievements_status"][name] = True
    for item, delta in (stepwise.get("inventory_deltas") or {}).items():
        state["inventory"][item] = int(state["inventory"].get(item, 0)) + int(delta)
    if "achievements_counts" in state:
        counts = state["achievements_counts"]
        for name, delta in (stepwise.get("achievement_count_deltas") or {}).items():
            counts[name] = int(counts.get(name, 0)) + int(delta)
        for name, on in state["achievements_status"].items():
            if on and not counts.get(name):
                counts[name] = 1  # unlocked means counted at least once
    # Only per_achievement logs the deltas (and then every rise, so none logged means none).
    if stepwise.get("strategy") == PER_ACHIEVEMENT:
        return state, "rebuilt from the last decision's info.stepwise: achievements and every rise exact, losses not logged"
    return state, "rebuilt from the last decision's info.stepwise: achievements exact, inventory carried over (consistent logs no deltas)"


def _episode_metadata(
    context: _Context, path: str, trajectory: Mapping[str, Any], states: list["_Observed"], k: int, count: int
) -> dict[str, Any]:
    kinds = sorted({s.kind for s in states})
    metadata = {
        "source": "rollout",
        "file": context.file.name,
        "location": path,
        "run_id": context.response.get("run_id"),
        "env_id": trajectory.get("env_id"),
        "policy": trajectory.get("policy_id") or "unknown",
        "seed": _dig(context.response, "request", "env", "seed"),
        "observations": kinds[0] if len(kinds) == 1 else "mixed",
        "episode_in_trajectory": k,
        "episodes_in_trajectory": count,
    }
    max_steps = next((s.max_steps for s in states if s.max_steps), None)
    if max_steps:
        metadata["max_steps"] = max_steps
    return metadata


def _logged(context: _Context, stepwise: list[Mapping[str, Any] | None], infos: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """What the task app logged about its shaped reward, or None when it logged nothing."""
    if context.config is None and context.summary is None and not any(stepwise):
        return None
    decision_rewards = []
    for info in infos:
        meta = info.get("meta") if isinstance(info.get("meta"), Mapping) else {}
        decision_rewards.append(meta.get("decision_rewards") if isinstance(meta.get("decision_rewards"), Mapping) else None)
    return {
        "config": context.config,
        "config_source": context.config_source,
        "stepwise": [dict(s) if s is not None else None for s in stepwise],
        "decision_rewards": decision_rewards,
        "summary": context.summary,
    }


def _decision_actions(tool_calls: Any, where: str) -> list[str]:
    """The Crafter action names of one decision's ``interact_many`` tool calls, in order."""
    if not isinstance(tool_calls, list) or not tool_calls:
        raise _BadInput(where, "no tool calls: a decision needs at least one action")
    actions: list[Any] = []
    for call in tool_calls:
        args = call.get("args", call.get("arguments")) if isinstance(call, Mapping) else None
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = None
        if not isinstance(args, Mapping) or not ("actions" in args or "action" in args):
            raise _BadInput(where, f"a tool call without args.actions: {json.dumps(call)[:120]}")
        listed = args.get("actions", [args.get("action")])
        actions.extend(listed if isinstance(listed, list) else [listed])
    unknown = [a for a in actions if a not in ACTION_IDS]
    if unknown:
        raise _BadInput(where, f"unknown action name(s) {unknown}; Crafter's are {', '.join(ACTIONS)}")
    if not actions:
        raise _BadInput(where, "the tool calls hold no actions: a decision needs at least one")
    return actions


# -- observations -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Observed:
    """One observation read into the task app's state form, with what else it told."""

    state: dict[str, Any]
    position: tuple[int, int] | None
    step: int | None
    kind: str  # "raw" or "text"
    max_steps: int | None = None


def _observation(obs: Any, where: str) -> _Observed:
    """A raw observation dict (``inventory``, ``achievements_status`` ...) or a ``{"text": ...}``."""
    if isinstance(obs, Mapping) and isinstance(obs.get("inventory"), Mapping):
        return _raw_observation(obs, where)
    if isinstance(obs, Mapping) and isinstance(obs.get("text"), str):
        return _text_observation(obs["text"], where)
    raise _BadInput(where, "neither a raw observation (with 'inventory') nor a text observation (with 'text')")


def _raw_observation(obs: Mapping[str, Any], where: str) -> _Observed:
    try:
        state: dict[str, Any] = {
            "inventory": {str(k): int(v) for k, v in obs["inventory"].items()},
            "achievements_status": {str(k): bool(v) for k, v in (obs.get("achievements_status") or {}).items()},
        }
        if isinstance(obs.get("achievements_counts"), Mapping):
            state["achievements_counts"] = {str(k): int(v) for k, v in obs["achievements_counts"].items()}
            if not state["achievements_status"]:
                state["achievements_status"] = {k: v > 0 for k, v in state["achievements_counts"].items()}
        position = obs.get("player_position")
        position = (int(position[0]), int(position[1])) if position is not None else None
        step = obs.get("num_steps_taken")
        max_steps = obs.get("max_steps_episode")
        return _Observed(state, position, int(step) if step is not None else None, "raw",
                         int(max_steps) if max_steps is not None else None)
    except (TypeError, ValueError, IndexError) as error:
        raise _BadInput(where, f"raw observation with a malformed field ({error})") from None


_TEXT_LINE = re.compile(r"^\s*(Step|Health|Position|Inventory|Achievements):[ \t]*(.*?)\s*$", re.MULTILINE)
_PAIR = re.compile(r"^[\[\(]\s*(-?\d+)\s*[,\s]\s*(-?\d+)\s*[\]\)]$")
_TEXT_ITEMS = frozenset(INVENTORY_ITEMS) - {"health"}


def _text_observation(text: str, where: str) -> _Observed:
    """Parse the task app's text observation (``Step: i/max``, ``Health: h``, ``Position: [x, y]``,
    ``Inventory: wood:2, sapling:1`` or ``empty``, ``Achievements: a, b`` or ``none``)."""
    fields: dict[str, str] = {}
    for name, value in _TEXT_LINE.findall(text):
        fields.setdefault(name, value)
    missing = [name for name in ("Health", "Inventory", "Achievements") if name not in fields]
    if missing:
        raise _BadInput(where, f"text observation without a {', '.join(repr(m + ':') for m in missing)} line")
    try:
        health = int(float(fields["Health"]))
    except ValueError:
        raise _BadInput(where, f"Health: {fields['Health']!r} is not a number") from None
    inventory = {item: 0 for item in INVENTORY_ITEMS} | {"health": health} | _text_inventory(fields["Inventory"], where)
    status = {name: False for name in ACHIEVEMENTS} | {name: True for name in _text_achievements(fields["Achievements"], where)}
    step = max_steps = None
    if "Step" in fields:
        counter = re.fullmatch(r"(\d+)\s*/\s*(\d+)", fields["Step"])
        if not counter:
            raise _BadInput(where, f"Step: {fields['Step']!r} is not 'i/max'")
        step, max_steps = int(counter.group(1)), int(counter.group(2))
    position = None
    if "Position" in fields:
        pair = _PAIR.match(fields["Position"])
        if not pair:
            raise _BadInput(where, f"Position: {fields['Position']!r} is not '[x, y]'")
        position = (int(pair.group(1)), int(pair.group(2)))
    return _Observed({"inventory": inventory, "achievements_status": status}, position, step, "text", max_steps)


def _text_inventory(value: str, where: str) -> dict[str, int]:
    if value.lower() == "empty":
        return {}
    items = {}
    for entry in value.split(","):
        name, sep, amount = entry.strip().partition(":")
        if not sep or name.strip() not in _TEXT_ITEMS or not amount.strip().lstrip("-").isdigit():
            raise _BadInput(where, f"Inventory entry {entry.strip()!r} is not '<item>:<count>' with a Crafter item")
        items[name.strip()] = int(amount)
    return items


def _text_achievements(value: str, where: str) -> list[str]:
    if value.lower() == "none":
        return []
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in ACHIEVEMENTS]
    if unknown:
        raise _BadInput(where, f"Achievements line names unknown achievement(s) {unknown}")
    return names
