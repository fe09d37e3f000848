"""What a report costs: ``workbench report``'s page built in-process, against the audit it includes.

    .venv/bin/python benchmarks/bench_report.py                 # sample and search corpora, 3 repeats
    .venv/bin/python benchmarks/bench_report.py --repeats 1     # quick

For the shipped sample corpus (10 episodes with frames, 3,296 decisions) with two configs
(upstream_shaped, recommended) and the search corpus (72 episodes, 52,000 decisions, no frames)
with three (and ``live``: the over-optimisation watch), each repeat times ``gather`` (every
analysis the page shows), ``render`` (the HTML: figures to SVG, frames to PNG, tables) and, as the
reference of the same run, ``analysis.audit.audit`` alone (what ``workbench audit`` computes).
Medians of ``--repeats``; the page's size; the load average before and after. The last line
reads ``report_s=<sample total> ratio=<x the audit>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from workbench.analysis.audit import audit
from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus, search_corpus
from workbench.views.report import gather, render

REPO = Path(__file__).resolve().parents[1]


def measure(name: str, corpus, configs: dict[str, RewardConfig], live: bool, repeats: int) -> dict[str, float]:
    """Median seconds of gather, render and the audit alone, and the page's MB."""
    times: dict[str, list[float]] = {"gather": [], "render": [], "audit": []}
    size = 0
    for _ in range(repeats):
        started = time.perf_counter()
        audit(corpus, configs, name=name)
        times["audit"].append(time.perf_counter() - started)
        started = time.perf_counter()
        data = gather(corpus, configs, corpus_name=name, command="bench", live=live)
        times["gather"].append(time.perf_counter() - started)
        started = time.perf_counter()
        size = len(render(data).encode())
        times["render"].append(time.perf_counter() - started)
    medians = {key: statistics.median(values) for key, values in times.items()}
    return {**medians, "total": medians["gather"] + medians["render"], "mb": size / 1e6}


def main() -> None:
    """Print one line per corpus and the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    named = {
        n: RewardConfig.from_file(REPO / "configs" / f"{n}.yaml")
        for n in ("upstream_shaped", "recommended", "consistent")
    }
    print(f"load before: {os.getloadavg()[0]:.2f}")
    runs = {
        "sample": measure("sample", sample_corpus(), dict(list(named.items())[:2]), False, args.repeats),
        "search (live)": measure("search", search_corpus(), named, True, args.repeats),
    }
    for name, row in runs.items():
        print(
            f"{name:14} gather {row['gather']:.2f} s  render {row['render']:.2f} s  total {row['total']:.2f} s  "
            f"audit alone {row['audit']:.2f} s  ({row['total'] / row['audit']:.1f}x)  page {row['mb']:.2f} MB"
        )
    print(f"load after: {os.getloadavg()[0]:.2f}")
    sample = runs["sample"]
    print(f"report_s={sample['total']:.2f} ratio={sample['total'] / sample['audit']:.1f}")


if __name__ == "__main__":
    main()
