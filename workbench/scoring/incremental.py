"""``LiveScores``: per-episode scores of a growing corpus under several configs, appended incrementally.

Every number of ``Scores.episodes`` depends on one episode only (``workbench.scoring.partitioned``
relies on the same fact), so the episodes of each ``append`` are prepared and scored on their own
and their rows are added to what was there: appending costs time proportional to the new
decisions, never a re-prepare of the corpus. An episode whose metadata says it ``follows`` another
(one rollout with ``on_done = "reset"``) is scored as it is stored, exactly as ``score`` scores it
(only ``verify`` carries the previous episode's last state over), so incremental and full scoring
agree for it too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.components import KIND_COLUMNS, KINDS
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import CorpusError
from workbench.scoring.prepare import prepare
from workbench.scoring.score import score
from workbench.scoring.scores import Scores

#: Columns of ``LiveScores.episodes`` taken from ``Corpus.index`` (the rest come from ``Scores``
#: or the episode's metadata).
_INDEX_COLUMNS = ("policy", "source", "seed", "n_unlocked")


class LiveScores:
    """Per-episode scores of a growing corpus under several configs; appending costs time
    proportional to the new decisions (no re-prepare of what was there).

    Safe to use from two threads (a watcher appending, a view reading): state changes under a
    lock, and ``on_append`` callbacks run after it is released, in the appending thread.

    Args:
        corpus: The episodes so far (may be empty).
        configs: Name -> config; at least one.

    Raises:
        CorpusError: No config is given; or as ``append``.
        EpisodeError: As ``append``.
    """

    def __init__(self, corpus: Corpus, configs: Mapping[str, RewardConfig]) -> None:
        """Score ``corpus`` (may be empty) under ``configs`` (name -> config; at least one)."""
        if not configs:
            raise CorpusError("LiveScores needs at least one config to score with")
        self._lock = threading.RLock()
        self._configs = dict(configs)
        self._chunks: list[Corpus] = []
        self._tables: list[dict[str, Columns]] = []  # per chunk: config name -> its rows, as columns
        self._ids: set[str] = set()
        self._n_episodes = 0
        self._joined: Columns | None = None  # the rows of chunks[: self._table_chunks], joined
        self._table_chunks = 0
        self._corpus: Corpus | None = None
        self._callbacks: list[Callable[[Corpus], None]] = []
        if len(corpus):
            self._add(corpus)

    # -- growing ----------------------------------------------------------------------------
    def append(self, episodes: Corpus) -> None:
        """Score ``episodes`` (new ones, in arrival order) under every config and add them.

        Nothing happens for an empty corpus.

        Args:
            episodes: The new episodes, in arrival order.

        Raises:
            CorpusError: An episode id is already held (nothing is added then); names it.
            EpisodeError: An episode has no decision.
        """
        if not len(episodes):
            return
        self._add(episodes)
        for callback in list(self._callbacks):
            callback(episodes)

    def _add(self, episodes: Corpus) -> None:
        with self._lock:
            ids = episodes.ids
            repeated = [i for i in ids if i in self._ids]
            if repeated:
                raise CorpusError(f"episode {repeated[0]!r} is already in this LiveScores; each episode is added once")
            prepared = prepare(episodes)
            base = _episode_facts(episodes, self._n_episodes)
            tables = {name: _rows(score(prepared, config), name, base) for name, config in self._configs.items()}
            self._chunks.append(episodes)
            self._tables.append(tables)
            self._ids.update(ids)
            self._n_episodes += len(episodes)
            self._corpus = None

    def add_config(self, name: str, config: RewardConfig) -> None:
        """Score everything held so far under ``config`` too (and every later append).

        Args:
            name: The config's name in the tables.
            config: The config.

        Raises:
            CorpusError: ``name`` is taken.
        """
        with self._lock:
            if name in self._configs:
                raise CorpusError(f"config {name!r} is already in this LiveScores; pick another name")
            for chunk, tables in zip(self._chunks, self._tables):
                first = tables[next(iter(self._configs))]
                tables[name] = _rows(score(prepare(chunk), config), name, {c: first[c] for c in _FACT_COLUMNS})
            self._configs[name] = config
            self._joined, self._table_chunks = None, 0

    def on_append(self, callback: Callable[[Corpus], None]) -> None:
        """Call ``callback(new_episodes)`` after each ``append`` that added episodes.

        Args:
            callback: Called with the appended ``Corpus``, in the appending thread.
        """
        self._callbacks.append(callback)

    # -- reading ----------------------------------------------------------------------------
    @property
    def configs(self) -> dict[str, RewardConfig]:
        """The configs scored, name -> config (a copy, in session order)."""
        with self._lock:
            return dict(self._configs)

    @property
    def corpus(self) -> Corpus:
        """Every episode appended so far, in arrival order (built on first access after an append)."""
        with self._lock:
            if self._corpus is None:
                self._corpus = Corpus.concat(self._chunks) if self._chunks else Corpus()
            return self._corpus

    def __len__(self) -> int:
        return self._n_episodes

    def episodes(self) -> pd.DataFrame:
        """One row per (episode, config), by arrival then config in session order (a fresh frame).

        Columns: ``episode``, ``config``, ``arrival`` (0-based), ``return`` (the shaped return,
        = ``reward_sum``), the ``Scores.episodes`` columns (``reward_sum``, ``indicator_sum``,
        ``resource_reward``, ``decisions``, ``steps``, ``env_return``, ``new_achievements_total``,
        ``unique_achievements_total``, ``unique_achievements``, ``final_achievements``,
        ``counts``), each component kind's total after lambda (``KIND_COLUMNS``), ``policy``,
        ``source``, ``seed``, ``n_unlocked`` (from the corpus index), ``wall_time`` (epoch
        seconds from metadata ``wall_time`` or ``created``; NaN without) and ``training_step``
        (metadata ``training_step``; NA without).

        Returns:
            The table described above.
        """
        with self._lock:
            names = list(self._configs)
            pending = [_interleave(tables, names) for tables in self._tables[self._table_chunks :]]
            if pending:
                pieces = ([self._joined] if self._joined is not None else []) + pending
                self._joined = {column: np.concatenate([p[column] for p in pieces]) for column in pieces[0]}
                self._table_chunks = len(self._tables)
            if self._joined is None:
                return _empty_table()
            table = pd.DataFrame(self._joined)  # copies: the caller may edit it
            table["training_step"] = pd.array(table["training_step"].tolist(), dtype="Int64")
            return table


#: Columns every config's rows share (computed once per chunk).
_FACT_COLUMNS = ("episode", "arrival", *_INDEX_COLUMNS, "wall_time", "training_step")


#: A chunk's rows as named columns of equal length (tables are built when ``episodes()`` asks).
Columns = dict[str, np.ndarray]


def _episode_facts(episodes: Corpus, first_arrival: int) -> Columns:
    """The config-independent columns of ``episodes``' rows."""
    index = episodes.index
    metadata = [episodes.episode_extras(i).metadata for i in range(len(episodes))]
    steps = np.empty(len(episodes), dtype=object)
    steps[:] = [_integer(m.get("training_step")) for m in metadata]
    return {
        "episode": index["episode"].astype(str).to_numpy(dtype=object),
        "arrival": np.arange(first_arrival, first_arrival + len(episodes), dtype=np.int64),
        "policy": index["policy"].to_numpy(dtype=object),
        "source": index["source"].to_numpy(dtype=object),
        "seed": index["seed"].to_numpy(dtype=object),
        "n_unlocked": index["n_unlocked"].to_numpy(dtype=np.int64),
        "wall_time": np.array([_epoch_seconds(m.get("wall_time", m.get("created"))) for m in metadata]),
        "training_step": steps,
    }


def _rows(scores: Scores, name: str, facts: Columns) -> Columns:
    """One config's rows for a chunk: the shared facts, the config's name, its scores."""
    table = scores.episodes
    columns: Columns = {column: facts[column] for column in _FACT_COLUMNS}
    columns["config"] = np.full(len(table), name, dtype=object)
    columns["return"] = table["reward_sum"].to_numpy()
    for column in table.columns:
        if column != "episode":
            columns[column] = table[column].to_numpy()
    columns.update(kind_totals(scores))
    return columns


def kind_totals(scores: Scores) -> dict[str, np.ndarray]:
    """Per episode of ``scores``, each component kind's total after lambda (``KIND_COLUMNS``
    names): the sums of ``Scores.components["scaled"]`` by episode and kind.

    Args:
        scores: One config's scores.

    Returns:
        Kind column -> one total per episode, corpus order.
    """
    p = scores.prepared
    paid = scores.payments
    e = p.n_episodes
    totals = {}
    for kind in KINDS:
        mine = paid.of(kind)
        # lambda times each component, summed by episode in the components' order
        episode = p.episode_of[paid.decision[mine]]
        totals[KIND_COLUMNS[kind]] = np.bincount(episode, weights=paid.factor * paid.value[mine], minlength=e).astype(
            float
        )
    return totals


def _interleave(tables: dict[str, Columns], names: list[str]) -> Columns:
    """A chunk's rows ordered by arrival, then config in session order."""
    joined = {column: np.concatenate([tables[name][column] for name in names]) for column in tables[names[0]]}
    if len(names) > 1 and len(tables[names[0]]["arrival"]) > 1:
        order = np.argsort(joined["arrival"], kind="stable")
        joined = {column: values[order] for column, values in joined.items()}
    return joined


def _empty_table() -> pd.DataFrame:
    columns = [*_FACT_COLUMNS, "config", "return", "reward_sum", *KIND_COLUMNS.values()]
    return pd.DataFrame({column: [] for column in columns})


def _epoch_seconds(value: Any) -> float:
    """Epoch seconds from a number or an ISO timestamp; NaN for anything else."""
    if isinstance(value, bool) or value is None:
        return float("nan")
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer past a float's range is no time
            return float("nan")
    if isinstance(value, str):
        stamp = pd.to_datetime(value, utc=True, errors="coerce")
        return float("nan") if pd.isna(stamp) else stamp.timestamp()
    return float("nan")


def _integer(value: Any) -> int | None:
    """An integer metadata value within int64 (the table's column), None for anything else (a
    bool is not a step; a number past int64 is no step a run can reach)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        return None
    return int(value) if _INT64.min <= int(value) <= _INT64.max else None


_INT64 = np.iinfo(np.int64)
