"""Measure what a labelled benchmark's loops pay against honest play, per policy and config.

    python scripts/blind_pay.py CORPUS [--config configs/upstream_shaped.yaml ...]

For each config (default: upstream_shaped and recommended) and each policy of the benchmark
folder CORPUS, prints the progress-free pay per 100 decisions: the shaped reward summed over the
decisions that unlock nothing new to the episode, divided by how many there are, times 100.
For an exploit policy only the decisions inside its ``loop_spans`` count (its loop's pay); for an
honest one every decision does. Then the pooled honest rate, and each exploit family's ratio to
it, as a markdown table. Reads the labels written by ``workbench benchmark make``; the families
of ``workbench.data.policies.blind`` were measured with it (docs/benchmark.md).
"""

from __future__ import annotations

import argparse

import numpy as np

from workbench.core.named_configs import load_config
from workbench.data.benchmarks import EXPLOIT, load_benchmark
from workbench.scoring import score

DEFAULT_CONFIGS = ("configs/upstream_shaped.yaml", "configs/recommended.yaml")


def progress_free_rates(corpus: str, config: str) -> tuple[dict[str, tuple[str, float, int]], float]:
    """Per policy: its label, progress-free pay per 100 decisions and decisions counted; and the pooled honest rate.

    Args:
        corpus: A benchmark folder.
        config: A config file or name.

    Returns:
        ``({policy: (label, rate, decisions)}, honest_rate)``.
    """
    bench = load_benchmark(corpus, rollouts=False)
    decisions = score(bench.corpus, load_config(config)).decisions
    reward = decisions["reward"].to_numpy()
    free = decisions["unique_new"].to_numpy() == 0
    episode = decisions["episode"].astype(str).to_numpy()
    number = decisions["decision"].to_numpy()
    pay: dict[str, list[float]] = {}
    labels: dict[str, str] = {}
    for row in bench.labels.itertuples():
        rows = episode == row.episode
        counted = rows & free
        if row.label == EXPLOIT:
            inside = np.zeros(len(reward), dtype=bool)
            for start, stop in row.spans:
                inside |= rows & (number >= start + 1) & (number < stop + 1)  # decisions count from 1
            counted &= inside
        totals = pay.setdefault(row.policy, [0.0, 0])
        totals[0] += float(reward[counted].sum())
        totals[1] += int(counted.sum())
        labels[row.policy] = row.label
    rates = {p: (labels[p], 100 * s / max(n, 1), int(n)) for p, (s, n) in pay.items()}
    honest = [pay[p] for p in pay if labels[p] != EXPLOIT]
    honest_rate = 100 * sum(s for s, _ in honest) / max(sum(n for _, n in honest), 1)
    return rates, honest_rate


def main() -> None:
    """Print the table for each config."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus")
    parser.add_argument("--config", action="append", help="config file or name (repeatable)")
    args = parser.parse_args()
    for config in args.config or DEFAULT_CONFIGS:
        rates, honest = progress_free_rates(args.corpus, config)
        print(f"\n{config}: pooled honest progress-free pay {honest:.2f} per 100 decisions\n")
        print("| policy | label | pay / 100 decisions | decisions | x honest |")
        print("|---|---|---:|---:|---:|")
        for policy, (label, rate, n) in sorted(rates.items(), key=lambda kv: (kv[1][0], -kv[1][1])):
            print(f"| {policy} | {label} | {rate:.2f} | {n} | {rate / honest if honest else float('nan'):.2f} |")


if __name__ == "__main__":
    main()
