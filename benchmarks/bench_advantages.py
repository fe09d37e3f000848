"""How long the learner's view takes on ~1M decisions, against plain Python loops in the same run.

    .venv/bin/python benchmarks/bench_advantages.py                    # 1M synthetic decisions
    .venv/bin/python benchmarks/bench_advantages.py --decisions 100000

Synthetic data: episodes of 200 to 800 decisions (rewards: 0 mostly, sometimes a resource gain
or a credit, in three component columns), in groups of 8 rollouts. Timed, as medians of
``--repeats`` runs:

- the vectorised path (``workbench.analysis.learner``): per-episode returns and component
  returns from the per-decision rewards (``bincount``), GRPO, Dr.GRPO, RLOO and GDPO over the
  groups, and GAE (gamma 0.99, lambda 0.95) on every decision;
- the plain-loop reference: the same numbers by Python loops (one pass per decision for the
  sums and GAE, per group for the estimators), run once (it is slow), checked equal to 1e-9;
- ``learner_view`` end to end on the sample corpus repeated to the same size (scoring included).

Prints wall times, the ratio to the reference, and the machine load before and after.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np

from workbench.analysis.learner import dr_grpo, gae, gdpo, grpo, learner_view, rloo
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.scoring import prepare

CONFIG = RewardConfig.from_file(os.path.join(os.path.dirname(__file__), "..", "configs", "upstream_shaped.yaml"))


def synthetic(decisions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, 3) per-decision component rewards, (E,) episode lengths, (E,) group labels."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(200, 801, size=decisions // 200 + 8)
    lengths = lengths[: int(np.searchsorted(np.cumsum(lengths), decisions)) + 1]
    lengths[-1] -= int(lengths.sum()) - decisions
    n = int(lengths.sum())
    parts = np.zeros((n, 3))
    parts[:, 0] = np.where(rng.random(n) < 0.01, 1.0, 0.0)
    parts[:, 1] = np.where(rng.random(n) < 0.05, 0.15, 0.0)
    parts[:, 2] = np.where(rng.random(n) < 0.05, 0.10, 0.0)
    group = np.arange(len(lengths)) // 8
    return parts, lengths, group


def vectorised(parts: np.ndarray, lengths: np.ndarray, group: np.ndarray) -> dict[str, np.ndarray]:
    episode = np.repeat(np.arange(len(lengths)), lengths)
    components = np.stack([np.bincount(episode, weights=parts[:, k], minlength=len(lengths)) for k in range(3)], 1)
    reward = parts.sum(axis=1)
    returns = components.sum(axis=1)
    return {
        "grpo": grpo(returns, group),
        "dr_grpo": dr_grpo(returns, group),
        "rloo": rloo(returns, group),
        "gdpo": gdpo(components, group)[0],
        "gae": gae(reward, lengths, gamma=0.99, lam=0.95)[0],
    }


def loops(parts: np.ndarray, lengths: np.ndarray, group: np.ndarray) -> dict[str, np.ndarray]:
    rows = parts.tolist()
    components, start = [], 0
    for length in lengths.tolist():
        sums = [0.0, 0.0, 0.0]
        for t in range(start, start + length):
            for k in range(3):
                sums[k] += rows[t][k]
        components.append(sums)
        start += length
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group.tolist()):
        members.setdefault(g, []).append(i)

    def normalised(values: list[float], eps: float = 1e-6) -> list[float]:
        out = [0.0] * len(values)
        for ms in members.values():
            mean = sum(values[i] for i in ms) / len(ms)
            std = math.sqrt(sum((values[i] - mean) ** 2 for i in ms) / (len(ms) - 1))
            for i in ms:
                out[i] = (values[i] - mean) / (std + eps)
        return out

    returns = [sum(c) for c in components]
    out: dict[str, list[float]] = {"grpo": normalised(returns), "dr_grpo": [0.0] * len(returns)}
    out["rloo"] = [0.0] * len(returns)
    for ms in members.values():
        total = sum(returns[i] for i in ms)
        for i in ms:
            out["dr_grpo"][i] = returns[i] - total / len(ms)
            out["rloo"][i] = returns[i] - (total - returns[i]) / (len(ms) - 1)
    per_component = [normalised([c[k] for c in components]) for k in range(3)]
    summed = [sum(p[i] for p in per_component) for i in range(len(returns))]
    mean = sum(summed) / len(summed)
    std = math.sqrt(sum((s - mean) ** 2 for s in summed) / (len(summed) - 1))
    out["gdpo"] = [(s - mean) / (std + 1e-6) for s in summed]
    credit, start = [], 0
    for length in lengths.tolist():
        running, block = 0.0, [0.0] * length
        for t in reversed(range(length)):
            running = sum(rows[start + t]) + 0.99 * 0.95 * running
            block[t] = running
        credit += block
        start += length
    out["gae"] = credit
    return {k: np.array(v) for k, v in out.items()}


def median_s(work, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    parts, lengths, group = synthetic(args.decisions)
    print(f"synthetic: {len(parts):,} decisions, {len(lengths):,} episodes, {int(group.max()) + 1:,} groups of 8")
    fast = median_s(lambda: vectorised(parts, lengths, group), args.repeats)
    start = time.perf_counter()
    reference = loops(parts, lengths, group)
    slow = time.perf_counter() - start
    got = vectorised(parts, lengths, group)
    for key, values in reference.items():
        np.testing.assert_allclose(got[key], values, atol=1e-9, err_msg=key)
    print(f"  plain loops (reference, once)     {slow * 1000:10.1f} ms       1.0x")
    print(f"  vectorised (median of {args.repeats})          {fast * 1000:10.1f} ms {slow / fast:7.1f}x faster")
    sample = sample_corpus()
    large = Corpus.concat([sample] * -(-args.decisions // sample.n_decisions))
    prepare(large)
    view_s = median_s(lambda: learner_view(large, CONFIG).decisions, max(1, args.repeats // 2))
    print(
        f"  learner_view + decisions table on {large.n_decisions:,} decisions (scoring included, corpus "
        f"prepared): {view_s * 1000:.1f} ms"
    )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
