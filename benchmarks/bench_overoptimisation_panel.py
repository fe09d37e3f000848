"""What the over-optimisation panel costs on the Live page: one refresh after an episode arrives, against re-running the corpus watch.

    .venv/bin/python benchmarks/bench_overoptimisation_panel.py            # 100, 300, 1,000 episodes
    .venv/bin/python benchmarks/bench_overoptimisation_panel.py --sizes 100 --repeats 3   # quick

A ``LiveScores`` over a synthetic run of ``size`` episodes x ``--decisions`` decisions (1,000)
(``bench_scoring.synthetic_corpus``) under 3 configs (recommended, upstream_shaped, consistent),
an ``OveroptimisationPanel`` on it (``follow=False``, ``reps`` 500, as the Live page builds it);
each repeat appends one new episode and times ``panel.refresh()`` (the table read, the watch on
it, every mark's data replaced), then a second ``refresh()`` with nothing new (what a redraw
round costs when nothing came). The reference, in the same run: ``overoptimisation_watch`` on the
grown corpus (a fresh ``Corpus`` object, so it prepares and scores from nothing), also with 500
resamples: what the panel would pay if it re-ran the corpus watch. Medians of ``--repeats``; the
load average before and after. The last line reads ``refresh_ms=<at the largest size> ratio=<x>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench_scoring import synthetic_corpus

from workbench.analysis.overoptimisation import overoptimisation_watch
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.scoring import LiveScores
from workbench.views.widgets.overoptimisation import OveroptimisationPanel

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("recommended", "upstream_shaped", "consistent")
REPS = 500


def measure(size: int, decisions: int, repeats: int) -> dict[str, float]:
    """Median ms of a refresh with one new episode, of one with none, and of the corpus watch."""
    configs = {name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in CONFIGS}
    corpus = synthetic_corpus(size + repeats, decisions, seed=0)
    live = LiveScores(corpus[:size], configs)
    panel = OveroptimisationPanel(live, reps=REPS, follow=False)
    fresh, idle, reference = [], [], []
    for k in range(repeats):
        live.append(corpus[size + k : size + k + 1])
        started = time.perf_counter()
        panel.refresh()
        middle = time.perf_counter()
        panel.refresh()
        done = time.perf_counter()
        fresh.append(middle - started)
        idle.append(done - middle)
        grown = Corpus.concat([corpus[: size + k + 1]])  # a new object: prepare starts from nothing
        started = time.perf_counter()
        overoptimisation_watch(grown, configs, reps=REPS)
        reference.append(time.perf_counter() - started)
    assert panel.recomputes == repeats + 1  # one per append (and the first), none for the idle rounds
    return {
        "refresh": 1000 * statistics.median(fresh),
        "idle": 1000 * statistics.median(idle),
        "reference": 1000 * statistics.median(reference),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    print(f"3 configs, {REPS} resamples, episodes of {args.decisions} decisions, medians of {args.repeats}")
    print("| episodes | panel refresh, one new episode | refresh, nothing new | corpus watch (reference) | ratio |")
    print("|---|---|---|---|---|")
    last = {}
    for size in args.sizes:
        last = measure(size, args.decisions, args.repeats)
        ratio = last["reference"] / last["refresh"]
        print(
            f"| {size:,} | {last['refresh']:.1f} ms | {last['idle']:.3f} ms | {last['reference']:.1f} ms | {ratio:.1f}x |"
        )
    print(f"load average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"refresh_ms={last['refresh']:.1f} ratio={last['reference'] / last['refresh']:.2f}")


if __name__ == "__main__":
    main()
