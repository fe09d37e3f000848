"""How long the audit's loop signs take at ~1M decisions, against scoring and ``farming-loop`` in the same run.

    .venv/bin/python benchmarks/bench_loop_signs.py                 # ~1M decisions, 5 repeats
    .venv/bin/python benchmarks/bench_loop_signs.py --decisions 200000

The corpus is the shipped labelled benchmark (``load_benchmark``) concatenated with itself up to
``--decisions`` and saved to a temporary folder (a columnar store, as ``workbench audit`` reads
one). Each step is timed ``--repeats`` times on the prepared corpus (wall and this
process's CPU, medians): ``loop_table.loop_table`` (``farming-loop``'s lap
counting, the audit's other farming detector: reference), ``loop_pay.loop_pay``,
``loop_scan.loop_units`` with ``loop_scan.scan`` (the multi-scale scan of loop units) and
``loop_signs.sign_table`` (all of the signs: loop pay, the scan, progress-free pay). Prints the ratios to the references and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from workbench.analysis.diagnostics.loop_pay import loop_pay
from workbench.analysis.diagnostics.loop_scan import loop_units, scan
from workbench.analysis.diagnostics.loop_signs import sign_table
from workbench.analysis.diagnostics.loop_table import loop_table
from workbench.analysis.diagnostics.progress_free import progress_free_mask
from workbench.core.config import RewardConfig
from workbench.data.benchmarks import load_benchmark
from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus, save_corpus
from workbench.scoring import prepare, score, slot_pay

CONFIG = RewardConfig.from_file(os.path.join(os.path.dirname(__file__), "..", "configs", "upstream_shaped.yaml"))


def timed(work: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``work`` over ``repeats`` runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    """Build the corpus, time each step, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000, help="corpus size to reach (default 1M)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    base = load_benchmark(rollouts=False).corpus
    copies = max(1, -(-args.decisions // base.n_decisions))
    with tempfile.TemporaryDirectory() as folder:  # a columnar store, as the audit reads a corpus folder
        save_corpus(Corpus.concat([base] * copies), folder)
        corpus = load_corpus(folder)
        prepare(corpus)
        run(corpus, args.repeats)


def run(corpus: Corpus, repeats: int) -> None:
    """Time each step on ``corpus`` and print the table."""
    pays = slot_pay(CONFIG)
    scores = score(corpus, CONFIG)
    load = os.getloadavg()[0]
    lengths = scores.prepared.lengths
    steps = {
        "farming-loop: loop_table (reference)": lambda: loop_table(corpus, CONFIG, scores.reward_sum),
        "loop_pay": lambda: loop_pay(corpus, pays),
        "loop_units + scan (5 scales)": lambda: scan(
            loop_units(corpus), progress_free_mask(scores.prepared.n_first, scores.prepared.lengths), lengths
        ),
        "sign_table (all the signs)": lambda: sign_table(
            corpus, scores.reward, scores.prepared.n_first, pays, scores.reward_sum
        ),
    }
    results = {name: timed(work, repeats) for name, work in steps.items()}
    ref_loops = results["farming-loop: loop_table (reference)"][0]
    print(f"{len(corpus)} episodes, {corpus.n_decisions} decisions (a columnar store); {repeats} repeats; medians")
    print("| step | wall s | CPU s | wall / loop_table |\n|---|---|---|---|")
    for name, (wall, cpu) in results.items():
        print(f"| {name} | {wall:.3f} | {cpu:.3f} | {wall / ref_loops:.2f} |")
    print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
