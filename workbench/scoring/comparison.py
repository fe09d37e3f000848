"""``compare``: two configs over one corpus (per-episode returns and ranks, per-component totals)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.core.components import KINDS
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.scoring.prepare import PreparedCorpus, as_prepared
from workbench.scoring.score import score
from workbench.scoring.scores import Scores


@dataclass(frozen=True, eq=False)
class Comparison:
    """Two configs over one corpus.

    - ``episodes``: per episode ``return_a`` / ``return_b`` (shaped returns), ``difference``
      (b - a), ``rank_a`` / ``rank_b`` (1 = highest return; ties share the best rank) and
      ``rank_change`` (rank_b - rank_a: negative means the episode moved up under b), with
      Crafter's ``env_return``.
    - ``components``: per component of every kind (``kind``, ``name``, ``component`` =
      "kind: name") the corpus total after lambda under each (``total_a``, ``total_b``) and
      ``difference``.
    ``a`` and ``b`` are the full ``Scores``.

    Attributes:
        episodes: Per-episode returns, differences and ranks (above).
        components: Per-component totals under each config (above).
        a: The first config's ``Scores``.
        b: The second config's ``Scores``.
    """

    episodes: pd.DataFrame
    components: pd.DataFrame
    a: Scores
    b: Scores

    def largest_changes(self, top: int = 12) -> pd.DataFrame:
        """The ``top`` rows of ``components`` with the largest absolute ``difference``,
        largest first (ties in component order).

        Args:
            top: How many rows.

        Returns:
            Those rows of ``components``.
        """
        order = self.components["difference"].abs().sort_values(ascending=False, kind="stable").index
        return self.components.loc[order].head(top)


def compare(corpus: Corpus | PreparedCorpus, config_a: RewardConfig, config_b: RewardConfig) -> Comparison:
    """How two configs differ on ``corpus``: per-episode returns and ranks, per-component totals.

    Args:
        corpus: The episodes, or ``prepare(corpus)``.
        config_a: The first config.
        config_b: The second config.

    Returns:
        Both configs' scores side by side.

    Raises:
        CorpusError: The corpus is empty (as ``score``).
        ConfigError: Either config's rewards would not be finite (as ``score``).
    """
    prepared = as_prepared(corpus)
    a, b = score(prepared, config_a), score(prepared, config_b)
    returns = pd.DataFrame(
        {
            "episode": list(prepared.ids),
            "env_return": prepared.env_return,
            "return_a": a.reward_sum,
            "return_b": b.reward_sum,
        }
    )
    returns["difference"] = returns["return_b"] - returns["return_a"]
    for side in ("a", "b"):
        returns[f"rank_{side}"] = returns[f"return_{side}"].rank(ascending=False, method="min").astype(np.int64)
    returns["rank_change"] = returns["rank_b"] - returns["rank_a"]
    totals = pd.merge(
        a.contributions[["kind", "name", "scaled"]].rename(columns={"scaled": "total_a"}),
        b.contributions[["kind", "name", "scaled"]].rename(columns={"scaled": "total_b"}),
        on=["kind", "name"],
        how="outer",
        sort=False,
    ).fillna({"total_a": 0.0, "total_b": 0.0})
    totals.insert(2, "component", totals["kind"] + ": " + totals["name"])
    totals["difference"] = totals["total_b"] - totals["total_a"]
    return Comparison(returns, totals.sort_values(["kind", "name"], key=_kind_order).reset_index(drop=True), a, b)


def _kind_order(column: pd.Series) -> pd.Series:
    """Sort key: kinds in the order a decision lists them, names alphabetically."""
    return column.map(KINDS.index) if column.name == "kind" else column
