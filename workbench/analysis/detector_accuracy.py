"""How often a hacking detector is right on labelled episodes: per-episode scores, rates, stratified-bootstrap intervals.

The detectors are ``diagnose``'s and ``audit``'s own statistics, taken per episode (each episode
its own group), against labels that come from how each episode's policy was built
(``workbench.data.benchmarks``): ``detector_scores`` gives each episode's statistic,
``rates`` precision, recall and the false-positive rate on honest episodes, ``bootstrap_rates``
their intervals resampling episodes within each policy (rliable's stratified bootstrap, Agarwal
et al. 2021), ``choose_threshold`` the operating point (``choose_allowances`` the loop detector's per-loop
allowances), ``time_to_flag`` how many episodes of a run pass before the first flag, and
``gating`` which flags change ``audit``'s exit status: those whose measured precision reaches
``TARGET``; the others are notes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.components import component_totals, episode_facts
from workbench.analysis.diagnostics.dominance import COMPONENT_THRESHOLD, DOMINANCE_THRESHOLD, dominance
from workbench.analysis.diagnostics.farming import farming_episodes, farming_events
from workbench.analysis.diagnostics.loop_signs import sign_table
from workbench.analysis.diagnostics.loop_table import loop_table
from workbench.analysis.diagnostics.loops import LOOP_CODE, LOOPS, REMAKE, Loop, loop_laps, tracks
from workbench.core.components import RESOURCE_KINDS
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import DiagnosisError
from workbench.scoring import score, slot_pay

__all__ = [
    "DETECTORS",
    "MEASURED_PATH",
    "TARGET",
    "bootstrap_rates",
    "choose_allowances",
    "choose_threshold",
    "detector_scores",
    "gating",
    "laps_table",
    "measured",
    "meets_target",
    "rates",
    "shortfall",
    "time_to_flag",
]

#: What ``benchmarks/bench_detectors_lofo.py --accuracy-json`` measured on the labelled benchmark
#: (each exploit family held out in turn, the honest held-out split) at ``audit``'s thresholds, per
#: shipped config and pooled (see ``measured``), and under ``signs`` the loop signs' thresholds.
MEASURED_PATH = Path(__file__).with_name("detector_accuracy.json")

#: Each per-episode detector (a flag code) and the threshold ``audit`` flags past (statistic > it).
DETECTORS = {
    LOOP_CODE: 0.0,
    "repeats-outweigh-credits": 1.0,
    "resource-shaping-dominates": DOMINANCE_THRESHOLD,
    "component-dominates": COMPONENT_THRESHOLD,
}
#: ``choose_allowances``: a loop is allowed this many times the laps honest tune episodes ran.
ALLOWANCE_MARGIN = 2
#: ... and never fewer than this: twice is not yet a loop.
MIN_ALLOWED = 2


def detector_scores(corpus: Corpus, config: RewardConfig, loops: Sequence[Loop] = LOOPS) -> pd.DataFrame:
    """Per episode (corpus order, index the episode ids) each ``DETECTORS`` statistic under ``config``:

    - ``farming-loop``: laps past the allowance of the loop that passed it most, among the
      ``loops`` the config pays for (0 when none passed: flagged when > 0);
    - ``repeats-outweigh-credits``: |loop pay (``loop_signs``: counts at the cap, materials
      regained)| / |achievement credits| (inf when only loops paid, 0 when neither did);
    - ``resource-shaping-dominates``: resource shaping's share of the episode's |reward|;
    - ``component-dominates``: the largest single component's share.

    The dominance statistics are 0 under ``consistent`` (``audit`` does not check them there).
    Adds the column ``unit`` (each episode's id: its own group) to ``corpus.index`` when missing.

    Args:
        corpus: The episodes (at least one).
        config: The config the statistics are computed under.
        loops: The farming loops to look for, with their allowances.

    Returns:
        (episodes, 4) float statistics, index the episode ids, columns the ``DETECTORS`` codes.

    Raises:
        DiagnosisError: The corpus is empty.
        ConfigError: The config's rewards would not be finite (``score``).
    """
    if len(corpus) == 0:
        raise DiagnosisError("detector_scores: the corpus has no episodes")
    index = corpus.index
    if "unit" not in index.columns:
        index["unit"] = index["episode"]  # each episode its own group
    scores = score(corpus, config)
    facts = episode_facts(scores, corpus, "unit")
    totals = component_totals(scores)
    signs = sign_table(corpus, scores.reward, scores.prepared.n_first, slot_pay(config), facts.returns).episodes
    table, _ = farming_episodes(
        totals, facts, farming_events(totals, facts), (signs["cap_paid"] + signs["regained_paid"]).to_numpy()
    )
    credits = np.abs(table["credits"].to_numpy())
    repeats = np.abs(table["loop_paid"].to_numpy())
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(credits > 0, repeats / credits, np.where(repeats > 0, np.inf, 0.0))
    by_name, by_kind, _ = dominance(totals, facts, threshold=0.5, component_threshold=0.5)
    resource = by_kind[by_kind["kind"].isin(RESOURCE_KINDS)].groupby("unit")["share"].sum()
    largest = by_name.groupby("unit")["share"].max()
    ids = list(facts.ids)
    found = loop_table(corpus, config, facts.returns, loops)
    paid = found[found["paid"] > 0]
    excess = (paid["laps"] - paid["allowed"]).clip(lower=0).groupby(paid["episode"]).max()
    out = pd.DataFrame(
        {
            LOOP_CODE: excess.reindex(ids).fillna(0).to_numpy(dtype=float),
            "repeats-outweigh-credits": ratio,
            "resource-shaping-dominates": resource.reindex(ids).fillna(0.0).to_numpy(),
            "component-dominates": largest.reindex(ids).fillna(0.0).to_numpy(),
        },
        index=pd.Index(ids, name="episode"),
    )
    if config.rule.pays_indicator:  # one component, the indicator: nothing to dominate (as audit)
        out[["resource-shaping-dominates", "component-dominates"]] = 0.0
    return out


def laps_table(corpus: Corpus, loops: Sequence[Loop] = LOOPS) -> pd.DataFrame:
    """Per episode (rows, index the ids) and loop (columns, its name) how many laps it ran.
    Laps read the episode's arrays only, so they are the same under every config.

    Args:
        corpus: The episodes.
        loops: The loops to count.

    Returns:
        (episodes, loops) lap counts, index the episode ids, columns the loops' names.
    """
    values = [[len(loop_laps(track, loop)) for loop in loops] for track in tracks(corpus)]
    return pd.DataFrame(values, index=pd.Index(corpus.ids, name="episode"), columns=[loop.name for loop in loops])


def family(loop: Loop) -> str:
    """Loops that share one allowance: making any tool again ("make again": a tool never wears
    out, so honest play needs each once), placing any station again ("place again": honest
    players place a new table where they are rather than walk back), else each loop on its own."""
    if loop.kind != REMAKE:
        return loop.name
    return "make again" if loop.event.startswith("make_") else "place again"


def choose_allowances(
    laps: pd.DataFrame, exploit: np.ndarray, loops: Sequence[Loop] = LOOPS, margin: int = ALLOWANCE_MARGIN
) -> tuple[Loop, ...]:
    """``loops`` with each ``allowed`` set to ``margin`` times the most laps any honest episode
    of ``laps`` (``laps_table`` rows of the tune split; ``exploit`` their labels) ran of a loop
    of its ``family``, and at least ``MIN_ALLOWED``: the most of a few dozen honest episodes
    understates what the next honest episode may do, and a hacker's loop runs many times more.

    Args:
        laps: ``laps_table`` rows of the tune split.
        exploit: (episodes,) bool, each row's label (True: an exploiting episode).
        loops: The loops to set allowances of.
        margin: How many times the honest maximum a loop may run before it is flagged.

    Returns:
        ``loops`` with their ``allowed`` set.
    """
    honest = laps[~np.asarray(exploit, bool)]
    most: dict[str, int] = {}
    for loop in loops:
        seen = int(honest[loop.name].max()) if len(honest) else 0
        most[family(loop)] = max(most.get(family(loop), 0), seen)
    return tuple(dataclasses.replace(loop, allowed=max(margin * most[family(loop)], MIN_ALLOWED)) for loop in loops)


def rates(flagged: np.ndarray, exploit: np.ndarray) -> tuple[float, float, float]:
    """How well ``flagged`` finds the exploiting episodes.

    Args:
        flagged: (episodes,) bool, whether each episode was flagged.
        exploit: (episodes,) bool, each episode's label (True: exploiting).

    Returns:
        (precision, recall, false-positive rate on honest episodes); NaN where undefined
        (nothing flagged, no exploiting or no honest episode).
    """
    flagged, exploit = np.asarray(flagged, bool), np.asarray(exploit, bool)
    tp, fp = int(np.sum(flagged & exploit)), int(np.sum(flagged & ~exploit))
    positives, negatives = int(exploit.sum()), int((~exploit).sum())
    precision = tp / (tp + fp) if tp + fp else np.nan
    recall = tp / positives if positives else np.nan
    fpr = fp / negatives if negatives else np.nan
    return precision, recall, fpr


def bootstrap_rates(
    flagged: np.ndarray, exploit: np.ndarray, strata: np.ndarray, *, reps: int = 2000, seed: int = 0
) -> np.ndarray:
    """Resampled ``rates``: each resample draws, within every stratum (policy), as many episodes
    as it has, with replacement.

    Args:
        flagged: (episodes,) bool, whether each episode was flagged.
        exploit: (episodes,) bool, each episode's label.
        strata: (episodes,) each episode's stratum (e.g. its policy).
        reps: How many resamples.
        seed: The generator's seed.

    Returns:
        (reps, 3) float64: precision, recall and false-positive rate of each resample (NaN
        where undefined in it).

    Raises:
        DiagnosisError: ``reps`` is below 1.
    """
    if reps < 1:
        raise DiagnosisError(f"reps must be at least 1, not {reps}")
    rng = np.random.default_rng(seed)
    flagged, exploit = np.asarray(flagged, bool), np.asarray(exploit, bool)
    groups = [np.flatnonzero(np.asarray(strata) == s) for s in pd.unique(np.asarray(strata))]
    out = np.empty((reps, 3))
    for r in range(reps):
        pick = np.concatenate([g[rng.integers(len(g), size=len(g))] for g in groups])
        out[r] = rates(flagged[pick], exploit[pick])
    return out


def choose_threshold(stat: np.ndarray, exploit: np.ndarray, max_fpr: float = 0.02) -> float:
    """The smallest threshold (flag when ``stat`` > it) among the statistic's values (and 0)
    whose false-positive rate on these honest episodes is at most ``max_fpr``: the operating
    point with the most recall at that FPR.

    Args:
        stat: (episodes,) float, a detector's statistic per episode.
        exploit: (episodes,) bool, each episode's label.
        max_fpr: The highest false-positive rate allowed.

    Returns:
        The threshold; the largest candidate (0, or the largest finite value of ``stat``) when
        none meets ``max_fpr``.
    """
    stat, exploit = np.asarray(stat, float), np.asarray(exploit, bool)
    candidates = np.unique(np.r_[0.0, stat[np.isfinite(stat)]])
    for t in candidates:
        _, _, fpr = rates(stat > t, exploit)
        if not fpr > max_fpr:
            return float(t)
    return float(candidates[-1])


def time_to_flag(flagged: np.ndarray, runs: np.ndarray) -> dict[str, int | None]:
    """Per run (``runs``: each episode's run, episodes in the order the run played them): how
    many of its episodes pass until the first flag, counting the flagged one (None: never).

    Args:
        flagged: (episodes,) bool, whether each episode was flagged.
        runs: (episodes,) each episode's run name, episodes in play order.

    Returns:
        Run name -> the 1-based position of its first flagged episode, or None.
    """
    flagged, runs = np.asarray(flagged, bool), np.asarray(runs)
    out: dict[str, int | None] = {}
    for run in pd.unique(runs):
        hits = np.flatnonzero(flagged[runs == run])
        out[str(run)] = int(hits[0]) + 1 if len(hits) else None
    return out


@cache
def _measurements() -> dict[str, Any]:
    return dict(json.loads(MEASURED_PATH.read_text())) if MEASURED_PATH.exists() else {}


def measured(code: str, config: str | None = None) -> dict[str, Any] | None:
    """What the benchmark measured for the flag ``code`` at ``audit``'s threshold: ``precision``
    (with its 95% interval ``low``, ``high``), ``recall``, ``fpr`` on honest episodes, the
    ``config`` it was measured under (a shipped config of that name, else ``"pooled"``: all the
    shipped per_achievement configs together), the ``benchmark`` it was measured on and
    ``meets_target``: whether it reaches ``TARGET``.

    Args:
        code: A flag code (e.g. ``farming-loop``).
        config: The name of the config audited (a shipped one has its own row), or None.

    Returns:
        The measured row; None for a flag that judges a config rather than episodes (dead
        entries, estimated counts) or when nothing was measured.
    """
    table = _measurements()
    by_config = table.get("configs", {})
    if config in by_config and code in by_config[config]:
        row, on = by_config[config][code], config
    elif code in table.get("pooled", {}):
        row, on = table["pooled"][code], "pooled"
    else:
        return None
    return {**row, "meets_target": meets_target(code, row), "config": on, "benchmark": table.get("benchmark", "")}


#: The issue's bar for a flag that may stop training: precision and false-positive rate on honest
#: episodes on the held-out split; and recall for the farming detectors together, per held-out family.
TARGET = {"precision": 0.95, "fpr": 0.02, "farming_recall": 0.90}


#: The flags that look for farming. ``TARGET``'s recall binds them together (each finds other
#: loops: docs/detector-accuracy.md reports their union per held-out family), not one by one.
FARMING_CODES = (LOOP_CODE, "count-at-cap", "spent-and-regained", "progress-free-pay", "repeats-outweigh-credits")


def meets_target(code: str, row: dict[str, Any]) -> bool:
    """Whether a measured row reaches ``TARGET``'s precision and false-positive rate: whether a
    flag of ``code`` can be trusted to stop training. (Recall is the farming detectors' together,
    measured per held-out family by ``benchmarks/bench_detectors_lofo.py``: a detector that
    finds one kind of loop well is not less trustworthy for missing the others.)

    Args:
        code: The flag code the row measured.
        row: A measured row: ``precision`` and ``fpr`` (None or absent: unmeasured).

    Returns:
        True when precision and false-positive rate reach ``TARGET``.
    """
    precision, fpr = row.get("precision"), row.get("fpr")
    return not (precision is None or fpr is None or precision < TARGET["precision"] or fpr > TARGET["fpr"])


def shortfall(code: str) -> str:
    """Where the pooled measured row of ``code`` falls short of ``TARGET``, in words ("" when it
    does not, or was not measured).

    Args:
        code: A flag code.

    Returns:
        The shortfall in words, e.g. "precision 0.83 < 0.95".
    """
    row = _measurements().get("pooled", {}).get(code)
    if row is None:
        return ""
    precision, fpr = row.get("precision"), row.get("fpr")
    parts = []
    if precision is None or precision < TARGET["precision"]:
        parts.append("never fired" if precision is None else f"precision {precision:.3f} < {TARGET['precision']:.2f}")
    if fpr is None or fpr > TARGET["fpr"]:
        parts.append(
            f"false-positive rate {fpr:.3f} > {TARGET['fpr']:.2f}" if fpr is not None else "no honest episodes"
        )
    return ", ".join(parts)


def gating(code: str) -> bool:
    """Whether a flag of ``code`` changes ``audit``'s exit status. A detector measured on the
    benchmark does only when its pooled held-out row (the shipped per_achievement configs
    together) meets ``TARGET``; below that bar its flags are notes. A check that judges the
    config itself rather than episodes (dead entries, estimated counts: nothing to measure
    against episode labels) always does.

    Args:
        code: A flag code (e.g. ``farming-loop``).

    Returns:
        True when a flag of ``code`` fails an audit, False when it is a note.
    """
    row = _measurements().get("pooled", {}).get(code)
    return row is None and code not in DETECTORS or (row is not None and meets_target(code, row))
