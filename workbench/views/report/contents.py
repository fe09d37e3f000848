"""What a report holds: every analysis of a corpus and its configs, computed once (``gather``).

The sections (``workbench.views.report.sections`` and ``findings``) only format what is gathered here; nothing here
draws or writes HTML. Each part is the workbench's own analysis, called as the CLI calls it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from workbench import __version__
from workbench.analysis.audit import Audit, AuditThresholds, audit
from workbench.analysis.distances import DISTANCES, Distance, reward_distance
from workbench.analysis.exploitability import Exploitability, default_check, honest_episodes
from workbench.analysis.learner import LearnerView, learner_view
from workbench.analysis.overoptimisation import OveroptimisationWatch, overoptimisation_watch
from workbench.analysis.rankstats import bootstrap_interval
from workbench.analysis.shaping import Certificate, certify
from workbench.core.config import RewardConfig
from workbench.core.lint import Finding, lint
from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.scoring import Comparison, Scores, compare, prepare, score
from workbench.scoring.intervals import UpperReturns
from workbench.scoring.prepare import PreparedCorpus

#: Bootstrap resamples of each group's mean return (the CLI's ``diagnose`` default).
REPS = 1000
#: The intervals' level.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ConfigPart:
    """One config's share of the report.

    Attributes:
        name: The config's name (as the command line or the dashboard gave it).
        config: The config.
        scores: Its scores on the corpus.
        findings: Its lint findings.
        intervals: Corpus position -> (low, high) return of each episode whose counts are estimated.
        certificate: Its shaping certificate, or the reason there is none.
        learner: The advantages a GRPO learner sees, or the reason there are none.
        exploitability: What the shipped probe loops earn under it without progress against honest
            play (``analysis.exploitability``), or the reason it cannot be computed.
    """

    name: str
    config: RewardConfig
    scores: Scores
    findings: list[Finding]
    intervals: dict[int, tuple[float, float]]
    certificate: Certificate | str
    learner: LearnerView | str
    exploitability: Exploitability | str


@dataclass(frozen=True)
class Provenance:
    """How the report was made.

    Attributes:
        version: The workbench's version.
        command: The command line (or the dashboard page) that made it.
        created: When, UTC, ISO 8601.
        digest: SHA-256 of the corpus's episodes (``corpus_digest``).
    """

    version: str
    command: str
    created: str
    digest: str


@dataclass(frozen=True)
class ReportData:
    """Everything a report shows (``gather``).

    Attributes:
        corpus: The episodes.
        corpus_name: How the report names the corpus.
        by: The index column episodes are grouped by.
        parts: One ``ConfigPart`` per config, in the order given.
        returns: Per config and group ``episodes``, ``mean``, ``low``, ``high`` (bootstrap).
        ranks: Per episode (index) its rank under each config (columns, 1 = highest).
        comparisons: The first config against each other one, by the other's name.
        distances: Per pair of configs and kind, the distance (or why there is none).
        audit: The audit of every config.
        live: Whether the corpus is a live run (the watch is shown).
        watch: The over-optimisation watch, the reason there is none, or None when not live.
        provenance: How it was made.
    """

    corpus: Corpus
    corpus_name: str
    by: str
    parts: list[ConfigPart]
    returns: pd.DataFrame
    ranks: pd.DataFrame
    comparisons: dict[str, Comparison]
    distances: list[tuple[str, str, str, Distance | str]]
    audit: Audit
    live: bool
    watch: OveroptimisationWatch | str | None
    provenance: Provenance = field(repr=False, default=Provenance("", "", "", ""))


def corpus_digest(corpus: Corpus) -> str:
    """SHA-256 of a corpus's episodes: ids, policies, seeds and every decision's state, reward
    and actions (widened to fixed types, so a folder and the same episodes in memory agree).

    Args:
        corpus: The corpus.

    Returns:
        The hex digest ("" for an empty corpus).
    """
    if not len(corpus):
        return ""
    digest = hashlib.sha256()
    index = corpus.index[[c for c in ("episode", "policy", "seed", "source") if c in corpus.index.columns]]
    digest.update(index.to_csv(index=False).encode())
    arrays = corpus.decision_arrays()
    for name, dtype in (
        ("lengths", np.int64),
        ("env_return", np.float64),
        ("inventory", np.int64),
        ("achievement_counts", np.int64),
        ("player_pos", np.int64),
        ("env_reward", np.float64),
        ("done", np.bool_),
        ("action_ids", np.int64),
        ("action_offsets", np.int64),
    ):
        digest.update(np.ascontiguousarray(getattr(arrays, name), dtype=dtype).tobytes())
    return digest.hexdigest()


def _attempt(make: Any) -> Any:
    """``make()``, or the one-line reason it cannot be made on this corpus (a ``WorkbenchError``)."""
    try:
        return make()
    except WorkbenchError as error:
        return str(error)


def _group_returns(corpus: Corpus, parts: list[ConfigPart], by: str, seed: int) -> pd.DataFrame:
    groups = corpus.groups(by)
    rows = []
    for part in parts:
        episodes = part.scores.episodes
        labels = episodes["episode"].map(groups)
        for group in dict.fromkeys(labels):
            values = episodes.loc[labels == group, "reward_sum"].to_numpy(dtype=float)
            mean, low, high = bootstrap_interval(
                lambda v: v.mean(axis=1), [values], reps=REPS, seed=seed, confidence=CONFIDENCE
            )
            rows.append(
                {"config": part.name, "group": group, "episodes": len(values), "mean": mean, "low": low, "high": high}
            )
    return pd.DataFrame(rows, columns=["config", "group", "episodes", "mean", "low", "high"])


def honest_play(corpus: Corpus) -> tuple[Corpus | None, str]:
    """Honest play for the exploitability section, as the Tuner's section takes it, and its words.

    Args:
        corpus: The report's corpus.

    Returns:
        Its scripted and random episodes (None when it has none: the sample's stand in) and
        where they come from, in words.
    """
    honest = honest_episodes(corpus)
    if honest is None:
        return None, "the shipped sample corpus' scripted and random episodes (this corpus has none)"
    return honest, "this corpus' scripted and random episodes"


def _config_parts(
    corpus: Corpus, prepared: PreparedCorpus, configs: Mapping[str, RewardConfig], by: str
) -> list[ConfigPart]:
    """Each config's scores, lint findings, return intervals, certificate, learner's view and exploitability."""
    upper = UpperReturns(corpus)
    # the probe and honest corpora prepared once, every config scored on them (~20 ms each)
    check = _attempt(lambda: default_check(honest_play(corpus)[0]))
    parts = []
    for name, config in configs.items():
        scores = score(prepared, config)
        parts.append(
            ConfigPart(
                name=name,
                config=config,
                scores=scores,
                findings=lint(config),
                intervals=upper.intervals(config, scores.reward_sum),
                certificate=_attempt(lambda c=config: certify(corpus, c, by=by)),
                learner=_attempt(lambda c=config: learner_view(corpus, c)),
                exploitability=check if isinstance(check, str) else _attempt(lambda c=config: check.of(c)),
            )
        )
    return parts


def gather(
    corpus: Corpus,
    configs: Mapping[str, RewardConfig],
    *,
    corpus_name: str,
    command: str,
    by: str = "policy",
    live: bool = False,
    thresholds: AuditThresholds | None = None,
    found: Audit | None = None,
    seed: int = 0,
) -> ReportData:
    """Run every analysis the report shows.

    Args:
        corpus: The episodes (at least one).
        configs: The configs by name (at least one), in the order to show.
        corpus_name: How to name the corpus.
        command: The command line (or page) making the report, for its provenance.
        by: The index column grouping episodes (policy by default).
        live: A live run: the over-optimisation watch is shown.
        thresholds: The audit's thresholds (default: ``workbench audit``'s).
        found: An audit already run on the same corpus and configs (``workbench audit --report``).
        seed: The bootstraps' seed.

    Returns:
        The ``ReportData``.

    Raises:
        WorkbenchError: No configs, an empty corpus or an unknown ``by`` column.
    """
    if not configs:
        raise WorkbenchError("a report needs at least one config")
    if not len(corpus):
        raise WorkbenchError(f"{corpus_name}: the corpus holds no episodes; nothing to report")
    corpus.groups(by)  # raises CorpusError naming the columns for an unknown one
    prepared = prepare(corpus)
    parts = _config_parts(corpus, prepared, configs, by)
    ranks = pd.DataFrame(
        {
            p.name: p.scores.episodes.set_index("episode")["reward_sum"].rank(ascending=False, method="min")
            for p in parts
        }
    )
    reference = parts[0]
    comparisons = {p.name: compare(prepared, reference.config, p.config) for p in parts[1:]}
    distances = [
        (
            reference.name,
            p.name,
            kind,
            _attempt(lambda c=p.config, k=kind: reward_distance(corpus, reference.config, c, k)),
        )
        for p in parts[1:]
        for kind in DISTANCES
    ]
    watch: OveroptimisationWatch | str | None = None
    if live:
        watch = _attempt(lambda: overoptimisation_watch(corpus, dict(configs)))
    if found is None:
        found = audit(corpus, dict(configs), (thresholds or AuditThresholds()).checked(), name=corpus_name)
    return ReportData(
        corpus=corpus,
        corpus_name=corpus_name,
        by=by,
        parts=parts,
        returns=_group_returns(corpus, parts, by, seed),
        ranks=ranks,
        comparisons=comparisons,
        distances=distances,
        audit=found,
        live=live,
        watch=watch,
        provenance=Provenance(
            version=__version__,
            command=command,
            created=datetime.now(UTC).replace(microsecond=0).isoformat(),
            digest=corpus_digest(corpus),
        ),
    )
