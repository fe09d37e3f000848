"""Several configs on one corpus: each episode's return under each, and a scorecard.

The scorecard says how well each config pays for progress (rank agreement, misranked pairs,
what a hacker earns)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from workbench.analysis.alignment import misranked_pairs, progress_agreement, returns_by_group
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.scoring import prepare, score

__all__ = ["returns_by_config", "scorecard"]


def returns_by_config(corpus: Corpus, configs: Mapping[str, RewardConfig]) -> pd.DataFrame:
    """One row per episode (index ``episode``): its shaped return under each config (a column
    per name, in the mapping's order), then its ``policy`` and ``n_unlocked`` (achievements).

    Args:
        corpus: The episodes.
        configs: Name -> config.

    Returns:
        The table described above.

    Raises:
        CorpusError: The corpus is empty.
    """
    prepared = prepare(corpus)
    returns = pd.DataFrame(
        {name: score(prepared, config).episodes.set_index("episode")["reward_sum"] for name, config in configs.items()}
    )
    return returns.join(corpus.index.set_index("episode")[["policy", "n_unlocked"]])


def scorecard(
    corpus: Corpus,
    configs: Mapping[str, RewardConfig],
    *,
    hacker: str = "farmer",
    reference: str = "scripted",
    by: str = "policy",
) -> pd.DataFrame:
    """One row per config (index: its name): ``rank agreement`` (Spearman's rho between shaped
    return and achievements unlocked, ``alignment.progress_agreement``), ``misranked pairs``
    (episode pairs paid more for less progress) and ``<hacker> / <reference> pay per
    achievement``: how much more one achievement of the ``hacker`` group earns than one of the
    ``reference`` group (groups by the ``by`` column of ``corpus.index``; 1.0 pays them alike,
    above 1 rewards the hacker). The last column is left out when the corpus lacks either group.

    Args:
        corpus: The episodes.
        configs: Name -> config.
        hacker: The group that games the reward (a value of the ``by`` column).
        reference: The honest group it is compared with.
        by: The ``corpus.index`` column groups come from.

    Returns:
        The table described above.

    Raises:
        CorpusError: The corpus is empty, or ``by`` is not one of its index columns.
    """
    prepared = prepare(corpus)
    rows = {}
    for name, config in configs.items():
        scores = score(prepared, config)
        row = {"rank agreement": progress_agreement(scores), "misranked pairs": len(misranked_pairs(scores))}
        per_achievement = returns_by_group(scores, corpus, by=by).set_index(by)["return_per_achievement"]
        if hacker in per_achievement.index and reference in per_achievement.index:
            row[f"{hacker} / {reference} pay per achievement"] = per_achievement[hacker] / per_achievement[reference]
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")
