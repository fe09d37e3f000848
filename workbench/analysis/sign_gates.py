"""The thresholds the audit's loop signs fire at: measured on the benchmark, and honest play's progress-free rate under the config.

``detector_accuracy.json`` (written by ``benchmarks/bench_detectors_lofo.py``) carries under
``signs`` the threshold of each (kind, scale) of the multi-scale scan (``units``: per kind of
``loop_scan.KINDS`` one threshold per scale of ``scales``) and ``progress-free-pay``'s (one per
scale, in multiples of honest play's rate), set on
the labelled benchmark's honest tune episodes as ``family_holdout`` sets them. The progress-free
sign compares an episode with honest play under the *same* config: ``honest_reference`` scores
the shipped benchmark's honest episodes under the config and takes their pooled progress-free
pay per 100 decisions.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np

from workbench.analysis.detector_accuracy import MEASURED_PATH
from workbench.analysis.diagnostics.loop_scan import KINDS, SCALES
from workbench.analysis.diagnostics.loop_signs import PROGRESS_FREE_CODE, SignThresholds, scale_name
from workbench.analysis.diagnostics.progress_free import progress_free_pay, reference_rate
from workbench.core.config import RewardConfig
from workbench.data.benchmarks import honest_episodes
from workbench.data.episodes import Corpus
from workbench.errors import CorpusError
from workbench.scoring import prepare, score

__all__ = ["UNMEASURED", "honest_reference", "shipped_signs", "signs_document"]

#: The thresholds when nothing was measured: the signs never fire.
UNMEASURED = SignThresholds(np.full((len(KINDS), len(SCALES)), np.inf), np.full(len(SCALES), np.inf))


@cache
def _honest_corpus() -> Corpus:
    """The shipped benchmark's honest episodes (read once per process)."""
    corpus = honest_episodes()  # as load_benchmark labels them, without importing its players (Crafter)
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


def signs_document(units: np.ndarray, progress_free: np.ndarray, margin: float) -> dict[str, object]:
    """The ``signs`` entry of ``detector_accuracy.json`` for these thresholds.

    Args:
        units: (len(KINDS), len(SCALES)) the scan's thresholds.
        progress_free: (len(SCALES),) ``progress-free-pay``'s thresholds.
        margin: The margin over honest play they were set with.

    Returns:
        A json-ready mapping (``shipped_signs`` reads it back).
    """
    return {
        "scales": [scale_name(s) for s in SCALES],
        "units": {kind.name: [float(t) for t in row] for kind, row in zip(KINDS, units, strict=True)},
        PROGRESS_FREE_CODE: [float(t) for t in np.asarray(progress_free, dtype=float)],
        "margin": float(margin),
    }


@cache
def _measured_signs() -> SignThresholds:
    table = json.loads(MEASURED_PATH.read_text()) if MEASURED_PATH.exists() else {}
    signs = table.get("signs", {})
    if [scale_name(s) for s in SCALES] != signs.get("scales"):
        return UNMEASURED  # measured for other scales (or not at all): the signs do not fire
    units = np.array([signs["units"].get(kind.name, [np.inf] * len(SCALES)) for kind in KINDS], dtype=float)
    free = np.asarray(signs.get(PROGRESS_FREE_CODE, np.inf), dtype=float)
    return SignThresholds(units, np.broadcast_to(free, (len(SCALES),)).copy())


def shipped_signs(config: RewardConfig) -> SignThresholds:
    """The thresholds ``audit`` flags the loop signs past under ``config``.

    Args:
        config: The config the audit checks.

    Returns:
        The measured thresholds, with honest play's progress-free rate under ``config``.
    """
    signs = _measured_signs()
    measured = np.isfinite(signs.pay_limits(len(SCALES))).any()
    reference = honest_reference(config) if measured else float("nan")
    return SignThresholds(signs.units, signs.progress_free, reference)
