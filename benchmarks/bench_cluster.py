"""Recording and scoring on a Dask LocalCluster against their references, measured in the same run.

    .venv/bin/python benchmarks/bench_cluster.py                          # both parts
    .venv/bin/python benchmarks/bench_cluster.py --part record --episodes 8 --max-steps 400
    .venv/bin/python benchmarks/bench_cluster.py --part score --score-episodes 10000 --decisions 1000

Recording: raw ``crafter.Env`` stepping with a random policy (one env reused, reset per
episode: Crafter's own cost) in one process and in two processes at once, then ``workbench
record random --no-frames`` on a LocalCluster of 1 and of 2 workers (cluster started and warmed
up beforehand, not timed; the run includes submitting, shipping every episode back and writing
it). Reported per repeat and as medians: steps/s, overhead per worker = 1 - (cluster steps/s per
worker) / (raw steps/s of one process), scaling efficiency = steps/s(2 workers) / (2 x steps/s(1
worker)), and raw Crafter's own two-process efficiency beside it.

Scoring: a synthetic corpus (``bench_scoring.synthetic_corpus``) saved as a corpus folder (kept
in --workdir between runs), scored cold from that folder in memory (``load_corpus`` + ``score``)
and on a LocalCluster of 2 workers (``score_on_cluster``), checked equal (per-episode table).
The load average (os.getloadavg) is printed before and after each part: the machine is shared.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def raw_steps_per_second(episodes: int, max_steps: int, seed: int = 0) -> float:
    """Crafter alone: random actions, one env reset per episode; steps per second."""
    import crafter

    rng = np.random.default_rng(seed)
    env = crafter.Env(seed=seed, length=max_steps)
    steps, started = 0, time.perf_counter()
    for _ in range(episodes):
        env.reset()
        done = False
        while not done:
            _, _, done, _ = env.step(int(rng.integers(17)))
            steps += 1
    return steps / (time.perf_counter() - started)


def _raw_in_process(args: tuple[int, int, int]) -> float:
    return raw_steps_per_second(*args)


def raw_parallel(processes: int, episodes: int, max_steps: int) -> float:
    """Summed steps/s of ``processes`` raw Crafter loops running at once."""
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        return float(sum(pool.map(_raw_in_process, [(episodes, max_steps, s) for s in range(processes)])))


def cluster_record(client, episodes: int, max_steps: int, folder: Path) -> float:
    """``record`` on the cluster (no frames); steps per second of the run."""
    from workbench.cluster import DaskScheduler
    from workbench.recording import record

    shutil.rmtree(folder, ignore_errors=True)
    report = record("random", episodes, folder, max_steps=max_steps, frames=False, progress=False,
                    scheduler=DaskScheduler(client))
    assert report.ok, report.failed
    return report.steps_per_second


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def bench_record(args: argparse.Namespace, workdir: Path) -> None:
    from workbench.cluster import connect

    print(f"== recording: random policy, {args.episodes} episodes of up to {args.max_steps} steps, "
          f"{args.repeats} repeats ({load()})")
    raw1, raw2 = [], []
    results: dict[int, list[float]] = {1: [], 2: []}
    for workers in (1, 2):
        with connect(f"local:{workers}") as client:
            client.wait_for_workers(workers)
            cluster_record(client, workers, 50, workdir / "warmup")  # imports and first worlds, not timed
            for repeat in range(args.repeats):
                raw = raw_steps_per_second(max(1, args.episodes // 2), args.max_steps, seed=repeat)
                (raw1 if workers == 1 else raw2).append(raw)
                sps = cluster_record(client, args.episodes * workers, args.max_steps, workdir / "recorded")
                results[workers].append(sps)
                print(f"  {workers} worker(s) repeat {repeat}: cluster {sps:.0f} steps/s "
                      f"({sps / workers:.0f} per worker), raw Crafter one process {raw:.0f} steps/s ({load()})")
    raw_two = [raw_parallel(2, max(1, args.episodes // 2), args.max_steps) for _ in range(args.repeats)]
    raw = statistics.median(raw1 + raw2)
    one, two = statistics.median(results[1]), statistics.median(results[2])
    print(f"  raw Crafter, two processes at once: {statistics.median(raw_two):.0f} steps/s "
          f"({statistics.median(raw_two) / (2 * raw):.0%} of 2x one process)")
    print(f"  medians: raw {raw:.0f} steps/s; cluster 1 worker {one:.0f}, 2 workers {two:.0f}")
    print(f"  overhead per worker: 1 worker {1 - one / raw:.1%}, 2 workers {1 - two / 2 / raw:.1%} (target <= 10%)")
    print(f"  scaling efficiency 1 -> 2 workers: {two / (2 * one):.1%} (target >= 85%; raw Crafter's own: "
          f"{statistics.median(raw_two) / (2 * raw):.1%})")
    print(f"record_overhead_1={1 - one / raw:.3f} record_overhead_2={1 - two / 2 / raw:.3f} "
          f"scaling={two / (2 * one):.3f} raw_scaling={statistics.median(raw_two) / (2 * raw):.3f}")


def bench_score(args: argparse.Namespace, workdir: Path) -> None:
    import pandas as pd
    from bench_scoring import synthetic_corpus

    from workbench.cluster import connect, score_on_cluster
    from workbench.config import RewardConfig
    from workbench.scoring import score
    from workbench.storage import load_corpus

    decisions = args.score_episodes * args.decisions
    folder = workdir / f"synthetic-{args.score_episodes}x{args.decisions}"
    if not (folder / "corpus.json").exists():
        started = time.perf_counter()
        shutil.rmtree(folder, ignore_errors=True)
        synthetic_corpus(args.score_episodes, args.decisions).save(folder)
        print(f"  (wrote {folder} in {time.perf_counter() - started:.0f} s)")
    config = RewardConfig(strategy="per_achievement", weights={"collect_wood": 0.5}, indicator_lambda=0.8)
    print(f"== scoring {args.score_episodes} episodes x {args.decisions} = {decisions:,} decisions from {folder} "
          f"({load()})")
    memory, cluster = [], []
    with connect(f"local:{args.score_workers}") as client:
        client.wait_for_workers(args.score_workers)
        for repeat in range(args.repeats):
            started = time.perf_counter()
            expected = score(load_corpus(folder), config).episodes
            memory.append(time.perf_counter() - started)
            started = time.perf_counter()
            got = score_on_cluster(client, folder, config, episodes_per_part=args.part_size, progress=False).episodes
            cluster.append(time.perf_counter() - started)
            pd.testing.assert_frame_equal(got, expected, check_exact=True)
            del expected, got
            print(f"  repeat {repeat}: in memory {memory[-1]:.1f} s, cluster ({args.score_workers} workers, "
                  f"{args.part_size} episodes a part) {cluster[-1]:.1f} s, tables equal ({load()})")
    ratio = statistics.median(cluster) / statistics.median(memory)
    print(f"  medians: in memory {statistics.median(memory):.1f} s, cluster {statistics.median(cluster):.1f} s: "
          f"{ratio:.2f}x (target <= 3x)")
    print(f"score_ratio={ratio:.3f} memory_s={statistics.median(memory):.2f} cluster_s={statistics.median(cluster):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=["record", "score", "both"], default="both")
    parser.add_argument("--episodes", type=int, default=6, help="episodes per worker per repeat (recording)")
    parser.add_argument("--max-steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--score-episodes", type=int, default=10000)
    parser.add_argument("--decisions", type=int, default=1000, help="decisions per synthetic episode")
    parser.add_argument("--score-workers", type=int, default=2)
    parser.add_argument("--part-size", dest="part_size", type=int, default=500, help="episodes per scoring part")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench_cluster")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.part in ("record", "both"):
        bench_record(args, args.workdir)
    if args.part in ("score", "both"):
        bench_score(args, args.workdir)


if __name__ == "__main__":
    main()
