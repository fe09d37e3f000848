"""``RecordEpisodes``: a gymnasium wrapper writing every finished episode into a corpus folder while an agent trains.

Wrap each ``CrafterStepwiseEnv`` (also inside ``SyncVectorEnv`` / ``AsyncVectorEnv``: each
sub-env gets its own wrapper, all may share one folder) and every episode is appended to the
corpus folder as it ends (the episodes that ended since the last save go in one part, saves
at least ``save_interval`` seconds apart; the folder's lock serialises writers, also across
processes), ready for ``workbench watch``, ``workbench audit --follow`` or the app's Live
page. Saving runs in a background thread, so a step never waits for the disk; ``close()``
waits for what is queued. Each episode's metadata gets ``training_step`` (this env's decisions
so far times ``num_envs``: the vector env's global step when its envs step together),
``wall_time`` (epoch seconds at its end) and ``recorder`` (the wrapper's name); ids are
``<name>-<env id>`` so envs sharing a folder never clash.
"""

from __future__ import annotations

import os
import queue
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus, Episode
from workbench.data.storage import save_corpus
from workbench.env.crafter_env import CrafterStepwiseEnv
from workbench.env.tensorboard import TensorBoardSeries
from workbench.errors import EnvError, OutputError
from workbench.util.atomic import write_errors_named


class RecordEpisodes(gymnasium.Wrapper):
    """Writes every finished episode of ``env`` (a ``CrafterStepwiseEnv``, possibly wrapped) into
    ``corpus_dir``.

    Adds ``info["recorded_episode"]`` (the id) on the step that ends an episode.
    A step cut short by Ctrl-C (``KeyboardInterrupt``) or any error ends its episode: it is
    queued at once, marked ``end`` "truncated" with ``interrupted`` saying why (see
    ``CrafterStepwiseEnv.step``), and ``close()`` saves it.

    Args:
        env: A ``CrafterStepwiseEnv``, possibly wrapped.
        corpus_dir: The corpus folder episodes are saved into.
        name: Prefix of the recorded ids (default ``run-<pid>-<random>``: unique per env).
        policy_name: The recorded ``policy``.
        num_envs: How many envs step together (a vector env's size), for ``training_step``.
        tensorboard: A folder to write per-component series into (``TensorBoardSeries``).
        configs: The configs those series are scored under (default: the env's own, named ``env``).
        on_episode: Called with the ``Corpus`` of each batch of episodes saved (in the writer thread).
        save_interval: Seconds between two saves: the episodes that ended meanwhile go into one
            part (a part per episode would cost ~25 ms of CPU each).

    Raises:
        EnvError: ``env`` is not a ``CrafterStepwiseEnv`` underneath, or ``num_envs < 1``.
        OutputError: ``tensorboard`` is a file or cannot be made.
    """

    def __init__(
        self,
        env: gymnasium.Env,
        corpus_dir: str | Path,
        *,
        name: str | None = None,
        policy_name: str | None = None,
        num_envs: int = 1,
        tensorboard: str | Path | None = None,
        configs: Mapping[str, RewardConfig] | None = None,
        on_episode: Callable[[Corpus], None] | None = None,
        save_interval: float = 2.0,
    ) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not isinstance(base, CrafterStepwiseEnv):
            raise EnvError(f"RecordEpisodes needs a CrafterStepwiseEnv underneath, got {type(base).__name__}")
        if num_envs < 1:
            raise EnvError(f"num_envs must be at least 1, not {num_envs}")
        self.corpus_dir = Path(corpus_dir)
        self.name = name or f"run-{os.getpid()}-{secrets.token_hex(3)}"
        self.num_envs = int(num_envs)
        self._base = base
        base.keep_recorded(policy_name)
        self._decisions = 0
        self.saved: list[str] = []
        series = None
        if tensorboard is not None:
            series = _series(Path(tensorboard), configs or {"env": base.config})
        self._writer = _Writer(self.corpus_dir, self.saved, series, on_episode, save_interval)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``env.step``; an episode that ended is queued for saving (``info["recorded_episode"]``).

        Args:
            action: As ``env.step``.

        Returns:
            What ``env.step`` returns.
        """
        try:
            observation, reward, terminated, truncated, info = self.env.step(action)
        except BaseException:
            self._queue_ended()  # an interrupted step ended its episode (marked truncated): queue it now
            raise
        self._decisions += 1
        if terminated or truncated:
            ids = self._queue_ended()
            if ids:
                info = {**info, "recorded_episode": ids[-1]}
        return observation, float(reward), terminated, truncated, info

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """``env.reset``; an episode left unfinished is queued for saving (``end`` "abandoned").

        Args:
            **kwargs: Passed to ``env.reset``.

        Returns:
            What ``env.reset`` returns.
        """
        result = self.env.reset(**kwargs)
        self._queue_ended()
        return result

    def close(self) -> None:
        """Close the env (its unfinished episode is recorded), then wait until every queued
        episode is saved. Raises what saving raised (e.g. ``OutputError`` for a full disk)."""
        self.env.close()
        self._queue_ended()
        self._writer.close()
        super().close()

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every episode queued so far is saved.

        Args:
            timeout: Seconds to wait at most; None waits as long as it takes.
        """
        self._writer.join(timeout)

    def _queue_ended(self) -> list[str]:
        episodes = self._base.take_recorded()
        for episode in episodes:
            episode.id = f"{self.name}-{episode.id}"
            episode.metadata.update(
                training_step=self._decisions * self.num_envs, wall_time=time.time(), recorder=self.name
            )
            self._writer.put(episode)
        return [e.id for e in episodes]


def _series(logdir: Path, configs: Mapping[str, RewardConfig]) -> TensorBoardSeries:
    """The TensorBoard series in ``logdir``; ``OutputError`` naming it when it is a file or
    cannot be made (never a raw ``NotADirectoryError``)."""
    if logdir.exists() and not logdir.is_dir():
        raise OutputError(f"{logdir}: tensorboard= must be a folder (made if missing), this is a file")
    with write_errors_named(logdir, "cannot write TensorBoard series"):
        return TensorBoardSeries(logdir, configs)


class _Writer:
    """Saves queued episodes in a daemon thread: everything queued at once goes into one part,
    and saves are at least ``interval`` seconds apart (a part per episode costs ~25 ms of CPU:
    batching keeps it off the training's budget). Keeps the first error to raise."""

    def __init__(
        self,
        root: Path,
        saved: list[str],
        series: TensorBoardSeries | None,
        on_episode: Callable[[Corpus], None] | None,
        interval: float,
    ) -> None:
        self.root, self.saved, self.series, self.on_episode = root, saved, series, on_episode
        self.interval = interval
        self._queue: queue.Queue[Episode | None] = queue.Queue()
        self._hurry = threading.Event()  # set by join/close: save now, do not wait out the interval
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="RecordEpisodes-writer", daemon=True)
        self._thread.start()

    def put(self, episode: Episode) -> None:
        """Queue ``episode``; raises the error an earlier save met, if any."""
        self._raise()
        self._queue.put(episode)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the queue to drain (``EnvError`` after ``timeout`` seconds)."""
        self._hurry.set()
        end = None if timeout is None else time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if end is not None and time.monotonic() > end:
                raise EnvError(f"{self.root}: {self._queue.unfinished_tasks} episode(s) still being saved")
            time.sleep(0.005)
        self._hurry.clear()
        self._raise()

    def close(self) -> None:
        """Save what is queued, stop the thread, close the TensorBoard file."""
        if self._thread.is_alive():
            self._hurry.set()
            self._queue.put(None)
            self._thread.join()
        if self.series is not None:
            self.series.close()
        self._raise()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            episodes = [e for e in batch if e is not None]
            try:
                if episodes and self._error is None:
                    self._save(Corpus(episodes))
            except BaseException as error:  # noqa: BLE001 - handed to the training thread at its next put/close
                self._error = error
            finally:
                for _ in batch:
                    self._queue.task_done()
            if len(episodes) < len(batch):  # None: closing
                return
            self._hurry.wait(self.interval)

    def _save(self, corpus: Corpus) -> None:
        save_corpus(corpus, self.root)
        self.saved.extend(corpus.ids)
        if self.series is not None:
            self.series.add(corpus)
        if self.on_episode is not None:
            self.on_episode(corpus)

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error
