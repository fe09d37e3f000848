"""Scoring a corpus part by part (parts of whole episodes), for corpora bigger than memory.

Every number of ``Scores.episodes`` depends on one episode only, so scoring parts of whole
episodes and concatenating their per-episode tables gives the in-memory table exactly (the
same floats: each episode's sums run over the same decisions in the same order). Component
totals (``contributions``) are sums over the whole corpus: each part sums its own, and the
parts' sums are added in part order, so they equal the in-memory totals up to float summation
order (counts exactly). Crafter's score comes from per-part unlock counts (integers, exact);
alignment numbers are computed from the combined per-episode table.

A corpus folder (``workbench.data.storage``) is split along its own parts: a task takes
consecutive committed parts holding about ``episodes_per_part`` episodes (never splitting the
parts an episode written again spans) and opens only those (``load_corpus(root, parts=...)``);
the folder is only read, and only through storage's API. A ``Corpus`` in memory is split by
index position.

What must fit in one process: one task's episodes, prepared and scored; and where the results
are combined, the per-episode table (a row per episode) and one small component table per
task. Where tasks run is the caller's ``mapper`` (the builtin ``map`` here, a Dask cluster in
``workbench.cluster``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward import INDICATOR_COMPONENT_NAME
from workbench.core.reward_rule import RewardRule
from workbench.data.episodes import Corpus
from workbench.data.storage import episode_ids_by_part, load_corpus
from workbench.errors import CorpusError
from workbench.scoring.crafter_score import success_rates
from workbench.scoring.prepare import prepare
from workbench.scoring.score import score

__all__ = [
    "PartScore",
    "PartitionedScores",
    "combine_parts",
    "part_ranges",
    "score_part",
    "score_partitioned",
    "score_parts_of",
    "task_parts",
]

#: Order of ``Scores.contributions`` rows: by kind, then by the name's place in Crafter's tables.
_COMPONENT_ORDER = {
    key: rank
    for rank, key in enumerate(
        [("achievement", name) for name in ACHIEVEMENTS]
        + [("inventory", item) for item in INVENTORY_ITEMS]
        + [("achievement_count", name) for name in ACHIEVEMENTS]
        + [("indicator", INDICATOR_COMPONENT_NAME)]
    )
}


@dataclass(frozen=True)
class PartScore:
    """One part's share of a score: its per-episode table, its component sums
    (``Scores.contributions``) and per achievement how many of its episodes unlocked it.

    Attributes:
        episodes: As ``Scores.episodes``, for the part's episodes.
        contributions: As ``Scores.contributions``, over the part.
        unlocked: int (22,): episodes of the part that unlocked each achievement.
    """

    episodes: pd.DataFrame
    contributions: pd.DataFrame
    unlocked: np.ndarray


def part_ranges(n_episodes: int, episodes_per_part: int) -> list[tuple[int, int]]:
    """``(start, stop)`` corpus positions of consecutive parts of at most ``episodes_per_part``
    episodes.

    Args:
        n_episodes: The corpus's length.
        episodes_per_part: The largest part.

    Returns:
        The ranges, in order.

    Raises:
        CorpusError: An empty corpus or a part size below 1.
    """
    if episodes_per_part < 1:
        raise CorpusError(f"episodes_per_part must be at least 1, got {episodes_per_part}")
    if n_episodes < 1:
        raise CorpusError("cannot score an empty corpus")
    return [(start, min(start + episodes_per_part, n_episodes)) for start in range(0, n_episodes, episodes_per_part)]


def score_part(corpus: Corpus, config: RewardConfig) -> PartScore:
    """Score one part (a ``Corpus`` of whole episodes) in this process.

    Args:
        corpus: The part's episodes.
        config: The config.

    Returns:
        The part's share.
    """
    prepared = prepare(corpus)
    scores = score(prepared, config)
    return PartScore(scores.episodes, scores.contributions, success_rates(prepared)["episodes"].to_numpy())


def task_parts(root: str | Path, episodes_per_part: int) -> list[list[str]]:
    """A columnar folder's committed parts grouped for tasks of about ``episodes_per_part``
    episodes, in commit (corpus) order; an episode written again (in a later part) keeps all
    its parts in one group. Reads only the episodes tables' ``episode`` column. Raises
    ``CorpusError`` for a part size below 1 or a folder without episodes.

    Args:
        root: The corpus folder.
        episodes_per_part: About how many episodes a task gets.

    Returns:
        Part names per task, in commit order.

    Raises:
        CorpusError: A part size below 1 or a folder without episodes.
    """
    root = Path(root)
    if episodes_per_part < 1:
        raise CorpusError(f"episodes_per_part must be at least 1, got {episodes_per_part}")
    by_part = episode_ids_by_part(root)
    names, ids = list(by_part), list(by_part.values())
    last_part = {episode: i for i, part_ids in enumerate(ids) for episode in part_ids}
    groups: list[list[str]] = []
    group: list[str] = []
    in_group, reaches = 0, -1  # episodes in the group; the last part one of its episodes is in
    for i, (name, part_ids) in enumerate(zip(names, ids)):
        group.append(name)
        in_group += len(part_ids)
        reaches = max([reaches, *(last_part[e] for e in part_ids)])
        if in_group >= episodes_per_part and reaches <= i:
            groups.append(group)
            group, in_group = [], 0
    if group:
        groups.append(group)
    if not any(ids):
        raise CorpusError(f"{root}: holds no episodes to score")
    return groups


def score_parts_of(root: str, parts: Sequence[str], config: RewardConfig) -> PartScore:
    """Score the episodes of ``parts`` of the corpus folder ``root`` (what one task does): only
    those parts are opened (``load_corpus(root, parts=parts)``); frames are not read.

    Args:
        root: The corpus folder.
        parts: Committed part names.
        config: The config.

    Returns:
        Those episodes' share.
    """
    return score_part(load_corpus(root, parts=parts), config)


def corpus_tasks(root: str | Path, episodes_per_part: int) -> list[tuple[Callable[..., PartScore], tuple[Any, ...]]]:
    """The tasks scoring the folder ``root`` takes: ``(function, arguments before the config)``
    each, in corpus order (groups of the folder's parts)."""
    root = str(Path(root).resolve())
    return [(score_parts_of, (root, names)) for names in task_parts(root, episodes_per_part)]


@dataclass(frozen=True)
class PartitionedScores:
    """A score combined from parts: ``episodes`` (as ``Scores.episodes``, exactly),
    ``contributions`` (as ``Scores.contributions``), ``success_rates`` and ``crafter_score``
    (as ``workbench.scoring.success_rates`` / ``crafter_score``), ``config``.

    Attributes:
        config: The config scored.
        episodes: As ``Scores.episodes``, exactly.
        contributions: As ``Scores.contributions``.
        success_rates: As ``workbench.scoring.success_rates``.
        parts: How many parts were combined.
    """

    config: RewardConfig
    episodes: pd.DataFrame
    contributions: pd.DataFrame
    success_rates: pd.DataFrame
    parts: int

    @property
    def reward_sum(self) -> np.ndarray:
        """Shaped return per episode (corpus order)."""
        return self.episodes["reward_sum"].to_numpy()

    @property
    def rule(self) -> RewardRule:
        """The config's reward rule (``core.reward_rule``): what it pays, how it reads lambda."""
        return self.config.rule

    @property
    def crafter_score(self) -> float:
        """Crafter's score in percent (``workbench.scoring.crafter_score``)."""
        rates = self.success_rates["success_rate"].to_numpy()
        return float(np.exp(np.mean(np.log1p(rates))) - 1.0)

    @property
    def estimated_episodes(self) -> list[str]:
        """Episodes whose achievement counts are estimates (see ``Scores.estimated_episodes``)."""
        return self.episodes.loc[self.episodes["counts"] == "estimated", "episode"].tolist()

    def totals(self) -> dict[str, Any]:
        """Corpus totals of the episode table's numeric columns (as ``Scores.totals``).

        Returns:
            ``{"episodes": n, column: sum, ...}``.
        """
        numeric = self.episodes.drop(columns=["episode", "unique_achievements", "final_achievements", "counts"])
        return {"episodes": len(self.episodes), **{k: numeric[k].sum().item() for k in numeric.columns}}


def combine_parts(parts: Sequence[PartScore], config: RewardConfig) -> PartitionedScores:
    """The corpus's score from its parts' (in corpus order).

    Args:
        parts: The parts' scores, in corpus order.
        config: The config they were scored under.

    Returns:
        The combined score.

    Raises:
        CorpusError: ``parts`` is empty.
    """
    if not parts:
        raise CorpusError("cannot score an empty corpus")
    episodes = pd.concat([part.episodes for part in parts], ignore_index=True)
    table = pd.concat([part.contributions for part in parts], ignore_index=True)
    # groupby sums each component's part sums in part order (the order the rows were concatenated).
    contributions = table.groupby(["kind", "name"], sort=False, as_index=False).agg(
        count=("count", "sum"), reward=("reward", "sum"), scaled=("scaled", "sum")
    )
    order = [_COMPONENT_ORDER[(kind, name)] for kind, name in zip(contributions["kind"], contributions["name"])]
    contributions = contributions.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
    contributions["count"] = contributions["count"].astype(parts[0].contributions["count"].dtype)
    unlocked = np.sum([part.unlocked for part in parts], axis=0).astype(np.int64)
    rates = pd.DataFrame(
        {
            "achievement": list(ACHIEVEMENTS),
            "success_rate": 100.0 * unlocked / len(episodes),
            "episodes": unlocked,
        }
    )
    return PartitionedScores(config, episodes, contributions, rates, len(parts))


def score_partitioned(
    corpus: Corpus | str | Path,
    config: RewardConfig,
    *,
    episodes_per_part: int = 256,
    mapper: Callable[..., Iterable[PartScore]] = map,
) -> PartitionedScores:
    """Score ``corpus`` (a ``Corpus``, or a corpus folder each part is read from) part by part.

    ``mapper(function, *iterables)`` runs the parts (``map`` by default: one after another in
    this process, holding one part at a time).

    Args:
        corpus: A ``Corpus``, or a corpus folder.
        config: The config.
        episodes_per_part: The largest part (whole parts of a folder are grouped to about this).
        mapper: Runs ``score_part`` / ``score_parts_of`` over the parts (e.g. a pool's ``map``).

    Returns:
        The combined score.

    Raises:
        CorpusError: An empty corpus or a part size below 1.
    """
    if isinstance(corpus, Corpus):
        ranges = part_ranges(len(corpus), episodes_per_part)
        parts = list(mapper(lambda r: score_part(corpus[r[0] : r[1]], config), ranges))
    else:
        tasks = corpus_tasks(corpus, episodes_per_part)
        parts = list(mapper(lambda task: task[0](*task[1], config), tasks))
    return combine_parts(parts, config)
