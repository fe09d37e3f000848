"""Measure what a labelled benchmark's loops pay against honest play, per policy and config.

    python scripts/blind_pay.py CORPUS [--config configs/upstream_shaped.yaml ...] [--episodes]

For each config (default: upstream_shaped and recommended) and each policy of the benchmark
folder CORPUS, prints the progress-free pay per 100 decisions: the shaped reward summed over the
decisions that unlock nothing new to the episode, divided by how many there are, times 100.
For an exploit policy only the decisions inside its ``loop_spans`` count (its loop's pay); for an
honest one every decision does. Then the pooled honest rate, and each exploit family's ratio to
it, as a markdown table. With ``--episodes``, also a row per exploit episode (its spans, loop
decisions, pay inside them), so an episode whose loop never ran or never paid shows. Reads the
labels written by ``workbench benchmark make``; the families of ``workbench.data.policies.blind``
and ``blind2`` were measured with it (docs/recording.md).
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import numpy as np

from workbench.core.named_configs import load_config
from workbench.data.benchmarks import EXPLOIT, load_benchmark
from workbench.scoring import score

DEFAULT_CONFIGS = ("configs/upstream_shaped.yaml", "configs/recommended.yaml")


class EpisodePay(NamedTuple):
    """One episode's counted pay: its policy, label, spans, shaped pay and decisions counted."""

    episode: str
    policy: str
    label: str
    spans: int
    pay: float
    counted: int


def episode_pay(corpus: str, config: str) -> list[EpisodePay]:
    """Per episode: the shaped pay over its progress-free decisions (inside the loop spans for an exploit).

    Args:
        corpus: A benchmark folder.
        config: A config file or name.

    Returns:
        One ``EpisodePay`` per labelled episode, in the labels' order.
    """
    bench = load_benchmark(corpus, rollouts=False)
    decisions = score(bench.corpus, load_config(config)).decisions
    reward = decisions["reward"].to_numpy()
    free = decisions["unique_new"].to_numpy() == 0
    episode = decisions["episode"].astype(str).to_numpy()
    number = decisions["decision"].to_numpy()
    rows: list[EpisodePay] = []
    for row in bench.labels.itertuples():
        counted = (episode == str(row.episode)) & free
        if row.label == EXPLOIT:
            inside = np.zeros(len(reward), dtype=bool)
            for start, stop in row.spans:
                # Spans are 0-based policy calls [start, stop); the decisions table counts from 1.
                inside |= (number >= start + 1) & (number < stop + 1)
            counted &= inside
        rows.append(
            EpisodePay(
                str(row.episode),
                row.policy,
                row.label,
                len(row.spans),
                float(reward[counted].sum()),
                int(counted.sum()),
            )
        )
    return rows


def progress_free_rates(rows: list[EpisodePay]) -> tuple[dict[str, tuple[str, float, int]], float]:
    """Per policy: its label, progress-free pay per 100 decisions and decisions counted; and the pooled honest rate.

    Args:
        rows: ``episode_pay``'s rows.

    Returns:
        ``({policy: (label, rate, decisions)}, honest_rate)``.
    """
    pay: dict[str, list[float]] = {}
    labels: dict[str, str] = {}
    for r in rows:
        totals = pay.setdefault(r.policy, [0.0, 0])
        totals[0] += r.pay
        totals[1] += r.counted
        labels[r.policy] = r.label
    rates = {p: (labels[p], 100 * s / max(n, 1), int(n)) for p, (s, n) in pay.items()}
    honest = [pay[p] for p in pay if labels[p] != EXPLOIT]
    honest_rate = 100 * sum(s for s, _ in honest) / max(sum(n for _, n in honest), 1)
    return rates, honest_rate


def main() -> None:
    """Print the table for each config."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus")
    parser.add_argument("--config", action="append", help="config file or name (repeatable)")
    parser.add_argument("--episodes", action="store_true", help="also a row per exploit episode")
    args = parser.parse_args()
    for config in args.config or DEFAULT_CONFIGS:
        rows = episode_pay(args.corpus, config)
        rates, honest = progress_free_rates(rows)
        print(f"\n{config}: pooled honest progress-free pay {honest:.2f} per 100 decisions\n")
        print("| policy | label | pay / 100 decisions | decisions | x honest |")
        print("|---|---|---:|---:|---:|")
        for policy, (label, rate, n) in sorted(rates.items(), key=lambda kv: (kv[1][0], -kv[1][1])):
            print(f"| {policy} | {label} | {rate:.2f} | {n} | {rate / honest if honest else float('nan'):.2f} |")
        if args.episodes:
            print("\n| episode | policy | spans | loop decisions counted | pay | pay / 100 |")
            print("|---|---|---:|---:|---:|---:|")
            for r in sorted(
                (r for r in rows if r.label == EXPLOIT), key=lambda r: (r.policy, r.pay / max(r.counted, 1))
            ):
                print(
                    f"| {r.episode} | {r.policy} | {r.spans} | {r.counted} | {r.pay:.2f} | {100 * r.pay / max(r.counted, 1):.2f} |"
                )


if __name__ == "__main__":
    main()
