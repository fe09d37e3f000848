"""The benchmark's labels and splits, where it is shipped, and its honest episodes: what reading it needs without its players (no Crafter)."""

from __future__ import annotations

from pathlib import Path

from workbench.data.episodes import Corpus
from workbench.data.storage import holds_episodes, load_corpus
from workbench.errors import CorpusError

__all__ = ["EXPLOIT", "HELD_OUT", "HONEST", "TUNE", "benchmark_root", "honest_episodes", "shipped_benchmark_path"]

EXPLOIT, HONEST = "exploit", "honest"
#: The split thresholds are chosen on; the other one ("held_out") is only reported on.
TUNE, HELD_OUT = "tune", "held_out"


def shipped_benchmark_path() -> Path:
    """The folder of the small benchmark shipped in the package.

    Returns:
        ``workbench/data/shipped/benchmark`` inside the installed package.
    """
    return Path(__file__).resolve().parents[1] / "shipped" / "benchmark"


def benchmark_root(path: str | Path | None = None) -> Path:
    """The folder of the benchmark at ``path`` (None: the shipped one), checked to hold episodes.

    Args:
        path: A folder ``make_benchmark`` recorded into, or None.

    Returns:
        The folder.

    Raises:
        CorpusError: It holds no episodes.
    """
    root = Path(path) if path is not None else shipped_benchmark_path()
    if not holds_episodes(root):
        raise CorpusError(f"{root}: holds no benchmark episodes (make one with `workbench benchmark make`)")
    return root


def honest_episodes(path: str | Path | None = None) -> Corpus:
    """The honest players' episodes of the benchmark at ``path`` (default: the shipped one), in
    its order: the episodes ``load_benchmark`` labels honest, read from their recorded labels
    without importing the roster's players (they import Crafter's game: ~0.2 s of CPU).

    Args:
        path: A folder ``make_benchmark`` recorded into (None: ``shipped_benchmark_path()``).

    Returns:
        Those episodes, as stored (not built).

    Raises:
        CorpusError: ``path`` holds no episodes, or an episode carries no benchmark labels.
        CorpusFormatError: The corpus at ``path`` cannot be read.
    """
    corpus = load_corpus(benchmark_root(path))
    labels = []
    for episode, metadata in zip(corpus.ids, corpus.episode_metadata()):
        if "benchmark_label" not in metadata:
            raise CorpusError(f"episode {episode!r} carries no benchmark labels (not recorded by make_benchmark)")
        labels.append(str(metadata["benchmark_label"]))
    return corpus[[label == HONEST for label in labels]]
