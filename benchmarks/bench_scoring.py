"""How fast ``workbench.scoring`` is against the reference per-decision loop.

    .venv/bin/python benchmarks/bench_scoring.py                      # 1,000 x 1,000 decisions
    .venv/bin/python benchmarks/bench_scoring.py --episodes 100       # a quick run

Builds a synthetic corpus with numpy (episodes of equal length with Crafter-like state changes:
monotone achievement counts at per-decision rates like a scripted agent's, inventories that rise
with the matching collect/make counts and fall at random, vitals drifting between 0 and 9, and a
few achievements whose status goes true -> false -> true so k-limits act), then reports:

- reference: ``episode_reward.score_episode`` (one ``compute_stepwise_reward`` call per decision) on
  the first episodes (``--reference-decisions``), states built beforehand (not timed), so the
  ratio is against the reference's best case;
- cold: ``score(corpus, config)`` on a ``Corpus`` object never prepared (preparation and the
  episode table included; the decision and component tables are built on first access), and
  the same plus building those two tables;
- re-score: ``score(prepared, config)`` after a weight and lambda change (the slider path),
  without and with building the two large tables;
- peak memory: the process's peak resident set size (``resource.getrusage().ru_maxrss``, the
  whole run including the synthetic corpus) and the ``tracemalloc`` peak of one cold score.

The config is per_achievement (the expensive strategy) with weights, k-limits and lambda. Fast
paths are medians of ``--repeats`` runs. The last line reads
``cold_ratio=<x> rescore_ms=<y> peak_mb=<z>``: cold score vs reference in decisions per second,
the median re-score, and the process peak RSS.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import time
import tracemalloc

import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INITIAL_INVENTORY, INVENTORY_ITEMS
from workbench.core.episode_reward import score_episode
from workbench.data.episodes import Corpus, Episode
from workbench.scoring import score

#: Per-decision probability that an achievement's count rises (a scripted agent's order of magnitude).
UNLOCK_RATES = {
    "collect_wood": 0.03,
    "collect_sapling": 0.01,
    "collect_drink": 0.02,
    "collect_stone": 0.01,
    "place_plant": 0.005,
    "place_stone": 0.005,
    "place_table": 0.002,
    "eat_cow": 0.003,
    "defeat_zombie": 0.002,
    "collect_coal": 0.003,
    "wake_up": 5e-4,
    "make_wood_pickaxe": 1e-3,
    "make_wood_sword": 1e-3,
    "make_stone_pickaxe": 8e-4,
    "make_stone_sword": 7e-4,
    "place_furnace": 5e-4,
    "eat_plant": 3e-4,
    "defeat_skeleton": 2e-4,
    "collect_iron": 3e-4,
    "make_iron_pickaxe": 5e-5,
    "make_iron_sword": 5e-5,
    "collect_diamond": 2e-5,
}
#: The count whose rises an inventory item follows.
ITEM_SOURCE = {
    "wood": "collect_wood",
    "sapling": "collect_sapling",
    "stone": "collect_stone",
    "coal": "collect_coal",
    "iron": "collect_iron",
    "diamond": "collect_diamond",
    "wood_pickaxe": "make_wood_pickaxe",
    "stone_pickaxe": "make_stone_pickaxe",
    "iron_pickaxe": "make_iron_pickaxe",
    "wood_sword": "make_wood_sword",
    "stone_sword": "make_stone_sword",
    "iron_sword": "make_iron_sword",
}
VITALS = ("health", "food", "drink", "energy")
CONFIG = RewardConfig(
    strategy="per_achievement",
    weights={"collect_wood": 0.8, "collect_sapling": 0.6, "place_table": 2.0, "collect_diamond": 5.0},
    k_limits={"collect_wood": 2, "collect_sapling": 0, "eat_cow": 3},
    indicator_lambda=0.5,
)


def synthetic_corpus(episodes: int, decisions: int, seed: int = 0) -> Corpus:
    """``episodes`` episodes of ``decisions`` one-action decisions with Crafter-like states."""
    rng = np.random.default_rng(seed)
    shape = (episodes, decisions)
    rises = np.stack([rng.random(shape) < UNLOCK_RATES[name] for name in ACHIEVEMENTS], axis=-1)
    counts = np.zeros((episodes, decisions + 1, len(ACHIEVEMENTS)), dtype=np.int32)
    np.cumsum(rises, axis=1, out=counts[:, 1:])
    status = counts > 0
    # A few episodes where a status goes true -> false -> true (not Crafter, but legal data).
    for e in rng.choice(episodes, size=max(1, episodes // 50), replace=False):
        on = np.flatnonzero(status[e, -1])
        if len(on):
            a = rng.choice(on)
            first = int(np.argmax(status[e, :, a]))
            stop = min(decisions, first + 1 + int(rng.integers(1, 50)))
            status[e, first + 1 : stop, a] = False

    inventory = np.zeros((episodes, decisions + 1, len(INVENTORY_ITEMS)), dtype=np.int32)
    for i, item in enumerate(INVENTORY_ITEMS):
        if item in VITALS:
            step = rng.choice([-1, 0, 1], p=[0.04, 0.92, 0.04], size=shape)
        else:
            gained = rises[..., ACHIEVEMENTS.index(ITEM_SOURCE[item])].astype(np.int32) if item in ITEM_SOURCE else 0
            step = gained - (rng.random(shape) < 0.01).astype(np.int32)
        inventory[:, 1:, i] = np.cumsum(step, axis=1)
        inventory[:, :, i] = np.clip(inventory[:, :, i] + INITIAL_INVENTORY[item], 0, 9)

    action_lists = [[name] for name in ACTIONS]
    action_ids = rng.integers(0, len(ACTIONS), size=shape)
    env_reward = rng.choice([0.0, 0.1, -0.1, 1.0], p=[0.9, 0.04, 0.05, 0.01], size=shape)
    return Corpus(
        Episode(
            id=f"synthetic-{e:05d}",
            inventory=inventory[e],
            achievement_counts=counts[e],
            achievement_status=status[e],
            actions=[action_lists[a] for a in action_ids[e]],
            env_reward=env_reward[e],
            done=np.zeros(decisions, dtype=bool),
            metadata={"source": "synthetic"},
        )
        for e in range(episodes)
    )


def timed(function, repeats: int = 1) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls (seconds) and the last result."""
    times, result = [], None
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def cold(corpus: Corpus, repeats: int, *, tables: bool) -> float:
    """Median time of ``score`` on a new ``Corpus`` object over the same episodes (nothing
    cached), optionally building the decision and component tables too."""
    times = []
    for _ in range(repeats):
        fresh = Corpus(list(corpus))
        gc.collect()
        start = time.perf_counter()
        scores = score(fresh, CONFIG)
        if tables:
            scores.decisions, scores.components
        times.append(time.perf_counter() - start)
        del fresh, scores
    return statistics.median(times)


def rss_mb() -> float:
    """Peak resident set size of this process so far (ru_maxrss: KB on Linux, bytes on macOS)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--decisions", type=int, default=1000, help="decisions per episode")
    parser.add_argument("--reference-decisions", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5, help="repeats of each fast measurement (median)")
    args = parser.parse_args()

    start = time.perf_counter()
    corpus = synthetic_corpus(args.episodes, args.decisions)
    n = corpus.n_decisions
    print(
        f"synthetic corpus: {len(corpus)} episodes x {args.decisions} decisions = {n:,} decisions "
        f"(built in {time.perf_counter() - start:.1f} s)"
    )

    reference_episodes = [corpus[i] for i in range(max(1, args.reference_decisions // args.decisions))]
    states = [(e.states(), e.actions) for e in reference_episodes]
    ref_n = sum(e.n_decisions for e in reference_episodes)
    ref_s, _ = timed(lambda: [score_episode(s, CONFIG, a) for s, a in states])
    ref_rate = ref_n / ref_s
    states.clear()  # free the reference states before the large runs

    rss_corpus_mb = rss_mb()
    cold_s = cold(corpus, args.repeats, tables=False)
    cold_tables_s = cold(corpus, args.repeats, tables=True)
    prepared = score(corpus, CONFIG).prepared
    changed = CONFIG.with_changes(weights={**CONFIG.weights, "collect_wood": 1.3}, indicator_lambda=0.7)
    rescore_s, _ = timed(lambda: score(prepared, changed).episodes, repeats=args.repeats)
    tables_s, (decisions, components) = timed(
        lambda: (lambda s: (s.decisions, s.components))(score(prepared, changed)), repeats=args.repeats
    )

    tracemalloc.start()
    score(Corpus(list(corpus)), CONFIG).components
    traced_peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    peak_mb = rss_mb()

    rows = [
        ("reference loop (`episode_reward.score_episode`)", ref_n, ref_s),
        ("cold `score` (prepare + episode table; large tables lazy)", n, cold_s),
        ("cold `score` + building decisions and components tables", n, cold_tables_s),
        ("re-score after a weight change (episode table)", n, rescore_s),
        ("re-score + building decisions and components tables", n, tables_s),
    ]
    print(
        f"\nconfig: per_achievement; {len(decisions):,} decision rows, {len(components):,} component rows; "
        f"medians of {args.repeats} runs (reference: 1 run)\n"
    )
    print("| path | decisions | time | decisions/s | vs reference |")
    print("|---|---:|---:|---:|---:|")
    for name, count, seconds in rows:
        rate = count / seconds
        print(f"| {name} | {count:,} | {seconds * 1e3:,.1f} ms | {rate:,.0f} | {rate / ref_rate:,.0f}x |")
    print(
        f"\npeak memory: {peak_mb:,.0f} MB resident (ru_maxrss: the whole process; {rss_corpus_mb:,.0f} MB "
        f"of it was reached before any scoring, building the synthetic corpus and the reference's states); "
        f"{traced_peak_mb:,.0f} MB traced (tracemalloc) during one cold score building all tables"
    )
    print(f"cold_ratio={(n / cold_s) / ref_rate:.0f} rescore_ms={rescore_s * 1e3:.1f} peak_mb={peak_mb:.0f}")


if __name__ == "__main__":
    main()
