"""How long ``workbench.analysis.diagnostics.diagnose`` takes, against re-scoring in the same run.

    .venv/bin/python benchmarks/bench_diagnostics.py                  # sample corpus and ~1M decisions
    .venv/bin/python benchmarks/bench_diagnostics.py --decisions 0    # the sample corpus only

Reports medians of ``--repeats`` runs, each after a weight change (the slider path: the corpus is
prepared once, so only the re-score and the diagnosis are timed):

- reference: ``score(corpus, config)`` plus building its components table (what any view of a
  re-scored config needs anyway);
- ``diagnose(corpus, config)`` with the default 1,000 bootstrap resamples, and with
  ``progress=("achievements",)`` (half the bootstraps);
- the large corpus (``--decisions``, built by concatenating renamed copies of the sample's
  episodes, as ``Corpus.concat`` names them): preparing it (once), then the same, plus
  ``reps=200``.

Prints wall and CPU (``time.process_time``) medians, and the machine load (``os.getloadavg``)
before and after: on a shared machine other processes stretch wall times, much less CPU times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from workbench.analysis.diagnostics import diagnose
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.scoring import prepare, score

CONFIG = RewardConfig.from_file(os.path.join(os.path.dirname(__file__), "..", "configs", "upstream_shaped.yaml"))


def median_ms(corpus: Corpus, work: Callable[[Corpus, RewardConfig], object], repeats: int) -> tuple[float, float]:
    """Median wall time and median CPU time of this process (less sensitive to other processes
    on a shared machine) of ``work`` over ``repeats`` weight changes, in milliseconds."""
    wall, cpu = [], []
    for i in range(repeats):
        config = CONFIG.with_changes(weights={**CONFIG.weights, "collect_wood": 0.8 + 0.01 * (i + 1)})
        start, start_cpu = time.perf_counter(), time.process_time()
        work(corpus, config)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu)


def report(name: str, corpus: Corpus, repeats: int, extra: bool) -> None:
    reference, reference_cpu = median_ms(corpus, lambda c, k: score(c, k).components, repeats)
    cases = {
        "diagnose": lambda c, k: diagnose(c, k),
        "diagnose, achievements only": lambda c, k: diagnose(c, k, progress=("achievements",)),
    }
    if extra:
        cases["diagnose, reps=200"] = lambda c, k: diagnose(c, k, reps=200)
    print(f"\n{name}: {len(corpus):,} episodes, {corpus.n_decisions:,} decisions (median of {repeats})")
    print(f"  {'':38} {'wall':>10}    {'ratio':>7} {'cpu':>10}    {'ratio':>7}")
    print(
        f"  {'re-score + components (reference)':38} {reference:10.1f} ms {1:7.1f}x {reference_cpu:10.1f} ms {1:7.1f}x"
    )
    for label, work in cases.items():
        ms, cpu = median_ms(corpus, work, repeats)
        print(f"  {label:38} {ms:10.1f} ms {ms / reference:7.1f}x {cpu:10.1f} ms {cpu / reference_cpu:7.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000, help="size of the large corpus (0: skip it)")
    parser.add_argument("--repeats", type=int, default=15, help="runs per measurement on the sample corpus")
    parser.add_argument("--large-repeats", type=int, default=3, help="runs per measurement on the large corpus")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    sample = sample_corpus()
    prepare(sample)
    diagnose(sample, CONFIG)  # warm-up
    report("sample corpus", sample, args.repeats, extra=False)
    if args.decisions > 0:
        copies = -(-args.decisions // sample.n_decisions)
        large = Corpus.concat([sample] * copies)
        start = time.perf_counter()
        prepare(large)
        print(f"\nlarge corpus prepared once in {time.perf_counter() - start:.2f} s ({copies} copies of the sample)")
        report("large corpus", large, args.large_repeats, extra=True)
    print(f"\nload after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
