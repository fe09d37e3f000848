"""Measure the builtin policies on seeded Crafter episodes at the default length.

    python benchmarks/measure_policies.py                      # random and scripted, 20 each
    python benchmarks/measure_policies.py --policies farmer --episodes 4 --workers 2

Per policy it prints the mean number of distinct achievements per episode, the mean episode
length, every achievement's success rate (% of episodes unlocking it at least once) and the
Crafter score, exp(mean_i ln(1 + s_i)) - 1 over the 22 success rates s_i in percent, then the
same as a markdown table. ``--counts`` adds mean per-episode counts of chosen achievements.
Seeds are 0..N-1; Crafter is not reproducible from seed and actions, so reruns vary a little.
"""

from __future__ import annotations

import argparse
import math
import time
from multiprocessing import Pool

import crafter
import numpy as np

from workbench.policies import policy_input_from, resolve_policy

ACHIEVEMENTS: tuple[str, ...] = tuple(crafter.constants.achievements)


def run_episode(job: tuple[str, int, int, int]) -> dict:
    """Play one episode of ``policy`` on ``seed``; its final achievement counts and length."""
    policy_spec, seed, length, max_actions = job
    env = crafter.Env(length=length, seed=seed)
    policy = resolve_policy(policy_spec)(np.random.default_rng(seed))
    obs, info, step, done = env.reset(), None, 0, False
    while not done:
        decision = policy(policy_input_from(env, obs, info, step, max_actions))
        for action in decision:
            obs, _, done, info = env.step(env.action_names.index(action))
            step += 1
            if done:
                break
    return {"policy": policy_spec, "seed": seed, "length": step,
            "counts": dict(env._player.achievements)}


def crafter_score(success_percent: list[float]) -> float:
    """Crafter's score in percent: the geometric mean of (1 + success rate in %), minus 1."""
    return math.exp(np.mean([math.log(1 + s) for s in success_percent])) - 1


def summarize(episodes: list[dict]) -> dict:
    unlocked = np.array([[ep["counts"][a] > 0 for a in ACHIEVEMENTS] for ep in episodes])
    success = (100 * unlocked.mean(axis=0)).tolist()
    return {
        "episodes": len(episodes),
        "distinct": float(unlocked.sum(axis=1).mean()),
        "length": float(np.mean([ep["length"] for ep in episodes])),
        "success": dict(zip(ACHIEVEMENTS, success)),
        "score": crafter_score(success),
    }


def print_report(results: dict[str, dict], counts: dict[str, dict[str, float]]) -> None:
    names = list(results)
    for name, r in results.items():
        print(f"\n== {name}: {r['episodes']} episodes ==")
        print(f"mean distinct achievements per episode: {r['distinct']:.2f}")
        print(f"mean length: {r['length']:.0f} steps")
        print(f"Crafter score: {r['score']:.2f}%")
        for achievement, rate in r["success"].items():
            print(f"  {achievement:<18} {rate:5.0f}%")
        for achievement, mean in counts.get(name, {}).items():
            print(f"  mean count {achievement:<18} {mean:8.1f}")
    print("\n| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    print("| mean distinct achievements | "
          + " | ".join(f"{results[n]['distinct']:.2f}" for n in names) + " |")
    print("| mean length (steps) | " + " | ".join(f"{results[n]['length']:.0f}" for n in names)
          + " |")
    print("| Crafter score | " + " | ".join(f"{results[n]['score']:.2f}%" for n in names) + " |")
    for achievement in ACHIEVEMENTS:
        print(f"| {achievement} | "
              + " | ".join(f"{results[n]['success'][achievement]:.0f}%" for n in names) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["random", "scripted"])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--length", type=int, default=10000, help="Crafter's episode length")
    parser.add_argument("--max-actions", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--counts", nargs="*", default=[], metavar="ACHIEVEMENT",
                        help="also print these achievements' mean count per episode")
    args = parser.parse_args()

    jobs = [(p, seed, args.length, args.max_actions)
            for p in args.policies for seed in range(args.episodes)]
    start = time.perf_counter()
    with Pool(args.workers) as pool:
        episodes = pool.map(run_episode, jobs, chunksize=1)
    print(f"{len(jobs)} episodes in {time.perf_counter() - start:.0f} s "
          f"(length {args.length}, max_actions {args.max_actions}, {args.workers} workers)")
    results = {p: summarize([e for e in episodes if e["policy"] == p]) for p in args.policies}
    counts = {p: {a: float(np.mean([e["counts"][a] for e in episodes if e["policy"] == p]))
                  for a in args.counts} for p in args.policies}
    print_report(results, counts)


if __name__ == "__main__":
    main()
