"""What ``workbench.env.RecordEpisodes`` adds to a training step: recording every episode into a corpus folder.

    .venv/bin/python benchmarks/bench_record.py                  # 5 repeats of 2,000 steps per variant
    .venv/bin/python benchmarks/bench_record.py --steps 500 --repeats 2

Each variant plays ``--steps`` decisions of ``CrafterStepwiseEnv`` (K = 1, ``recommended``,
Crafter's episode length ``--length``, so episodes end and get saved often) with seeded random
actions, resetting at each end:

- ``env``: the env alone, recording nothing (the reference, measured in the same run);
- ``RecordEpisodes``: every finished episode saved into a corpus folder (a background thread);
- ``RecordEpisodes + TensorBoard``: also the per-component series (``TensorBoardSeries``).

Timed in CPU seconds of the whole process (``time.process_time``: the writer thread's work is
counted, and other processes on the shared machine are not), from the first step to ``close()``
returning (every episode saved). Variants are interleaved; the table shows the median CPU
time per step and the overhead against ``env``. The load average is printed before and after.
The last line reads ``overhead_pct=<x> overhead_tb_pct=<y>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import gymnasium
import numpy as np

import workbench.env  # noqa: F401  (registers the env id)
from workbench.env import ENV_ID, RecordEpisodes

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "recommended.yaml"


def run(variant: str, steps: int, length: int, seed: int) -> float:
    """CPU seconds for ``steps`` decisions of ``variant``, episodes saved included."""
    with tempfile.TemporaryDirectory() as scratch:
        env = gymnasium.make(ENV_ID, config=str(CONFIG), length=length)
        if variant != "env":
            tensorboard = Path(scratch) / "tb" if variant.endswith("TensorBoard") else None
            env = RecordEpisodes(env, Path(scratch) / "corpus", tensorboard=tensorboard)
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        started = time.process_time()
        for action in rng.integers(17, size=steps):
            _, _, terminated, truncated, _ = env.step(int(action))
            if terminated or truncated:
                env.reset()
        env.close()
        return time.process_time() - started


def main() -> None:
    """Run the variants interleaved and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="decisions per run (default 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per variant (default 5)")
    parser.add_argument("--length", type=int, default=300, help="Crafter episode length in steps (default 300)")
    args = parser.parse_args()
    variants = ("env", "RecordEpisodes", "RecordEpisodes + TensorBoard")
    print(f"load average before: {os.getloadavg()}")
    times: dict[str, list[float]] = {v: [] for v in variants}
    for repeat in range(args.repeats):
        for variant in variants:
            times[variant].append(run(variant, args.steps, args.length, seed=repeat))
    reference = statistics.median(times["env"]) / args.steps
    print(f"{'variant':32s} {'CPU ms/step':>12s} {'overhead':>9s}")
    overheads = {}
    for variant in variants:
        per_step = statistics.median(times[variant]) / args.steps
        overheads[variant] = 100 * (per_step / reference - 1)
        print(f"{variant:32s} {1e3 * per_step:12.3f} {overheads[variant]:8.1f}%")
    print(f"load average after: {os.getloadavg()}")
    print(
        f"overhead_pct={overheads['RecordEpisodes']:.1f} "
        f"overhead_tb_pct={overheads['RecordEpisodes + TensorBoard']:.1f}"
    )


if __name__ == "__main__":
    main()
