"""What is wrong with this reward config on this corpus: ``diagnose(corpus, config)``.

One call gives tidy tables and a list of flags, each saying why in words:

- **farming**: per episode and resource event (inventory item or achievement count), how often
  it paid and how much of the return its repeats beyond the first brought; the loops Crafter
  allows (mine stone / place it, pick a sapling / plant it) with their pay per lap. Flagged when
  an episode's repeats outweigh its achievement credits.
- **dominance**: each group's (policy's) return by component kind and name; flagged when one
  component, or resource shaping as a whole, passes a threshold.
- **dead entries**: config entries that cannot change any return (lint's unknown names and
  idle k-limits, weights of achievements nobody here unlocked, resource-table entries Crafter
  never produces).
- **alignment**: Spearman and Kendall rank agreement between shaped return and progress, with
  stratified-bootstrap intervals, and the misranked pairs.
- **sensitivity**: per achievement weight, the exact interval over which the ranking of episodes
  stays as it is, and the change that fixes the worst misranked pair.

``workbench.views.plots.diagnostics.diagnosis_figure`` draws it on one page; ``workbench diagnose
CONFIG CORPUS`` prints it. Nothing here imports matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.analysis.diagnostics.components import component_totals, episode_facts
from workbench.analysis.diagnostics.dead_entries import dead_entries
from workbench.analysis.diagnostics.dominance import COMPONENT_THRESHOLD, DOMINANCE_THRESHOLD, dominance
from workbench.analysis.diagnostics.farming import cycles, farming_episodes, farming_events
from workbench.analysis.diagnostics.flags import Flag, flags_table
from workbench.analysis.diagnostics.loop_pay import episode_loop_pay
from workbench.analysis.diagnostics.rank_intervals import PROGRESS_MEASURES, agreement, alignment_flags, misranked
from workbench.analysis.diagnostics.sensitivity import sensitivity
from workbench.analysis.rankstats import MAX_REPS
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import DiagnosisError
from workbench.scoring import Scores, score

__all__ = ["COMPONENT_THRESHOLD", "DOMINANCE_THRESHOLD", "TABLES", "Diagnosis", "Flag", "diagnose"]

#: The tables of a diagnosis, in the order they are printed and written.
TABLES = (
    "flags",
    "farming_episodes",
    "farming",
    "cycles",
    "dominance_by_kind",
    "dominance",
    "dead_entries",
    "alignment",
    "misranked",
    "sensitivity",
)


@dataclass(frozen=True, eq=False)
class Diagnosis:
    """What ``diagnose`` found. Every table is a tidy ``DataFrame``.

    Attributes:
        config: The config diagnosed.
        scores: The config's ``Scores``.
        by: The ``corpus.index`` column episodes were grouped by.
        flags: One row per problem (``section``, ``code``, ``subject``, ``why``).
        farming: Per episode and resource event: ``times_paid``, ``units``, ``paid``,
            ``first_paid``, ``repeat_paid``, ``repeat_share`` (of the episode's |return|),
            ``counts`` (observed / logged / estimated) and ``estimated`` (count shaping is an estimate).
        farming_episodes: Per episode ``return``, ``credits``, ``resource``, ``first_time``,
            ``repeats``, ``repeat_share``, ``count_shaping_estimated``, ``flagged``.
        cycles: Per episode and loop: ``gathered``, ``spent``, ``laps``, ``pay_per_lap``,
            ``lap_paid``, ``share_of_return``, ``estimated``.
        dominance: Per group (``by``) and component, ``paid`` and ``share``.
        dominance_by_kind: The same per component kind.
        dead_entries: ``key``, ``value``, ``code``, ``judged``, ``why``.
        alignment: Per progress measure and statistic, ``estimate``, ``low``, ``high``.
        misranked: The pairs paid more for less progress, worst first.
        sensitivity: Per achievement weight, the stable interval ``low`` / ``high`` and the fix.
        settings: The thresholds and bootstrap settings used.
    """

    config: RewardConfig
    scores: Scores
    by: str
    flags: pd.DataFrame
    farming: pd.DataFrame
    farming_episodes: pd.DataFrame
    cycles: pd.DataFrame
    dominance: pd.DataFrame
    dominance_by_kind: pd.DataFrame
    dead_entries: pd.DataFrame
    alignment: pd.DataFrame
    misranked: pd.DataFrame
    sensitivity: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name (``TABLES`` order): what ``workbench diagnose --out`` writes.

        Returns:
            Name -> table.
        """
        return {name: getattr(self, name) for name in TABLES}

    @property
    def estimated_episodes(self) -> list[str]:
        """Episodes whose achievement counts are estimated (their count shaping is an estimate)."""
        table = self.farming_episodes
        return table.loc[table["count_shaping_estimated"], "episode"].tolist()

    def __repr__(self) -> str:
        return (
            f"<Diagnosis: {len(self.scores.episodes)} episodes by {self.by}, {len(self.flags)} flag(s), "
            f"{len(self.misranked)} misranked pair(s), {len(self.dead_entries)} dead entr(ies)>"
        )


def diagnose(
    corpus: Corpus,
    config: RewardConfig,
    *,
    by: str = "policy",
    reps: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    dominance_threshold: float = DOMINANCE_THRESHOLD,
    component_threshold: float = COMPONENT_THRESHOLD,
    agreement_threshold: float = 0.5,
    progress: Sequence[str] = tuple(PROGRESS_MEASURES),
    scores: Scores | None = None,
) -> Diagnosis:
    """Diagnose ``config`` on ``corpus``: farming, dominance, dead entries, alignment with
    error bars and weight sensitivity (see the module docstring), with flags saying why.
    Scoring reuses the corpus's prepared arrays, so a second call after a weight change only
    recombines them.

    Args:
        corpus: The episodes.
        config: The reward config diagnosed.
        by: The ``corpus.index`` column episodes are grouped by (dominance per group, bootstrap strata).
        reps: The stratified bootstrap's resamples.
        seed: The bootstrap's seed (None: fresh randomness).
        confidence: The intervals' level.
        dominance_threshold: A group whose resource shaping passes this share of its reward is flagged.
        component_threshold: A group where one component passes this share is flagged.
        agreement_threshold: Kendall's tau (return vs achievements) below this is flagged.
        progress: The progress measures the alignment table ranks against (``PROGRESS_MEASURES``:
            "achievements", "crafter_score"; each costs one bootstrap per statistic).
        scores: ``score(corpus, config)`` when already computed, else None.

    Returns:
        The ``Diagnosis``: its flags and every table behind them.

    Raises:
        DiagnosisError: An empty corpus, an unknown ``by`` column, ``reps`` outside 1..MAX_REPS, an unknown
            progress measure, a threshold or confidence outside (0, 1), or ``scores`` of another
            corpus or config.
    """
    settings = {
        "by": by,
        "reps": reps,
        "seed": seed,
        "confidence": confidence,
        "dominance_threshold": dominance_threshold,
        "component_threshold": component_threshold,
        "agreement_threshold": agreement_threshold,
        "progress": tuple(progress),
    }
    _check_settings(corpus, settings)
    return _diagnosis(corpus, config, _checked_scores(corpus, config, scores), settings)


def _diagnosis(corpus: Corpus, config: RewardConfig, scores: Scores, settings: dict[str, Any]) -> Diagnosis:
    """``diagnose``'s work once its ``settings`` (its arguments by name) are checked."""
    by, reps, seed, confidence = settings["by"], settings["reps"], settings["seed"], settings["confidence"]
    dominance_threshold, agreement_threshold = settings["dominance_threshold"], settings["agreement_threshold"]
    component_threshold, progress = settings["component_threshold"], settings["progress"]
    facts = episode_facts(scores, corpus, by)
    totals = component_totals(scores)

    events = farming_events(totals, facts)
    per_episode, farming_flags = farming_episodes(totals, facts, events, episode_loop_pay(corpus, config))
    loops = cycles(scores, config, facts)
    by_name, by_kind, dominance_flags = dominance(
        totals, facts, threshold=dominance_threshold, component_threshold=component_threshold
    )
    dead, dead_flags = dead_entries(config, scores)
    table = agreement(scores, facts.group, by=by, reps=reps, seed=seed, confidence=confidence, progress=progress)
    pairs = misranked(scores, pd.Series(facts.group, index=facts.ids), by)
    worst = (pairs["paid_more"].iloc[0], pairs["progressed_more"].iloc[0]) if len(pairs) else None
    weights = sensitivity(scores, config, worst)
    flags = [
        *farming_flags,
        *dominance_flags,
        *alignment_flags(table, pairs, weights, threshold=agreement_threshold),
        *dead_flags,
    ]
    return Diagnosis(
        config=config,
        scores=scores,
        by=by,
        flags=flags_table(flags),
        farming=events,
        farming_episodes=per_episode,
        cycles=loops,
        dominance=by_name,
        dominance_by_kind=by_kind,
        dead_entries=dead,
        alignment=table,
        misranked=pairs,
        sensitivity=weights,
        settings=settings,
    )


def _check_settings(corpus: Corpus, settings: dict[str, Any]) -> None:
    """``DiagnosisError`` for an empty ``corpus`` or ``diagnose``'s ``settings`` (name -> value)
    with an unknown ``by`` column, ``reps < 1``, a confidence or threshold outside (0, 1), or
    an unknown or empty ``progress``."""
    by, reps, progress = settings["by"], settings["reps"], settings["progress"]
    if len(corpus) == 0:
        raise DiagnosisError("cannot diagnose an empty corpus: it has no episodes")
    if by not in corpus.index.columns:
        raise DiagnosisError(f"by: no corpus index column {by!r}; columns are {list(corpus.index.columns)}")
    if not 1 <= reps <= MAX_REPS:
        raise DiagnosisError(f"reps must be from 1 to {MAX_REPS}, not {reps}")
    for name in ("confidence", "dominance_threshold", "component_threshold"):
        value = settings[name]
        if not 0.0 < value < 1.0:
            raise DiagnosisError(f"{name} must be between 0 and 1 (exclusive), not {value}")
    unknown = [name for name in progress if name not in PROGRESS_MEASURES]
    if unknown or not progress:
        raise DiagnosisError(f"progress: {unknown or 'nothing'} given; choose from {list(PROGRESS_MEASURES)}")


def _checked_scores(corpus: Corpus, config: RewardConfig, scores: Scores | None) -> Scores:
    """``scores``, or ``score(corpus, config)`` when None; ``DiagnosisError`` when ``scores``
    are of another corpus or config."""
    if scores is None:
        return score(corpus, config)
    if scores.config != config or list(scores.prepared.ids) != corpus.ids:
        raise DiagnosisError("scores: pass score(corpus, config) of this corpus and config, or leave it out")
    return scores
