"""Record Crafter episodes played by a policy into a corpus folder.

``record(policy, episodes, out)`` plays ``episodes`` fresh Crafter worlds and saves each finished
episode at once (``storage.save_episode``: a part of its own), so an interrupted run keeps what
finished and ``resume=True`` continues it. Crafter is not reproducible from seed and actions
(crafter.md), so a recording stores everything a replay needs: per decision the inventory,
achievement counts, player position, Crafter's reward and ``done``, and (unless ``frames=False``)
every frame. The world seeds derive from ``(seed, episode number)`` alone, so the same command
records the same set of worlds whatever ``workers`` is.

With ``workers > 1`` episodes are recorded in spawned worker processes; the parent is the only
writer of the corpus folder (episode files and index). Where episodes are played is an
``EpisodeScheduler``: ``LocalScheduler`` (in process, or a process pool) by default, or
``workbench.cluster.DaskScheduler`` (one task per episode on a Dask cluster); the run around it
(ids, resume, the single writer, the report) is the same for every scheduler.
"""

from __future__ import annotations

import concurrent.futures as futures
import importlib.metadata
import multiprocessing
import os
import pickle
import re
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import crafter
import numpy as np
from tqdm.auto import tqdm

from workbench.atomic import write_errors_named
from workbench.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.episodes import ACTION_IDS, Episode, now_iso
from workbench.errors import RecordingError, TargetExistsError
from workbench.policies import PolicyFactory, PolicyInput, policy_input_from, resolve_policy
from workbench.processes import TimeLimitExceeded, die_with_parent, saving, stop_requested, stop_signals, time_limit
from workbench.storage import holds_episodes, load_corpus, save_episode


# -- the report -------------------------------------------------------------------------------
@dataclass
class RecordReport:
    """What a ``record`` run did: episodes recorded, failed (with why) and skipped (resume)."""

    out: Path
    recorded: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    steps: int = 0

    @property
    def steps_per_second(self) -> float:
        """Environment steps recorded per second of the run (wall clock)."""
        return self.steps / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def ok(self) -> bool:
        """True when every episode was recorded."""
        return not self.failed

    def __str__(self) -> str:
        lines = [
            f"recorded {len(self.recorded)} episode(s) into {self.out}: {self.steps} steps in "
            f"{self.elapsed:.1f} s ({self.steps_per_second:.0f} steps/s)",
        ]
        if self.skipped:
            lines.append(f"skipped {len(self.skipped)} episode(s) already in {self.out} (resume)")
        if self.failed:
            lines.append(f"FAILED {len(self.failed)} episode(s) (not saved):")
            lines += [f"  - {message}" for message in self.failed.values()]
        return "\n".join(lines)


# -- one episode (runs in a worker) -----------------------------------------------------------
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
    """
    sequence = np.random.SeedSequence(seed, spawn_key=(number,))
    world_seed = int(sequence.generate_state(1, dtype=np.uint32)[0]) % (2**31 - 1)
    return world_seed, np.random.default_rng(sequence.spawn(1)[0])


# One Crafter env per process, reused: building one (its textures, views) cost 8.4% of recording.
_ENV: crafter.Env | None = None


def reset_env(world_seed: int, max_steps: int) -> crafter.Env:
    """This process's env, ready for ``reset()`` to give the world ``crafter.Env(seed=world_seed,
    length=max_steps).reset()`` gives (crafter 1.8.3 seeds episode n's world from (seed, n))."""
    global _ENV
    if _ENV is None:
        _ENV = crafter.Env(seed=world_seed, length=max_steps)
    _ENV._seed, _ENV._episode, _ENV._length = world_seed, 0, max_steps
    return _ENV


def _record_episode(job: _Job, on_steps: Callable[[int], None]) -> Episode:
    """Play one episode; raises ``_PolicyFailure`` naming the decision and step when the policy misbehaves."""
    world_seed, rng = episode_seeds(job.corpus_seed, job.number)
    policy = (resolve_policy(job.policy) if isinstance(job.policy, str) else job.policy)(rng)
    env = reset_env(world_seed, job.max_steps)
    obs = env.reset()
    seen = policy_input_from(env, obs, None, 0, job.actions_per_decision)
    rows = [state_row(seen.inventory, seen.achievements, seen.player_pos)]
    actions: list[list[str]] = []
    rewards: list[float] = []
    dones: list[bool] = []
    images = [obs] if job.frames else None
    steps, done = 0, False
    while not done:
        chosen = _decide(policy, seen, job, len(actions) + 1, steps)
        executed, reward = [], 0.0
        for name in chosen:
            obs, step_reward, done, info = env.step(ACTION_IDS[name])
            executed.append(name)
            reward += step_reward
            if images is not None:
                images.append(obs)
            if done:
                break  # the episode ended mid-decision: only executed actions are recorded
        steps += len(executed)
        actions.append(executed)
        rewards.append(reward)
        dones.append(done)
        rows.append(state_row(info["inventory"], info["achievements"], info["player_pos"]))
        on_steps(len(executed))
        if not done:
            seen = policy_input_from(env, obs, info, steps, job.actions_per_decision)
    inventory, counts, positions = (np.array(column, dtype=np.int32) for column in zip(*rows))
    episode = Episode(
        id=job.episode_id,
        inventory=inventory,
        achievement_counts=counts,
        player_pos=positions,
        actions=actions,
        env_reward=np.array(rewards),
        done=np.array(dones),
        metadata=_metadata(job, world_seed),
    )
    if images is not None:
        episode.set_frames(np.stack(images), episode.step_decisions())
    return episode


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
    """One ``Episode`` row from Crafter's dicts: (inventory in ``INVENTORY_ITEMS`` order, counts in
    ``ACHIEVEMENTS`` order, position)."""
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
    """Record one job's episode where it runs (a cluster task): ``(id, episode, None)``, or
    ``(id, None, why)`` when the policy or the episode failed for its own reasons."""
    return _outcome(job, lambda steps: None)


# -- where episodes are played ----------------------------------------------------------------
#: ``finish(episode_id, episode or None, failure or None)``: the run's single writer.
Finish = Callable[[str, Episode | None, str | None], None]


class EpisodeScheduler(Protocol):
    """Plays recording jobs somewhere and hands each outcome to ``finish`` (in the calling
    process, which writes the corpus) as it comes, updating ``step_bar`` with steps played."""

    def run(self, jobs: list[_Job], finish: Finish, step_bar: tqdm) -> None:
        """Play every job; return when each has been handed to ``finish``."""
        ...


@dataclass(frozen=True)
class LocalScheduler:
    """This machine: in this process (``workers == 1``) or a pool of spawned processes."""

    workers: int = 1

    def run(self, jobs: list[_Job], finish: Finish, step_bar: tqdm) -> None:
        """Play ``jobs`` here or in ``min(workers, len(jobs))`` processes."""
        if self.workers == 1 or len(jobs) <= 1:
            for job in jobs:
                finish(*_outcome(job, step_bar.update))
        else:
            _run_pool(jobs, min(self.workers, len(jobs)), finish, step_bar)


# -- the run (parent) -------------------------------------------------------------------------
#: Seconds a policy may take to answer one decision before its episode fails. The built-in
#: policies answer in milliseconds and a policy calling a language model in seconds to tens of
#: seconds; a minute fails a hung policy's episode soon while never cutting off a slow answer.
DEFAULT_DECISION_TIMEOUT = 60.0
#: Corpus seeds numpy's SeedSequence takes (non-negative) that keep an episode id a short file name.
MAX_SEED = 2**63 - 1
#: The most characters of a policy's name used in its episode ids (a file name has 255 bytes).
MAX_LABEL_CHARS = 80


def record(
    policy: str | PolicyFactory,
    episodes: int,
    out: str | Path,
    *,
    seed: int = 0,
    actions_per_decision: int = 1,
    max_steps: int = 10000,
    workers: int = 1,
    frames: bool = True,
    resume: bool = False,
    progress: bool = True,
    decision_timeout: float | None = DEFAULT_DECISION_TIMEOUT,
    scheduler: EpisodeScheduler | None = None,
) -> RecordReport:
    """Record ``episodes`` episodes of ``policy`` into the corpus folder ``out``.

    ``policy`` is a name or ``"module:function"`` spec (see ``workbench.policies.resolve_policy``)
    or a policy factory (``factory(rng) -> policy``; with ``workers > 1`` it must be a
    module-level function). Episode ids are ``<policy>-s<seed>-<NNNNN>``. A policy that raises or
    answers badly fails only its own episode (not saved; the report says why). ``out`` must not
    already hold episodes unless ``resume=True``, which skips the ids it holds.

    A policy that takes longer than ``decision_timeout`` seconds (None or 0: no limit) to answer
    one decision fails its episode, named with the decision and step; the run goes on. Ctrl-C
    or SIGTERM stops the run (``KeyboardInterrupt``) keeping every finished episode, so
    ``resume=True`` continues it; a save is never cut in two. Worker processes exit with the
    parent, however it dies. ``OutputError`` names ``out`` when it cannot be written (disk full):
    the run stops, keeping what was saved.

    ``scheduler``: where episodes are played (default ``LocalScheduler(workers)``;
    ``workbench.cluster`` gives a Dask cluster's, on whose worker threads ``decision_timeout``
    cannot act); this process writes every episode whatever plays it.
    """
    _check_arguments(episodes, actions_per_decision, max_steps, workers)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise RecordingError(f"seed must be an integer in 0..{MAX_SEED} (2**63 - 1), got {str(seed)[:40]}")
    if decision_timeout is not None and not decision_timeout >= 0:
        raise RecordingError(f"decision_timeout must be a number of seconds >= 0 (0: no limit), got {decision_timeout}")
    name, policy = _policy_name(policy, workers if scheduler is None else 2)
    out = Path(out)
    held = _existing_ids(out, resume)
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:MAX_LABEL_CHARS]  # ids stay short
    jobs = [
        _Job(
            f"{label}-s{seed}-{n:05d}",
            n,
            policy,
            name,
            seed,
            actions_per_decision,
            max_steps,
            frames,
            decision_timeout or None,
        )
        for n in range(episodes)
    ]
    report = RecordReport(out=out, skipped=[job.episode_id for job in jobs if job.episode_id in held])
    if report.skipped:
        _check_resume_settings(out, report.skipped[0], jobs[0])
    todo = [job for job in jobs if job.episode_id not in held]
    # The corpus lists other episodes first (as they were), then this run's by number, whatever
    # order the workers finish in: an episode finished early waits (in memory) for those before it.
    saver = _InOrderSaver(out, [job.episode_id for job in todo], report)
    started = time.perf_counter()
    with (
        stop_signals(),
        tqdm(total=len(todo), desc="episodes", unit="ep", disable=not progress, position=0) as episode_bar,
        tqdm(desc="steps", unit="step", disable=not progress, position=1) as step_bar,
    ):

        def finish(episode_id: str, episode: Episode | None, failure: str | None) -> None:
            if episode is None:
                report.failed[episode_id] = failure or f"episode {episode_id!r}: failed"
            saver.finished(episode_id, episode)
            episode_bar.update()

        try:
            (scheduler or LocalScheduler(workers)).run(todo, finish, step_bar)
        finally:
            saver.flush()  # interrupted: keep every finished episode
    report.elapsed = time.perf_counter() - started
    return report


def _check_arguments(episodes: int, actions_per_decision: int, max_steps: int, workers: int) -> None:
    if episodes < 1:
        raise RecordingError(f"episodes must be at least 1, got {episodes}")
    if actions_per_decision < 1:
        raise RecordingError(f"actions_per_decision must be at least 1, got {actions_per_decision}")
    if max_steps < 1:
        # Crafter reads length 0 as "no limit"; an episode also needs at least one decision.
        raise RecordingError(f"max_steps must be at least 1 (an episode needs at least one decision), got {max_steps}")
    if workers < 1:
        raise RecordingError(f"workers must be at least 1, got {workers}")


def _policy_name(policy: str | PolicyFactory, workers: int) -> tuple[str, str | PolicyFactory]:
    """The policy's name for ids and metadata; resolves a spec once here so a typo fails fast."""
    if isinstance(policy, str):
        resolve_policy(policy)
        return policy, policy
    if not callable(policy):
        raise RecordingError(f"policy must be a name, a 'module:function' spec or a policy factory, got {policy!r}")
    name = f"{getattr(policy, '__module__', '?')}:{getattr(policy, '__qualname__', type(policy).__name__)}"
    if workers > 1:
        try:
            pickle.dumps(policy)  # only to check it can reach a spawned worker (sent by reference)
        except Exception:
            raise RecordingError(
                f"policy {name} cannot be sent to worker processes; pass a module-level function "
                "or a 'module:function' spec, or use workers=1"
            ) from None
    return getattr(policy, "__name__", name), policy


class _InOrderSaver:
    """Saves this run's episodes in job order as they finish (the parent is the single writer):
    an episode is saved once every job before it is saved or failed; ``flush`` saves the rest."""

    def __init__(self, out: Path, order: list[str], report: RecordReport) -> None:
        self.out, self.order, self.report = out, order, report
        self.done: dict[str, Episode | None] = {}
        self.next = 0

    def finished(self, episode_id: str, episode: Episode | None) -> None:
        self.done[episode_id] = episode
        while self.next < len(self.order) and self.order[self.next] in self.done:
            self._save(self.done.pop(self.order[self.next]))
            self.next += 1

    def flush(self) -> None:
        for episode_id in self.order[self.next :]:
            if episode_id in self.done:
                self._save(self.done.pop(episode_id))
        self.next = len(self.order)

    def _save(self, episode: Episode | None) -> None:
        if episode is None:
            return
        # A stop signal waits until the part is committed; a full disk is named (OutputError).
        with saving(), write_errors_named(self.out, f"cannot save episode {episode.id!r}"):
            save_episode(self.out, episode)
        self.report.recorded.append(episode.id)
        self.report.steps += episode.n_steps


def _existing_ids(out: Path, resume: bool) -> set[str]:
    """The episodes ``out`` already holds; an error unless resuming."""
    if not holds_episodes(out):
        return set()
    ids = set(load_corpus(out).ids)
    if not resume:
        raise TargetExistsError(
            f"{out} already holds episodes ({len(ids)}); pass resume=True (--resume) to continue that "
            "recording, or choose another folder (recording never overwrites)"
        )
    return ids


def _check_resume_settings(out: Path, episode_id: str, job: _Job) -> None:
    """Refuse to resume with settings that would mix two kinds of episodes in one corpus."""
    episode = load_corpus(out)[episode_id]
    assert isinstance(episode, Episode)  # a str key gives an episode
    recorded = {**episode.metadata, "frames": episode.has_frames}
    now = {
        "actions_per_decision": job.actions_per_decision,
        "max_steps": job.max_steps,
        "corpus_seed": job.corpus_seed,
        "policy": job.policy_name,
        "frames": job.frames,
    }
    different = {key: (recorded.get(key), value) for key, value in now.items() if recorded.get(key) != value}
    if different:
        shown = ", ".join(f"{key} {old!r} -> {new!r}" for key, (old, new) in different.items())
        raise RecordingError(f"{out}: cannot resume with different settings ({shown})")


def _run_pool(
    jobs: list[_Job],
    workers: int,
    finish: Callable[[str, Episode | None, str | None], None],
    step_bar: tqdm,
) -> None:
    """Record ``jobs`` in ``workers`` spawned processes, handing each result to ``finish`` as it comes."""
    context = multiprocessing.get_context("spawn")  # numba and fork do not mix; spawn is safe everywhere
    counter = context.Value("q", 0)
    initargs = (counter, os.getpid())
    with futures.ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=initargs) as pool:
        pending = {pool.submit(_work, job): job for job in jobs}
        try:
            while pending:
                done, _ = futures.wait(pending, timeout=0.25, return_when=futures.FIRST_COMPLETED)
                step_bar.update(counter.value - step_bar.n)
                for future in done:
                    job = pending.pop(future)
                    try:
                        finish(*future.result())
                    except futures.process.BrokenProcessPool as error:
                        finish(job.episode_id, None, f"episode {job.episode_id!r}: worker process died ({error})")
        except BaseException:
            # Ctrl-C, SIGTERM or a failed save: keep what is saved, stop the workers now (their
            # episodes are lost either way; waiting would take up to an episode's length).
            workers_now = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in workers_now:
                process.terminate()
            raise
