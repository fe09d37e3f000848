"""How fast ``workbench.analysis.search`` is: trials per minute and the exact fit, on the sample and on ~1M decisions.

    .venv/bin/python benchmarks/bench_search.py                       # sample: 1,000 trials; 1M: 100 trials
    .venv/bin/python benchmarks/bench_search.py --copies 30 --repeats 1   # a quick run

Reports, each a median of ``--repeats`` runs, with the machine's load average (os.getloadavg)
before and after:

- sample corpus (10 episodes, 3,296 decisions): ``search(..., trials=--sample-trials)`` end to
  end (split, Optuna's multivariate TPE, every trial's cross-validated exact fits, the final
  refit, the held-out score and its bootstrap), as trials per minute;
- a large corpus: ``--copies`` renamed copies of the sample's episodes (``Corpus.concat``;
  304 copies = 1,001,984 decisions, 3,040 episodes): preparing it (``scoring.prepare``), building the
  design arrays, one exact fit on its fit episodes (the linear part), and ``search`` with
  ``--large-trials`` trials, as trials per minute;
- distinct episodes: the exact fit on ``--distinct`` x 1,000 synthetic decisions of
  ``bench_scoring.synthetic_corpus`` (every episode different, progress levels many), since
  the copies above repeat 10 episodes and make an easy fit;
- the reference each trial avoids: re-scoring the configuration with ``workbench.scoring.score``
  and ranking with ``alignment.spearman_rho`` (what a trial would cost without the design
  arrays), against ``Design.returns`` plus the same ranking.

The last line reads ``sample_trials_per_min=<a> large_trials_per_min=<b> exact_fit_ms=<c>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from workbench.analysis.rankstats import spearman_rho
from workbench.analysis.search import search
from workbench.analysis.search.linear import fit_weights
from workbench.analysis.search.objective import build_design, resource_slot_weights
from workbench.analysis.search.split import split_episodes
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.scoring import prepare, score
from workbench.util.blas import single_threaded


def _median_ms(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def _trials_per_minute(corpus: Corpus, trials: int, repeats: int, seed: int) -> tuple[float, float]:
    """Median trials per minute of end-to-end searches, and the median seconds of one."""
    seconds = []
    for repeat in range(repeats):
        start = time.perf_counter()
        search(corpus, trials=trials, seed=seed + repeat, penalize="farmer", penalty=0.5, show_progress=False)
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    return trials / median * 60.0, median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample-trials", type=int, default=1000)
    parser.add_argument("--large-trials", type=int, default=100)
    parser.add_argument("--copies", type=int, default=304, help="copies of the sample's episodes in the large corpus")
    parser.add_argument("--distinct", type=int, default=1000, help="synthetic episodes of 1,000 decisions (0: skip)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} ({os.cpu_count()} cores)")

    sample = sample_corpus()
    prepare(sample)
    sample_rate, sample_seconds = _trials_per_minute(sample, args.sample_trials, args.repeats, args.seed)
    print(
        f"sample ({len(sample)} episodes, {sample.n_decisions:,} decisions): {args.sample_trials} trials in "
        f"{sample_seconds:.1f} s = {sample_rate:,.0f} trials/min"
    )

    start = time.perf_counter()
    large = Corpus.concat([sample] * args.copies)
    prepared = prepare(large)
    prepare_s = time.perf_counter() - start
    groups = large.index["policy"].tolist()
    design_ms = _median_ms(lambda: build_design(prepared, groups), args.repeats)
    design = build_design(prepared, groups)
    split = split_episodes(large.ids, groups, seed=args.seed)
    rows = np.flatnonzero(split.mask(large.ids, "fit"))
    slots = resource_slot_weights(RewardConfig().resource_weights)

    def exact_fit() -> None:
        with single_threaded():
            fit_weights(design, rows, slot_weights=slots, temperature=1.0, ridge=1e-3)

    fit_ms = _median_ms(exact_fit, args.repeats)
    config = RewardConfig(strategy="per_achievement", weights={a: 2.0 for a in ACHIEVEMENTS})
    weights = np.full(len(ACHIEVEMENTS), 2.0)
    reference_ms = _median_ms(lambda: spearman_rho(score(prepared, config).reward_sum, design.progress), args.repeats)
    rescore_ms = _median_ms(lambda: spearman_rho(design.returns(weights, slots), design.progress), args.repeats)
    print(
        f"large ({len(large):,} episodes, {large.n_decisions:,} decisions): concat + prepare {prepare_s:.1f} s, "
        f"design arrays {design_ms:.1f} ms, exact fit on {len(rows):,} fit episodes {fit_ms:.1f} ms"
    )
    print(
        f"  one re-score + rank: workbench.score {reference_ms:.2f} ms (reference) vs design arrays "
        f"{rescore_ms:.3f} ms ({reference_ms / rescore_ms:,.0f}x)"
    )
    if args.distinct:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_scoring import synthetic_corpus  # a benchmark's corpus builder, not package code

        distinct = synthetic_corpus(args.distinct, 1000, seed=args.seed)
        distinct_design = build_design(prepare(distinct), ["synthetic"] * len(distinct))
        every = np.arange(len(distinct))
        levels = len(np.unique(distinct_design.progress))

        def distinct_fit() -> None:
            with single_threaded():
                fit_weights(distinct_design, every, slot_weights=slots, temperature=1.0, ridge=1e-3)

        print(
            f"  distinct ({len(distinct):,} synthetic episodes, {distinct.n_decisions:,} decisions, "
            f"{levels} progress levels): exact fit on all {_median_ms(distinct_fit, args.repeats):.1f} ms"
        )
        del distinct, distinct_design
    large_rate, large_seconds = _trials_per_minute(large, args.large_trials, args.repeats, args.seed)
    print(f"  search: {args.large_trials} trials in {large_seconds:.1f} s = {large_rate:,.0f} trials/min")
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"sample_trials_per_min={sample_rate:.0f} large_trials_per_min={large_rate:.0f} exact_fit_ms={fit_ms:.1f}")


if __name__ == "__main__":
    main()
