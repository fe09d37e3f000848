"""One episode of a recording, played where a scheduler puts it.

In process, a worker process or a Dask worker: seeds, one Crafter env reused per process, the
policy's decisions under a time limit."""

from __future__ import annotations

import importlib.metadata
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import crafter
import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import ACTION_IDS, Episode, now_iso
from workbench.data.policies import PolicyFactory, PolicyInput, policy_input_from, resolve_policy
from workbench.data.recording.trace import EpisodeTrace
from workbench.util.processes import TimeLimitExceeded, die_with_parent, stop_requested, time_limit


@dataclass(frozen=True)
class _Job:
    """Everything a worker needs to record one episode (picklable, so spawn-safe)."""

    episode_id: str
    number: int
    policy: str | PolicyFactory
    policy_name: str
    corpus_seed: int
    actions_per_decision: int
    max_steps: int
    frames: bool
    decision_timeout: float | None = None


class _PolicyFailure(Exception):
    """The policy raised or returned something that is not 1..K Crafter actions."""


def episode_seeds(seed: int, number: int) -> tuple[int, np.random.Generator]:
    """The world seed and the policy's generator of episode ``number`` of a corpus ``seed``.

    Derived from ``(seed, number)`` alone (numpy ``SeedSequence`` with spawn key ``number``), so an
    episode's world does not depend on how many episodes or workers a run has.

    Args:
        seed: The corpus seed (non-negative).
        number: The episode's number in the corpus (0-based).

    Returns:
        The world seed (0 .. 2**31 - 2) and a generator for the policy.
    """
    sequence = np.random.SeedSequence(seed, spawn_key=(number,))
    world_seed = int(sequence.generate_state(1, dtype=np.uint32)[0]) % (2**31 - 1)
    return world_seed, np.random.default_rng(sequence.spawn(1)[0])


def reset_env(world_seed: int, max_steps: int) -> crafter.Env:
    """A ``crafter.Env`` whose ``reset()`` gives the world of ``world_seed``, ending after ``max_steps``.

    A new env each episode: reusing one would mean setting crafter's private ``_seed`` and
    ``_episode`` (building one costs about 8% of recording an episode; a private attribute can
    go in any release).

    Args:
        world_seed: The seed of the world ``reset()`` makes.
        max_steps: The episode's length limit in environment steps (Crafter's ``length``).

    Returns:
        A new env, not reset yet.
    """
    return crafter.Env(seed=world_seed, length=max_steps)


def _record_episode(job: _Job, on_steps: Callable[[int], None]) -> Episode:
    """Play one episode; raises ``_PolicyFailure`` naming the decision and step when the policy misbehaves."""
    world_seed, rng = episode_seeds(job.corpus_seed, job.number)
    policy = (resolve_policy(job.policy) if isinstance(job.policy, str) else job.policy)(rng)
    env = reset_env(world_seed, job.max_steps)
    obs = env.reset()
    seen = policy_input_from(env, obs, None, 0, job.actions_per_decision)
    trace = EpisodeTrace(state_row(seen.inventory, seen.achievements, seen.player_pos), obs if job.frames else None)
    steps, done = 0, False
    while not done:
        chosen = _decide(policy, seen, job, trace.n_decisions + 1, steps)
        executed, reward, frames = [], 0.0, []
        for name in chosen:
            obs, step_reward, done, info = env.step(ACTION_IDS[name])
            executed.append(name)
            reward += step_reward
            if job.frames:
                frames.append(obs)
            if done:
                break  # the episode ended mid-decision: only executed actions are recorded
        steps += len(executed)
        row = state_row(info["inventory"], info["achievements"], info["player_pos"])
        trace.add(row, executed, reward, done, frames)
        on_steps(len(executed))
        if not done:
            seen = policy_input_from(env, obs, info, steps, job.actions_per_decision)
    return trace.episode(job.episode_id, {**_metadata(job, world_seed), **_policy_metadata(policy)})


def _decide(
    policy: Callable[[PolicyInput], Sequence[str]], seen: PolicyInput, job: _Job, decision: int, step: int
) -> list[str]:
    """Ask the policy and check its answer: 1..actions_per_decision Crafter action names."""
    where = f"episode {job.episode_id!r}, decision {decision} (after step {step})"
    try:
        with time_limit(job.decision_timeout):
            chosen = policy(seen)
    except TimeLimitExceeded:
        raise _PolicyFailure(
            f"{where}: policy {job.policy_name!r} did not answer within {job.decision_timeout:g} s (--decision-timeout)"
        ) from None
    except KeyboardInterrupt:
        if stop_requested():
            raise  # Ctrl-C or SIGTERM from the user: stop the run
        raise _PolicyFailure(f"{where}: policy {job.policy_name!r} raised KeyboardInterrupt") from None
    except BaseException as error:  # a policy bug (SystemExit included) fails its episode only
        raise _PolicyFailure(f"{where}: policy {job.policy_name!r} raised {type(error).__name__}: {error}") from error
    if isinstance(chosen, (str, bytes)) or not isinstance(chosen, Sequence):
        raise _PolicyFailure(f"{where}: policy returned {chosen!r}; expected a list of action names")
    chosen = list(chosen)
    if not chosen:
        raise _PolicyFailure(f"{where}: policy returned no action")
    if len(chosen) > job.actions_per_decision:
        raise _PolicyFailure(
            f"{where}: policy returned {len(chosen)} actions, more than actions_per_decision={job.actions_per_decision}"
        )
    unknown = [a for a in chosen if a not in ACTION_IDS]
    if unknown:
        raise _PolicyFailure(f"{where}: policy returned unknown action(s) {unknown}")
    return chosen


def state_row(
    inventory: Mapping[str, int], achievements: Mapping[str, int], pos: Sequence[int]
) -> tuple[list[int], list[int], list[int]]:
    """One ``Episode`` row from Crafter's dicts.

    Args:
        inventory: Crafter's ``info["inventory"]``, item -> amount.
        achievements: Crafter's ``info["achievements"]``, achievement -> count.
        pos: Crafter's ``info["player_pos"]``, (x, y).

    Returns:
        (inventory in ``INVENTORY_ITEMS`` order, counts in ``ACHIEVEMENTS`` order, [x, y]).
    """
    return [inventory[i] for i in INVENTORY_ITEMS], [achievements[a] for a in ACHIEVEMENTS], [int(pos[0]), int(pos[1])]


def _metadata(job: _Job, world_seed: int) -> dict[str, Any]:
    return {
        "source": "recorded",
        "seed": world_seed,
        "corpus_seed": job.corpus_seed,
        "episode_number": job.number,
        "policy": job.policy_name,
        "actions_per_decision": job.actions_per_decision,
        "max_steps": job.max_steps,
        "crafter_version": importlib.metadata.version("crafter"),
        "created": now_iso(),
    }


def _policy_metadata(policy: Any) -> dict[str, Any]:
    """What a policy adds to its episode's metadata through an optional ``episode_metadata()``
    (the benchmark's labels: the decision spans where a hacker ran its loop); {} without one."""
    extra = getattr(policy, "episode_metadata", None)
    return dict(extra()) if callable(extra) else {}


def _outcome(job: _Job, on_steps: Callable[[int], None]) -> tuple[str, Episode | None, str | None]:
    """(id, episode, None) or (id, None, why it failed): a failure never stops the run."""
    try:
        return job.episode_id, _record_episode(job, on_steps), None
    except _PolicyFailure as failure:
        return job.episode_id, None, str(failure)
    except Exception as error:
        return job.episode_id, None, f"episode {job.episode_id!r}: {type(error).__name__}: {error}"


# Worker processes count steps into a shared counter the parent's progress bar reads.
_STEP_COUNTER: Any = None


def _init_worker(counter: Any, parent_pid: int) -> None:
    """Set a worker up: exit with the parent, leave Ctrl-C to the parent (it stops the workers,
    so a KeyboardInterrupt seen here is a policy's own), and count steps into ``counter``."""
    global _STEP_COUNTER
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _STEP_COUNTER = counter


def _count_steps(n: int) -> None:
    with _STEP_COUNTER.get_lock():
        _STEP_COUNTER.value += n


def _work(job: _Job) -> tuple[str, Episode | None, str | None]:
    """A worker's task (top-level, so spawn can find it)."""
    return _outcome(job, _count_steps)


def play_episode(job: _Job) -> tuple[str, Episode | None, str | None]:
    """Record one job's episode where it runs (a cluster task); a failure is returned, not raised.

    Args:
        job: One episode's recording job, as ``record`` builds it (picklable).

    Returns:
        ``(id, episode, None)``, or ``(id, None, why)`` when the policy or the episode failed
        for its own reasons.
    """
    return _outcome(job, lambda steps: None)
