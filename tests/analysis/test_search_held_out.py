"""held_out_scores: other configs on a search's held-out episodes, scored as search scores its best."""

from __future__ import annotations

import pytest
from helpers import REPO

from workbench.analysis.search import search
from workbench.analysis.search.held_out import held_out_scores
from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus, search_corpus
from workbench.errors import SearchError


@pytest.mark.parametrize("metric", ["spearman", "kendall"])
def test_the_found_and_base_rows_equal_what_search_reported(metric):
    corpus = search_corpus()
    result = search(
        corpus, trials=4, seed=3, metric=metric, penalize="farmer", penalty=0.5, bootstrap_reps=300, show_progress=False
    )
    base = RewardConfig(strategy="per_achievement")  # search's default base
    recommended = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
    table = held_out_scores(
        corpus,
        result.split,
        {"found": result.config, "base": base, "recommended": recommended},
        metric=metric,
        penalize="farmer",
        reps=300,
    )
    assert list(table.index) == ["found", "base", "recommended"]
    for name, reported in (("found", result.held_out), ("base", result.baseline)):
        row = table.loc[name]
        assert (row["metric"], row["episodes"]) == (reported.metric, reported.episodes) == (metric, 21)
        assert (row["value"], row["low"], row["high"]) == (reported.value, reported.low, reported.high)
        assert row["overpay"] == reported.overpay
    assert table.loc["recommended", "low"] <= table.loc["recommended", "value"] <= table.loc["recommended", "high"]


def test_a_split_of_another_corpus_is_refused():
    result = search(sample_corpus(), trials=0, bootstrap_reps=50, show_progress=False)
    with pytest.raises(SearchError, match="lacks"):
        held_out_scores(search_corpus(), result.split, {"found": result.config})
    with pytest.raises(SearchError, match="metric"):
        held_out_scores(sample_corpus(), result.split, {"found": result.config}, metric="pearson")
