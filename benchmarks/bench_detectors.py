"""How often each hacking detector is right, measured on the labelled benchmark (``workbench.data.benchmarks``).

    .venv/bin/python benchmarks/bench_detectors.py                        # the shipped benchmark
    .venv/bin/python benchmarks/bench_detectors.py --path corpora/bench   # one `workbench benchmark make` made
    # the docs' table: workbench benchmark make --out corpora/benchmark-s3 --episodes 16 --max-steps 500 --seed 3
    .venv/bin/python benchmarks/bench_detectors.py --path corpora/benchmark-s3
    .venv/bin/python benchmarks/bench_detectors.py --markdown docs/detector-accuracy-table.md

For every shipped config (``configs/*.yaml``) and every detector that judges episodes, each
episode gets the detector's score (its statistic), and a detector flags it past a threshold:

- ``farming-loop`` (farming): laps of a loop the config pays for past that loop's allowance
  (``workbench.analysis.diagnostics.loops.LOOPS``; audit: > 0). Its "shipped" rows use the
  allowances in the code, its "tuned" rows the allowances chosen on this benchmark's tune split
  (per loop family, the most laps an honest tune episode ran), which the script prints;
- ``repeats-outweigh-credits`` (farming): |repeated resource pay| / |achievement credits| (audit: > 1);
- ``resource-shaping-dominates``: resource shaping's share of the episode's |reward| (audit: > 0.5);
- ``component-dominates``: the largest single component's share (audit: > 0.25).

(``audit`` takes the dominance shares per policy; here each episode is its own group, which is
what a run's policy is when followed episode by episode. Dead entries and estimated counts judge a
config, not episodes: nothing to measure against episode labels.) Per detector and config:
precision, recall and false-positive rate on honest episodes at audit's threshold and at the
threshold chosen on the ``tune`` split (the smallest whose FPR on honest tune episodes is <= 2%),
both reported on the ``held_out`` split (other worlds and three policies never
tuned on); 95% stratified-bootstrap intervals (resampling episodes within each policy, as
rliable resamples runs within tasks, Agarwal et al. 2021); and time-to-flag: following each
held-out hacker's episodes in order, how many episodes pass until the first flag (median over
hackers; "never" counts the hackers never flagged).

What ``audit`` carries as each flag's ``measured`` row (``detector_accuracy.json``) is written by
``benchmarks/bench_detectors_lofo.py`` (leave-one-family-out, with the loop signs); this script
measures the per-episode detectors on one held-out split, with thresholds chosen on the tune split.
"""

from __future__ import annotations

import argparse
import glob
import os
import warnings
from dataclasses import dataclass

import numpy as np

from workbench.analysis.detector_accuracy import (
    DETECTORS,
    bootstrap_rates,
    choose_allowances,
    choose_threshold,
    detector_scores,
    laps_table,
    rates,
    time_to_flag,
)
from workbench.analysis.diagnostics.loops import LOOP_CODE, LOOPS, Loop
from workbench.core.config import RewardConfig
from workbench.data.benchmarks import EXPLOIT, HELD_OUT, TUNE, Benchmark, load_benchmark

CONFIGS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "configs", "*.yaml")))
MAX_FPR = 0.02


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    config: str
    detector: str
    which: str
    threshold: float
    point: tuple[float, float, float]
    low: np.ndarray
    high: np.ndarray
    ttf: dict[str, int | None]

    def markdown(self) -> str:
        """The row as a markdown table line."""
        cells = [
            f"{p:.2f} [{lo:.2f}, {hi:.2f}]" if np.isfinite(p) else "-"
            for p, lo, hi in zip(self.point, self.low, self.high)
        ]
        waits = [w for w in self.ttf.values() if w is not None]
        ttf = f"{np.median(waits):.0f}" if waits else "-"
        never = len(self.ttf) - len(waits)
        follow = f"{ttf} ({never}/{len(self.ttf)} never)" if self.ttf else "n/a (configs pooled)"
        return (
            f"| {self.config} | {self.detector} | {self.which} {self.threshold:.2f} | "
            + " | ".join(cells)
            + f" | {follow} |"
        )


def measure(bench: Benchmark, reps: int, seed: int, tuned_loops: tuple[Loop, ...]) -> tuple[list[Row], list[Row]]:
    """Every (config, detector, threshold) row, measured on the held-out split; and per detector
    at audit's threshold, the shipped per_achievement configs pooled (config "pooled")."""
    labels = bench.labels
    exploit = (labels["label"] == EXPLOIT).to_numpy()
    tune = (labels["split"] == TUNE).to_numpy()
    held = (labels["split"] == HELD_OUT).to_numpy()
    strata = labels["policy"].to_numpy()
    held_labels = labels[held].reset_index(drop=True)
    rows = []
    pooled: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {d: [] for d in DETECTORS}
    for path in CONFIGS:
        config = RewardConfig.from_file(path)
        name = os.path.splitext(os.path.basename(path))[0]
        stats = detector_scores(bench.corpus, config)
        loop_tuned = detector_scores(bench.corpus, config, tuned_loops)[LOOP_CODE].to_numpy()
        hackers = (held_labels["label"] == EXPLOIT).to_numpy()
        for detector, default in DETECTORS.items():
            stat = stats[detector].to_numpy()
            tuned = choose_threshold(stat[tune], exploit[tune], MAX_FPR)
            first = "shipped" if detector == LOOP_CODE else "audit"
            for which, t in ((first, default), ("tuned", tuned)):
                if detector == LOOP_CODE and which == "tuned":
                    stat, t = loop_tuned, default  # the tuned allowances, flagged past them
                flagged = stat[held] > t
                boot = bootstrap_rates(flagged, exploit[held], strata[held], reps=reps, seed=seed)
                with warnings.catch_warnings():  # a resample that flags nothing has no precision
                    warnings.simplefilter("ignore", RuntimeWarning)
                    low, high = np.nanpercentile(boot, [2.5, 97.5], axis=0)
                point = rates(flagged, exploit[held])
                runs = time_to_flag(flagged[hackers], held_labels.loc[hackers, "policy"].to_numpy())
                rows.append(Row(name, detector, which, t, point, low, high, runs))
                if which in ("audit", "shipped") and config.effective_strategy == "per_achievement":
                    pooled[detector].append((flagged, exploit[held], name + "/" + strata[held]))
    return rows, [_pooled_row(detector, parts, reps, seed) for detector, parts in pooled.items()]


def _pooled_row(detector: str, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], reps: int, seed: int) -> Row:
    """One detector's audit-threshold row over several configs' held-out episodes together."""
    flagged, exploit, strata = (np.concatenate(column) for column in zip(*parts))
    boot = bootstrap_rates(flagged, exploit, strata, reps=reps, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(boot, [2.5, 97.5], axis=0)
    return Row("pooled", detector, "audit", DETECTORS[detector], rates(flagged, exploit), low, high, {})


def main() -> None:
    """Measure and print the table (and write it with ``--markdown``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=None, help="benchmark folder (default: the shipped one)")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", default=None, help="also write the table to this file")
    args = parser.parse_args()
    bench = load_benchmark(args.path)
    labels = bench.labels
    held = labels[labels["split"] == HELD_OUT]
    head = (
        f"Held-out split: {len(held)} episodes ({(held['label'] == EXPLOIT).sum()} exploiting, "
        f"{(held['label'] != EXPLOIT).sum()} honest) of {held['policy'].nunique()} policies; thresholds "
        f"tuned on {len(labels) - len(held)} other episodes. {args.reps} bootstrap resamples.\n\n"
        "| config | detector | threshold (flag when >) | precision | recall | FPR on honest | "
        "time-to-flag, episodes (median) |\n|---|---|---|---|---|---|---|"
    )
    tune = labels["split"] == TUNE
    tuned_loops = choose_allowances(
        laps_table(bench.corpus[tune.to_numpy()]), (labels[tune]["label"] == EXPLOIT).to_numpy()
    )
    allowances = ", ".join(f"{loop.name} {loop.allowed}" for loop in tuned_loops)
    shipped = ", ".join(f"{loop.name} {loop.allowed}" for loop in LOOPS)
    head = (
        f"Loop allowances chosen on the tune split: {allowances}.\n"
        + ("(The same as shipped in LOOPS.)" if allowances == shipped else f"(Shipped in LOOPS: {shipped}.)")
        + "\n\n"
        + head
    )
    rows, pooled = measure(bench, args.reps, args.seed, tuned_loops)
    table = "\n".join([head, *(row.markdown() for row in [*rows, *pooled])]) + "\n"
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(table)


if __name__ == "__main__":
    main()
