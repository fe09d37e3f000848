"""How long ``certify`` and ``reward_distance`` take on the sample repeated to ~1M decisions.

    .venv/bin/python benchmarks/bench_certificate.py
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_certificate.py   # no BLAS threads

The corpus is the sample's episodes repeated under new ids (``Corpus.concat``), prepared and
its state columns built once before timing (as a dashboard holds them). Timed, as medians of
``--repeats``: ``certify`` (potential fit per component in batches, positive cycles, the
counterpart), ``score`` alone as the reference every certificate includes, the fit's moments
from sufficient statistics (``transition_moments``: one row per distinct transition) against
the plain sums over every decision's design row (``moments`` in batches of 65,536, what
``certify`` did before), and each reward distance (at most 5,000 transitions). On a 2-core
machine shared with other work, OpenBLAS's threads can make large matrix products many times
slower than one thread: the script prints the load and whether ``OPENBLAS_NUM_THREADS`` is set.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from workbench.analysis.distances import reward_distance
from workbench.analysis.shaping import certify
from workbench.analysis.shaping.certificate import component_events, transition_moments
from workbench.analysis.shaping.fit import moments, shaping_design
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.scoring import prepare, score
from workbench.scoring.potential import FEATURE_NAMES, decision_rows, terminal_decisions

CONFIGS = os.path.join(os.path.dirname(__file__), "..", "configs")
SHAPED = RewardConfig.from_file(os.path.join(CONFIGS, "upstream_shaped.yaml"))
RECOMMENDED = RewardConfig.from_file(os.path.join(CONFIGS, "recommended.yaml"))


def median_ms(work, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def plain_moments(corpus: Corpus, gamma: float, batch: int = 1 << 16) -> None:
    """The moments over every decision's own design row, in batches (the plain sums)."""
    arrays = corpus.decision_arrays()
    decision, column, value, _ = component_events(prepare(corpus), SHAPED)
    used = np.unique(column)
    before, after = decision_rows(arrays)
    terminal = terminal_decisions(arrays)
    n = len(after)
    features = len(FEATURE_NAMES)
    for lo in range(0, n, batch):
        hi = min(lo + batch, n)
        x = [np.hstack([arrays.inventory[r], arrays.achievement_counts[r] > 0]) for r in (before[lo:hi], after[lo:hi])]
        design = shaping_design(x[0], x[1], gamma, terminal[lo:hi])
        rewards = np.zeros((hi - lo, len(used)))
        inside = (decision >= lo) & (decision < hi)
        np.add.at(rewards, (decision[inside] - lo, np.searchsorted(used, column[inside])), value[inside])
        moments(design.reshape(-1, features), rewards)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    sample = sample_corpus()
    corpus = Corpus.concat([sample] * -(-args.decisions // sample.n_decisions))
    prepare(corpus)
    corpus.decision_arrays()
    print(f"corpus: {len(corpus):,} episodes, {corpus.n_decisions:,} decisions")
    reference = median_ms(lambda: score(corpus, SHAPED).reward, args.repeats)
    print(f"  score + per-decision rewards (reference)  {reference:9.1f} ms      1.0x")
    events = component_events(prepare(corpus), SHAPED)
    for gamma in (1.0, 0.99):
        plain = median_ms(lambda g=gamma: plain_moments(corpus, g), args.repeats)
        fast = median_ms(lambda g=gamma: transition_moments(corpus.decision_arrays(), events, g), args.repeats)
        print(f"  fit moments, every decision (plain) g={gamma:<4} {plain:9.1f} ms {plain / reference:6.1f}x")
        print(
            f"  fit moments, sufficient stats    g={gamma:<4} {fast:9.1f} ms {fast / reference:6.1f}x"
            f"   ({plain / fast:.1f}x faster)"
        )
    ms = median_ms(lambda: certify(corpus, SHAPED), args.repeats)
    print(f"  certify (gamma 1)                         {ms:9.1f} ms {ms / reference:6.1f}x")
    ms = median_ms(lambda: certify(corpus, SHAPED, gamma=0.99), args.repeats)
    print(f"  certify (gamma 0.99)                      {ms:9.1f} ms {ms / reference:6.1f}x")
    for kind in ("epic", "starc", "srrd"):
        ms = median_ms(lambda k=kind: reward_distance(corpus, SHAPED, RECOMMENDED, k), args.repeats)
        print(f"  {kind} distance (5,000 transitions)        {ms:9.1f} ms {ms / reference:6.1f}x")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
