"""What ``workbench.env.CrafterStepwiseEnv`` costs per environment step against bare Crafter.

    .venv/bin/python benchmarks/bench_env.py                 # 5 repeats of 1,500 steps per variant
    .venv/bin/python benchmarks/bench_env.py --steps 1000 --repeats 3

Every variant plays the same number of environment steps with uniformly random actions from a
seeded generator, resetting whenever an episode ends; only the step calls are timed (random
agents die every ~200 steps, and how often a run resets would otherwise dominate its time):

- ``crafter``: ``crafter.Env.step`` alone (the reference, measured in the same run);
- ``env``: the gymnasium env with K = 1 under ``upstream_shaped`` (per_achievement, the
  expensive strategy): the stepwise reward and the episode summary at each end;
- ``env K=4``: four actions per decision (a quarter of the reward calls per step);
- ``env record``: K = 1, recording every episode in memory (``record=True``);
- ``env record frames``: also keeping every frame (``record_frames=True``).

- the env's own work per decision, without Crafter: the states of a recorded scripted episode
  (K = 1, 1,500 steps) replayed through ``DecisionScorer`` (state dicts and the stepwise reward),
  and the episode summary (``episode_reward.score_episode``, once per episode) per decision.

Variants run interleaved, ``--repeats`` times, timed in CPU seconds of this process
(``time.process_time``: the machine is shared, and wall time would count other processes); the
table shows median steps per CPU second and the ratio to the median of ``crafter``. The machine
load (``os.getloadavg``) is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import crafter
import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.episode_reward import score_episode
from workbench.data.policies import scripted_policy
from workbench.env import CrafterStepwiseEnv
from workbench.env.stepwise import DecisionScorer, state_from_row

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "upstream_shaped.yaml"


def run_crafter(steps: int, seed: int) -> float:
    """CPU seconds inside ``steps`` random ``crafter.Env.step`` calls (resets not counted)."""
    rng = np.random.default_rng(seed)
    env = crafter.Env(seed=seed)
    env.reset()
    spent = 0.0
    for action in rng.integers(17, size=steps):
        started = time.process_time()
        _, _, done, _ = env.step(int(action))
        spent += time.process_time() - started
        if done:
            env.reset()
    return spent


def run_env(steps: int, seed: int, config: RewardConfig, k: int = 1, **options: bool) -> float:
    """CPU seconds inside the env's ``step`` calls for ``steps`` random environment steps (resets
    not counted; the episode summary and recording at an episode's end are, being in ``step``)."""
    rng = np.random.default_rng(seed)
    env = CrafterStepwiseEnv(config, actions_per_decision=k, **options)
    env.reset(seed=seed)
    played, spent = 0, 0.0
    for ids in rng.integers(17, size=(steps, k)):  # one decision per row; K actions each
        if played >= steps:
            break
        started = time.process_time()
        _, _, terminated, truncated, info = env.step(int(ids[0]) if k == 1 else ids)
        spent += time.process_time() - started
        played += len(info["actions"])
        if terminated or truncated:
            env.reset()
    return spent * steps / played


def own_work_per_decision(config: RewardConfig, repeats: int) -> tuple[float, float, int]:
    """(reward bookkeeping, summary) in CPU microseconds per decision, and the decisions timed."""
    env = CrafterStepwiseEnv(config, length=1500, record=True)
    policy = scripted_policy(np.random.default_rng(0))
    env.reset(seed=0)
    while not any(env.step(env.encode(policy(env.policy_input())))[2:4]):
        pass
    episode = env.recorded[0]
    rows = list(zip(episode.inventory.tolist(), episode.achievement_counts.tolist()))
    scoring, summary = [], []
    for _ in range(repeats):
        scorer = DecisionScorer(config)
        started = time.process_time()
        scorer.reset(state_from_row(*rows[0]))
        for (inventory, counts), actions in zip(rows[1:], episode.actions):
            scorer.score(state_from_row(inventory, counts), actions)
        scoring.append(time.process_time() - started)
        started = time.process_time()
        score_episode(episode.states(), config, episode.actions)
        summary.append(time.process_time() - started)
    n = episode.n_decisions
    return statistics.median(scoring) / n * 1e6, statistics.median(summary) / n * 1e6, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    config = RewardConfig.from_file(CONFIG)
    variants = {
        "crafter": lambda seed: run_crafter(args.steps, seed),
        "env": lambda seed: run_env(args.steps, seed, config),
        "env K=4": lambda seed: run_env(args.steps, seed, config, k=4),
        "env record": lambda seed: run_env(args.steps, seed, config, record=True),
        "env record frames": lambda seed: run_env(args.steps, seed, config, record=True, record_frames=True),
    }
    print(f"load average before: {os.getloadavg()}")
    run_crafter(100, 0)  # warm up numba's world generation and the texture cache
    times: dict[str, list[float]] = {name: [] for name in variants}
    for repeat in range(args.repeats):
        for name, run in variants.items():
            times[name].append(run(1000 + repeat))
    reference = statistics.median(times["crafter"])
    print(f"{args.steps} steps per run, median of {args.repeats} runs")
    print(f"{'variant':<20} {'steps/s':>9} {'vs crafter':>11}")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"{name:<20} {args.steps / median:>9.0f} {reference / median:>10.2f}x")
    scoring, summary, n = own_work_per_decision(config, args.repeats)
    print(
        f"own work per decision ({n} scripted decisions): stepwise reward {scoring:.0f} us, "
        f"episode summary {summary:.0f} us; Crafter's step {1e6 / (args.steps / reference):.0f} us"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
