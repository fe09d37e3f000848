"""Measure the builtin policies on seeded Crafter episodes at the default length.

    python scripts/measure_policies.py                      # random and scripted, 20 each
    python scripts/measure_policies.py --policies farmer --episodes 4 --counts collect_stone place_stone

Records with ``workbench.data.recording.record`` (no frames, into a temporary folder) and reports
per policy the mean number of distinct achievements per episode, the mean episode length,
every achievement's success rate and the Crafter score (``workbench.scoring``), as a markdown
table. ``--counts`` adds mean per-episode counts of chosen achievements. Corpus seed 0; Crafter
is not reproducible from seed and actions, so reruns vary a little.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.recording import record
from workbench.data.storage import load_corpus
from workbench.scoring import crafter_score, success_rates


def measure(policy: str, args: argparse.Namespace, folder: str) -> dict:
    report = record(
        policy,
        args.episodes,
        f"{folder}/{policy}",
        seed=args.seed,
        actions_per_decision=args.max_actions,
        max_steps=args.length,
        workers=args.workers,
        frames=False,
    )
    if report.failed:
        raise SystemExit(f"{policy}: {len(report.failed)} episode(s) failed: {report.failed}")
    corpus = load_corpus(f"{folder}/{policy}")
    final_counts = np.array([episode.achievement_counts[-1] for episode in corpus])
    return {
        "distinct": float(corpus.index["n_unlocked"].mean()),
        "length": float(corpus.index["steps"].mean()),
        "score": crafter_score(corpus),
        "success": success_rates(corpus).set_index("achievement")["success_rate"],
        "counts": {a: float(final_counts[:, ACHIEVEMENTS.index(a)].mean()) for a in args.counts},
    }


def print_table(results: dict[str, dict]) -> None:
    names = list(results)
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    print("| mean distinct achievements | " + " | ".join(f"{results[n]['distinct']:.2f}" for n in names) + " |")
    print("| mean length (steps) | " + " | ".join(f"{results[n]['length']:.0f}" for n in names) + " |")
    print("| Crafter score | " + " | ".join(f"{results[n]['score']:.2f}%" for n in names) + " |")
    for achievement in ACHIEVEMENTS:
        print(f"| {achievement} | " + " | ".join(f"{results[n]['success'][achievement]:.0f}%" for n in names) + " |")
    for achievement in next(iter(results.values()))["counts"]:
        print(
            f"| mean {achievement} count | "
            + " | ".join(f"{results[n]['counts'][achievement]:.1f}" for n in names)
            + " |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["random", "scripted"])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (episode seeds derive from it)")
    parser.add_argument("--length", type=int, default=10000, help="Crafter's episode length")
    parser.add_argument("--max-actions", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--counts",
        nargs="*",
        default=[],
        metavar="ACHIEVEMENT",
        help="also print these achievements' mean count per episode",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        results = {policy: measure(policy, args, folder) for policy in args.policies}
    print(
        f"{args.episodes} episodes per policy in {time.perf_counter() - start:.0f} s "
        f"(length {args.length}, max_actions {args.max_actions}, {args.workers} workers)"
    )
    print_table(results)


if __name__ == "__main__":
    main()
