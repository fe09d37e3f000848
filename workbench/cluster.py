"""Dask clusters for recording, scoring and search: ``--cluster local:N`` or ``tcp://HOST:PORT``.

``connect(spec)`` is a context manager giving a ``distributed.Client``: ``local:N`` starts a
``LocalCluster`` of N single-threaded worker processes on 127.0.0.1 (and prints its dashboard
link), ``tcp://HOST:PORT`` connects to a running scheduler (``dask scheduler``). On leaving, a
local cluster is stopped; a remote one is only disconnected from.

What runs on it:

- ``import_mapper(client)``: ``workbench import``'s tasks (a few files or sessions each), read on
  the workers and kept in order by the client, the corpus folder's single writer.
- ``DaskScheduler(client)``: a ``workbench.data.recording.EpisodeScheduler``, one task per episode;
  the client writes every finished episode (the corpus folder's single writer). A worker that
  dies takes its running episodes with it: the Dask scheduler runs them again on another
  worker (up to ``distributed.scheduler.allowed-failures`` times, 3 by default), and
  ``retries`` re-runs a task that raised outside the episode (an episode failing for its own
  reasons is a reported failure, not an exception, so it is never retried).
- ``score_on_cluster(client, root, config)``: ``workbench.scoring.partitioned`` over parts of
  whole episodes, one task per part, each worker reading its part from ``root`` (a folder
  every worker sees).
- ``trial_mapper(client, evaluator)``: evaluates a batch of search trials on the workers.
"""

from __future__ import annotations

import logging
import re
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from tqdm.auto import tqdm

from workbench.core.config import RewardConfig
from workbench.data.importers.pipeline import Mapper, bounded_map
from workbench.data.recording import Finish, play_episode
from workbench.errors import ClusterError
from workbench.scoring.partitioned import PartitionedScores, combine_parts, corpus_tasks
from workbench.util.extras import require_extra

__all__ = ["DaskScheduler", "connect", "import_mapper", "parse_cluster", "score_on_cluster", "trial_mapper"]

_LOCAL = re.compile(r"local:(\d+)")
_REMOTE = re.compile(r"tcp://[^\s/:]+:\d+")
#: A local cluster's workers are single-threaded processes: Crafter and the fits hold the GIL.
THREADS_PER_WORKER = 1


def parse_cluster(spec: str) -> tuple[str, int | str]:
    """``("local", N)`` for ``local:N`` (N >= 1) or ``("remote", address)`` for
    ``tcp://HOST:PORT``.

    Args:
        spec: The ``--cluster`` setting.

    Returns:
        The kind and its worker count or address.

    Raises:
        ClusterError: Anything else; names the setting.
    """
    local = _LOCAL.fullmatch(spec.strip())
    if local:
        workers = int(local.group(1))
        if workers < 1:
            raise ClusterError(f"--cluster {spec}: a local cluster needs at least 1 worker")
        return "local", workers
    if _REMOTE.fullmatch(spec.strip()):
        return "remote", spec.strip()
    raise ClusterError(
        f"--cluster {spec!r}: expected local:N (N worker processes here) or tcp://HOST:PORT "
        "(a running `dask scheduler`)"
    )


@contextmanager
def connect(
    spec: str, *, dashboard: str = "127.0.0.1:0", stream: TextIO | None = None, timeout: float = 10.0
) -> Iterator[Any]:
    """A ``distributed.Client`` on the cluster ``spec`` names (see ``parse_cluster``), closed on
    exit; a local cluster is started here (its dashboard link printed to ``stream``, stderr by
    default) and stopped on exit.

    Args:
        spec: ``local:N`` or ``tcp://HOST:PORT``.
        dashboard: Where a local cluster's dashboard listens.
        stream: Where the dashboard link is printed (None: stderr).
        timeout: Seconds to wait for a remote scheduler.

    Yields:
        The client.

    Raises:
        ClusterError: No scheduler answers.
    """
    require_extra("cluster", "--cluster (Dask)", "distributed", "dask")
    from distributed import Client, LocalCluster  # only when a cluster is asked for

    kind, value = parse_cluster(spec)
    stream = stream or sys.stderr
    if kind == "local":
        cluster = LocalCluster(
            n_workers=int(value),
            threads_per_worker=THREADS_PER_WORKER,
            processes=True,
            host="127.0.0.1",
            dashboard_address=dashboard,
        )
        try:
            client = Client(cluster)
            try:
                print(
                    f"dask: local cluster of {value} worker process(es); dashboard {client.dashboard_link}", file=stream
                )
                yield client
            finally:
                # Workers first, so none of them calls a scheduler that has gone (noisy errors);
                # the connections closing on the way are no news (INFO lines otherwise).
                core = logging.getLogger("distributed.core")
                level = core.level
                core.setLevel(logging.WARNING)
                try:
                    client.retire_workers(close_workers=True)
                    client.close()
                finally:
                    core.setLevel(level)
        finally:
            cluster.close()
        return
    try:
        client = Client(str(value), timeout=timeout)
    except OSError as error:
        raise ClusterError(f"--cluster {value}: no Dask scheduler answered ({error})") from None
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        print(f"dask: connected to {value} ({workers} worker(s)); dashboard {client.dashboard_link}", file=stream)
        yield client
    finally:
        client.close()


# -- recording ----------------------------------------------------------------------------------
class DaskScheduler:
    """Records each episode as one Dask task (``workbench.data.recording.EpisodeScheduler``).

    ``retries``: how often a task that raised (outside the episode's own failures) is re-run;
    a lost worker's episodes are re-run by the Dask scheduler itself. The progress bar moves
    when an episode completes (its steps at once).

    Args:
        client: A ``distributed.Client``.
        retries: How often a task that raised (outside the episode's own failures) is re-run.
    """

    def __init__(self, client: Any, *, retries: int = 2) -> None:
        self.client = client
        self.retries = retries

    def run(self, jobs: Sequence[Any], finish: Finish, step_bar: tqdm) -> None:
        """Submit every job, then hand each outcome to ``finish`` in completion order.

        Args:
            jobs: The recording jobs.
            finish: Called with each outcome.
            step_bar: The progress bar, moved by each episode's steps.
        """
        from distributed import as_completed

        run = uuid.uuid4().hex[:8]  # keys unique per run: a resumed run never meets an old result
        futures = [
            self.client.submit(
                play_episode, job, key=f"record-{run}-{job.episode_id}", pure=False, retries=self.retries
            )
            for job in jobs
        ]
        job_of = {future.key: job for future, job in zip(futures, jobs)}
        try:
            for future in as_completed(futures):
                job = job_of[future.key]
                try:
                    episode_id, episode, failure = future.result()
                except Exception as error:  # e.g. KilledWorker: it died on every worker it was tried on
                    episode_id, episode, failure = (
                        job.episode_id,
                        None,
                        (f"episode {job.episode_id!r}: lost on the cluster ({type(error).__name__}: {error})"),
                    )
                if episode is not None:
                    step_bar.update(episode.n_steps)
                finish(episode_id, episode, failure)
                future.release()  # the worker may drop the episode now that it is saved
        finally:
            self.client.cancel([future for future in futures if not future.done()])


# -- importing ----------------------------------------------------------------------------------
def import_mapper(client: Any) -> Mapper:
    """A ``workbench.data.importers.pipeline.Mapper`` running import tasks on the cluster: each
    task (a few files, or sessions of a trace database, which every worker must see at the same
    path) one Dask task, results taken in order with two tasks per worker in flight.

    Args:
        client: A ``distributed.Client``.

    Returns:
        The mapper for ``import_into``.
    """
    window = 2 * max(1, len(client.scheduler_info().get("workers", {})))

    def submit(function: Callable[[Any], Any], task: Any) -> Any:
        return client.submit(function, task, pure=False)

    return lambda function, tasks: bounded_map(submit, function, tasks, window)


# -- scoring --------------------------------------------------------------------------------------
def score_on_cluster(
    client: Any, root: str | Path, config: RewardConfig, *, episodes_per_part: int = 256, progress: bool = True
) -> PartitionedScores:
    """Score the corpus folder ``root`` on the cluster, one task per group of its parts
    (about ``episodes_per_part`` whole episodes; ``workbench.scoring.partitioned``).

    Each worker opens only its parts of ``root`` (so ``root`` must be on a filesystem every worker
    sees, at the same path) and returns its per-episode table and component sums; the client
    keeps only those (``workbench.scoring.partitioned``). Equal to ``score`` in memory: the
    per-episode table exactly, component totals to float summation order.

    Args:
        client: A ``distributed.Client``.
        root: The corpus folder.
        config: The config.
        episodes_per_part: About how many episodes a task scores.
        progress: Show a tqdm bar.

    Returns:
        The combined score.
    """
    from distributed import as_completed

    tasks = corpus_tasks(root, episodes_per_part)
    futures = [client.submit(function, *arguments, config, pure=False) for function, arguments in tasks]
    position = {future.key: i for i, future in enumerate(futures)}
    parts: list[Any] = [None] * len(futures)
    with tqdm(total=len(futures), desc="parts", unit="part", disable=not progress) as bar:
        for future in as_completed(futures):
            parts[position[future.key]] = future.result()
            future.release()
            bar.update()
    return combine_parts(parts, config)


# -- search ---------------------------------------------------------------------------------------
def trial_mapper(
    client: Any, evaluator: Callable[[Mapping[str, Any]], dict[str, float]]
) -> Callable[[list[dict[str, Any]]], list[dict[str, float]]]:
    """A function evaluating a batch of trial params on the workers (in batch order).

    The evaluator (numpy arrays and settings) is sent to every worker once; each keeps its own
    copy, with its cache of fits, for the whole search.

    Args:
        client: A ``distributed.Client``.
        evaluator: Params -> objective values.

    Returns:
        A function from a batch of params to their values.
    """
    [shared] = client.scatter([evaluator], broadcast=True, hash=False)

    def evaluate(batch: list[dict[str, Any]]) -> list[dict[str, float]]:
        futures = [client.submit(_evaluate_trial, shared, params, pure=False) for params in batch]
        return client.gather(futures)

    return evaluate


def _evaluate_trial(
    evaluator: Callable[[Mapping[str, Any]], dict[str, float]], params: Mapping[str, Any]
) -> dict[str, float]:
    """One trial on a worker, single-threaded BLAS as in a serial search."""
    from workbench.util.blas import single_threaded

    with single_threaded():
        return evaluator(params)
