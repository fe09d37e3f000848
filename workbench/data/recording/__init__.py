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
import multiprocessing
import os
import pickle
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tqdm.auto import tqdm

from workbench.data.episodes import Episode
from workbench.data.policies import PolicyFactory, resolve_policy
from workbench.data.recording.episode import (
    _init_worker,
    _Job,
    _outcome,
    _work,
    episode_seeds,
    play_episode,
    reset_env,
    state_row,
)
from workbench.data.recording.trace import EpisodeTrace
from workbench.data.storage import holds_episodes, load_corpus, save_episode
from workbench.errors import RecordingError, TargetExistsError
from workbench.util.atomic import write_errors_named
from workbench.util.processes import saving, stop_signals

__all__ = [
    "DEFAULT_DECISION_TIMEOUT",
    "EpisodeTrace",
    "EpisodeScheduler",
    "Finish",
    "LocalScheduler",
    "RecordReport",
    "episode_seeds",
    "play_episode",
    "record",
    "reset_env",
    "state_row",
]


# -- the report -------------------------------------------------------------------------------
@dataclass
class RecordReport:
    """What a ``record`` run did: episodes recorded, failed (with why) and skipped (resume).

    Attributes:
        out: The corpus folder recorded into.
        recorded: The ids of the episodes saved by this run, in the order saved.
        failed: Episode id -> why it failed (not saved).
        skipped: The ids already in ``out`` that a resumed run left alone.
        elapsed: Wall-clock seconds of the run.
        steps: Environment steps of the episodes saved.
    """

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


# -- where episodes are played ----------------------------------------------------------------
#: ``finish(episode_id, episode or None, failure or None)``: the run's single writer.
Finish = Callable[[str, Episode | None, str | None], None]


class EpisodeScheduler(Protocol):
    """Plays recording jobs somewhere and hands each outcome to ``finish`` (in the calling
    process, which writes the corpus) as it comes, updating ``step_bar`` with steps played."""

    def run(self, jobs: list[_Job], finish: Finish, step_bar: tqdm) -> None:
        """Play every job; return when each has been handed to ``finish``.

        Args:
            jobs: One recording job per episode, as ``record`` builds them (picklable).
            finish: Called in this process with each job's outcome, ``(id, episode, None)`` or
                ``(id, None, why)``.
            step_bar: The progress bar of steps played (``update`` it with each step count).
        """
        ...


@dataclass(frozen=True)
class LocalScheduler:
    """This machine: in this process (``workers == 1``) or a pool of spawned processes.

    Attributes:
        workers: How many processes play episodes (1: this process).
    """

    workers: int = 1

    def run(self, jobs: list[_Job], finish: Finish, step_bar: tqdm) -> None:
        """Play ``jobs`` here or in ``min(workers, len(jobs))`` processes.

        Args:
            jobs: One recording job per episode, as ``record`` builds them.
            finish: Called in this process with each outcome as it comes (a worker that dies
                fails its episode).
            step_bar: The progress bar of steps played.
        """
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

    Episode ids are ``<policy>-s<seed>-<NNNNN>``. A policy that raises, answers badly or takes
    longer than ``decision_timeout`` fails only its own episode (not saved; the report says why,
    naming the decision and step). Ctrl-C or SIGTERM stops the run (``KeyboardInterrupt``),
    keeping every finished episode (``resume=True`` continues it); workers exit with the parent.

    Args:
        policy: A name or ``"module:function"`` spec (``workbench.data.policies.resolve_policy``)
            or a factory ``factory(rng) -> policy`` (module-level when ``workers > 1``).
        episodes: How many episodes to play (at least 1).
        out: The corpus folder; it must not already hold episodes unless ``resume``.
        seed: The run's seed, 0..2**63-1 (episode ``n``'s world and policy seeds derive from
            ``(seed, n)`` alone: ``episode.episode_seeds``).
        actions_per_decision: Env steps each policy decision repeats (at least 1).
        max_steps: Env steps at most per episode (at least 1).
        workers: Processes playing episodes (at least 1).
        frames: Keep each step's frame.
        resume: Skip the ids ``out`` already holds (played with the same settings).
        progress: Show tqdm bars over episodes and steps.
        decision_timeout: Seconds a policy may take per decision (None or 0: no limit).
        scheduler: Where episodes are played (None: ``LocalScheduler(workers)``;
            ``workbench.cluster`` gives a Dask cluster's, on whose worker threads
            ``decision_timeout`` cannot act); this process writes every episode.

    Returns:
        The ``RecordReport``: the episodes saved, skipped and failed, and the time taken.

    Raises:
        RecordingError: An argument out of range, an unknown policy, or ``resume`` with settings
            other than those the saved episodes were played with.
        OutputError: ``out`` cannot be written (e.g. disk full); the run stops, keeping what was saved.
        TargetExistsError: ``out`` holds episodes and ``resume`` is False.
    """
    _check_arguments(episodes, actions_per_decision, max_steps, workers, seed, decision_timeout)
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
    return _play(todo, saver, report, scheduler or LocalScheduler(workers), progress)


def _play(
    todo: list[_Job], saver: _InOrderSaver, report: RecordReport, scheduler: EpisodeScheduler, progress: bool
) -> RecordReport:
    """Play ``todo`` on ``scheduler``, each finished episode saved in order, and time the run."""
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
            scheduler.run(todo, finish, step_bar)
        finally:
            saver.flush()  # interrupted: keep every finished episode
    report.elapsed = time.perf_counter() - started
    return report


def _check_arguments(
    episodes: int, actions_per_decision: int, max_steps: int, workers: int, seed: int, decision_timeout: float | None
) -> None:
    """``RecordingError`` naming the first of ``record``'s numeric arguments out of range."""
    if episodes < 1:
        raise RecordingError(f"episodes must be at least 1, got {episodes}")
    if actions_per_decision < 1:
        raise RecordingError(f"actions_per_decision must be at least 1, got {actions_per_decision}")
    if max_steps < 1:
        # Crafter reads length 0 as "no limit"; an episode also needs at least one decision.
        raise RecordingError(f"max_steps must be at least 1 (an episode needs at least one decision), got {max_steps}")
    if workers < 1:
        raise RecordingError(f"workers must be at least 1, got {workers}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise RecordingError(f"seed must be an integer in 0..{MAX_SEED} (2**63 - 1), got {str(seed)[:40]}")
    if decision_timeout is not None and not decision_timeout >= 0:
        raise RecordingError(f"decision_timeout must be a number of seconds >= 0 (0: no limit), got {decision_timeout}")


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
