"""Make and load the labelled benchmark corpus: ``make_benchmark`` records it, ``load_benchmark`` reads it with its labels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from workbench.data.benchmarks.labels import HELD_OUT, HONEST, TUNE, benchmark_root, shipped_benchmark_path
from workbench.data.benchmarks.roster import ROSTER, BenchmarkPolicy, entry, split_of
from workbench.data.episodes import Corpus, Episode
from workbench.data.importers import import_rollouts
from workbench.data.recording import EpisodeScheduler, RecordReport, record
from workbench.data.sample import sample_imports_path
from workbench.data.storage import holds_episodes, load_corpus
from workbench.errors import CorpusError, RecordingError

__all__ = ["LABEL_COLUMNS", "Benchmark", "load_benchmark", "make_benchmark", "shipped_benchmark_path"]

#: Columns of ``Benchmark.labels``, one row per episode.
LABEL_COLUMNS = ("episode", "policy", "label", "loop", "split", "spans", "loop_decisions", "decisions")
#: The shipped benchmark's recipe (``workbench benchmark make`` defaults): small enough to ship.
SHIPPED_EPISODES, SHIPPED_MAX_STEPS, SHIPPED_SEED = 4, 400, 0


@dataclass(frozen=True)
class Benchmark:
    """A labelled corpus.

    Attributes:
        corpus: The episodes.
        labels: One row per episode, in corpus order, columns ``LABEL_COLUMNS``: the policy,
            its ``label`` (``exploit`` or ``honest``), the ``loop`` it repeats ("" if honest),
            its ``split`` (``tune`` or ``held_out``), the decision ``spans`` of its loop,
            ``loop_decisions`` (their total) and ``decisions``.
    """

    corpus: Corpus
    labels: pd.DataFrame

    def split(self, name: str) -> Benchmark:
        """The episodes of one split.

        Args:
            name: ``"tune"`` or ``"held_out"`` (another name selects nothing).

        Returns:
            Those episodes and their labels (index reset), in corpus order.
        """
        keep = (self.labels["split"] == name).to_numpy()
        return Benchmark(self.corpus[keep], self.labels[keep].reset_index(drop=True))


def make_benchmark(
    out: str | Path,
    *,
    episodes: int = SHIPPED_EPISODES,
    seed: int = SHIPPED_SEED,
    max_steps: int = SHIPPED_MAX_STEPS,
    policies: Sequence[str] | None = None,
    workers: int = 1,
    frames: bool = False,
    resume: bool = False,
    progress: bool = True,
    scheduler: EpisodeScheduler | None = None,
) -> list[RecordReport]:
    """Record ``episodes`` episodes of every roster policy (or of ``policies``) into ``out``.

    Every policy plays the same worlds (episode n's world and the policy's generator derive
    from ``(seed, n)``), so the same arguments give the same worlds, ids and policy seeds
    whatever ``workers`` or ``scheduler`` (as ``workbench record``; Crafter itself is not
    reproducible step for step, so a policy that reads the world may drift later on).

    Args:
        out: The corpus folder to record into.
        episodes: Episodes per policy (the shipped recipe's 4 by default).
        seed: The corpus seed the worlds derive from.
        max_steps: Crafter's episode length in steps.
        policies: Roster names to record (None: the whole ``ROSTER``).
        workers: Processes playing episodes (see ``record``).
        frames: Keep every frame.
        resume: Continue a recording ``out`` holds (the later policies always resume).
        progress: Show progress bars.
        scheduler: Where episodes are played (see ``record``).

    Returns:
        One ``RecordReport`` per policy, in order.

    Raises:
        RecordingError: A policy is not in the roster, ``policies`` is empty, an argument is out
            of range, or resuming a folder holding episodes not recorded by ``make_benchmark``
            or recorded with another ``seed`` or ``max_steps`` (or other settings).
        TargetExistsError: ``out`` holds episodes and ``resume`` is False.
        OutputError: ``out`` cannot be written.
    """
    names = list(policies) if policies is not None else [e.name for e in ROSTER]
    for name in names:
        entry(name)
    if not names:
        raise RecordingError("policies: name at least one benchmark policy")
    if resume:
        _check_resumable(Path(out), seed=seed, max_steps=max_steps)
    reports = []
    for i, name in enumerate(names):
        reports.append(
            record(
                BenchmarkPolicy(name),
                episodes,
                out,
                seed=seed,
                max_steps=max_steps,
                workers=workers,
                frames=frames,
                resume=resume or i > 0,
                progress=progress,
                scheduler=scheduler,
            )
        )
    return reports


def _check_resumable(out: Path, **settings: int) -> None:
    """Refuse to resume into ``out`` unless every episode it holds is a benchmark episode recorded
    with these ``settings`` (``seed`` is the episodes' ``corpus_seed``): resuming a folder it
    did not make, or with another seed, would mix episodes ``load_benchmark`` cannot label or
    two seeds' worlds in one benchmark. (``record`` checks the rest on the episodes it skips.)"""
    if not holds_episodes(out):
        return
    corpus = load_corpus(out)
    for k in range(len(corpus)):
        metadata = corpus.episode_extras(k).metadata
        episode = corpus.ids[k]
        if "benchmark_label" not in metadata:
            raise RecordingError(
                f"{out}: episode {episode!r} was not recorded by `workbench benchmark make`; "
                "--resume continues only a benchmark (choose another --out)"
            )
        recorded = {"seed": metadata.get("corpus_seed"), "max_steps": metadata.get("max_steps")}
        for name, value in settings.items():
            if recorded[name] != value:
                raise RecordingError(
                    f"{out}: cannot resume with --{name.replace('_', '-')} {value}: its episodes were recorded "
                    f"with {recorded[name]!r} (episode {episode!r}); a benchmark holds one setting"
                )


def load_benchmark(path: str | Path | None = None, *, rollouts: bool = True) -> Benchmark:
    """The benchmark at ``path`` (default: the shipped one) with its labels; with ``rollouts``
    the shipped real task-app rollouts join as honest episodes (even ones tuned on, odd held out).

    Args:
        path: A folder ``make_benchmark`` recorded into (None: ``shipped_benchmark_path()``).
        rollouts: Add the shipped task-app rollouts as honest episodes (policy ``taskapp_rollout``).

    Returns:
        The episodes and their labels.

    Raises:
        CorpusError: ``path`` holds no episodes, or an episode carries no benchmark labels.
        CorpusFormatError: The corpus at ``path`` cannot be read.
    """
    episodes = list(load_corpus(benchmark_root(path)))
    rows = [_recorded_labels(episode) for episode in episodes]
    if rollouts:
        imported = import_rollouts(sample_imports_path() / "taskapp", progress=False).corpus
        for i, episode in enumerate(imported):
            episodes.append(episode)
            rows.append(_row(episode, "taskapp_rollout", HONEST, "", TUNE if i % 2 == 0 else HELD_OUT, []))
    return Benchmark(Corpus(episodes), pd.DataFrame(rows, columns=list(LABEL_COLUMNS)))


def _recorded_labels(episode: Episode) -> tuple[object, ...]:
    """The labels row of a recorded benchmark episode, read from its metadata."""
    meta = episode.metadata
    if "benchmark_label" not in meta:
        raise CorpusError(f"episode {episode.id!r} carries no benchmark labels (not recorded by make_benchmark)")
    policy = str(meta["policy"])
    try:
        split = split_of(policy, int(meta["episode_number"]))
    except RecordingError:  # a policy this roster does not know (another checkout's): never tuned on
        split = HELD_OUT
    return _row(episode, policy, str(meta["benchmark_label"]), str(meta["loop"]), split, meta["loop_spans"])


def _row(episode: Episode, policy: str, label: str, loop: str, split: str, spans: list) -> tuple[object, ...]:
    spans = [(int(a), int(b)) for a, b in spans]
    return (episode.id, policy, label, loop, split, spans, sum(b - a for a, b in spans), episode.n_decisions)
