"""The thresholds the audit's loop signs fire at: measured on the benchmark, and honest play's progress-free rate under the config.

``detector_accuracy.json`` (written by ``benchmarks/bench_detectors_lofo.py``) carries under
``signs`` each sign's threshold, chosen on the labelled benchmark as ``family_holdout`` chooses
them with no family held out. The progress-free sign compares an episode with honest play
under the *same* config: ``honest_reference`` scores the shipped benchmark's honest episodes
under the config and takes their pooled progress-free pay per 100 decisions.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np

from workbench.analysis.detector_accuracy import MEASURED_PATH
from workbench.analysis.diagnostics.loop_signs import CAP_CODE, PROGRESS_FREE_CODE, REGAINED_CODE, SignThresholds
from workbench.analysis.diagnostics.progress_free import progress_free_pay, reference_rate
from workbench.core.config import RewardConfig
from workbench.data.benchmarks import HONEST, load_benchmark
from workbench.data.episodes import Corpus
from workbench.errors import CorpusError
from workbench.scoring import prepare, score

__all__ = ["UNMEASURED", "honest_reference", "shipped_signs"]

#: The thresholds when nothing was measured: the signs never fire.
UNMEASURED = {CAP_CODE: float("inf"), REGAINED_CODE: float("inf"), PROGRESS_FREE_CODE: float("inf")}


@cache
def _honest_corpus() -> Corpus:
    """The shipped benchmark's honest episodes (read once per process)."""
    bench = load_benchmark(rollouts=False)
    corpus = bench.corpus[(bench.labels["label"] == HONEST).to_numpy()]
    prepare(corpus)  # cached on the corpus: each config's scoring reuses it
    return corpus


def honest_reference(config: RewardConfig) -> float:
    """Honest play's progress-free pay per 100 decisions under ``config``: the shipped
    benchmark's honest episodes, pooled (``progress_free.reference_rate``).

    Args:
        config: The config the audit checks.

    Returns:
        The rate; NaN when no honest episode has a progress-free decision, or the shipped
        benchmark cannot be read (an install without its package data): the progress-free
        sign then does not fire.
    """
    try:
        corpus = _honest_corpus()
    except CorpusError:
        return float("nan")
    scores = score(corpus, config)
    found = progress_free_pay(scores.reward, scores.prepared.n_first, scores.prepared.lengths)
    return reference_rate(found.paid, found.decisions)


@cache
def _measured_signs() -> dict[str, float]:
    table = json.loads(MEASURED_PATH.read_text()) if MEASURED_PATH.exists() else {}
    return {code: float(table.get("signs", {}).get(code, UNMEASURED[code])) for code in UNMEASURED}


def shipped_signs(config: RewardConfig) -> SignThresholds:
    """The thresholds ``audit`` flags the loop signs past under ``config``.

    Args:
        config: The config the audit checks.

    Returns:
        The measured thresholds, with honest play's progress-free rate under ``config``.
    """
    signs = _measured_signs()
    reference = honest_reference(config) if np.isfinite(signs[PROGRESS_FREE_CODE]) else float("nan")
    return SignThresholds(signs[CAP_CODE], signs[REGAINED_CODE], signs[PROGRESS_FREE_CODE], reference)
