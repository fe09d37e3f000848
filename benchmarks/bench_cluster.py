"""Recording and scoring on a Dask LocalCluster against their references, measured in the same run.

    .venv/bin/python benchmarks/bench_cluster.py                          # both parts
    .venv/bin/python benchmarks/bench_cluster.py --part record --episodes 8 --max-steps 400
    .venv/bin/python benchmarks/bench_cluster.py --part score --score-episodes 10000 --decisions 1000

Recording: ``workbench record random --no-frames`` on a LocalCluster of 1 and of 2 workers
(started and warmed up beforehand, not timed; a run includes submitting, shipping every episode
back and writing it), each repeat right after raw ``crafter.Env`` stepping with random actions
(one env reset per episode: Crafter's own cost) in as many processes at once. Reported per
repeat and as medians: overhead per worker = 1 - cluster steps/s / raw steps/s of the paired
repeat (wall clock), the same per CPU second of the workers (less sensitive to other load),
the client's CPU per 1,000 steps, and scaling efficiency = steps/s(2 workers) / (2 x steps/s(1
worker)) beside raw Crafter's own 1 -> 2 process efficiency.

Scoring: a synthetic corpus (``bench_scoring.synthetic_corpus``) saved as a columnar corpus
folder of parts of --part-size episodes (kept in --workdir between runs), scored cold from that folder in memory (``load_corpus`` + ``score``)
and on a LocalCluster of 2 workers (``score_on_cluster``), checked equal (per-episode table).
The load average (os.getloadavg) is printed before and after each part: the machine is shared.
"""

from __future__ import annotations

import argparse
import dataclasses
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


def raw_stepping(episodes: int, max_steps: int, seed: int = 0) -> tuple[int, float, float]:
    """Crafter alone: random actions, one env reset per episode; (steps, wall s, CPU s)."""
    import crafter

    rng = np.random.default_rng(seed)
    env = crafter.Env(seed=seed, length=max_steps)
    steps, started, cpu = 0, time.perf_counter(), time.process_time()
    for _ in range(episodes):
        env.reset()
        done = False
        while not done:
            _, _, done, _ = env.step(int(rng.integers(17)))
            steps += 1
    return steps, time.perf_counter() - started, time.process_time() - cpu


def _raw_in_process(args: tuple[int, int, int]) -> tuple[int, float, float]:
    raw_stepping(1, 50, seed=args[2] + 1000)  # Crafter's first world compiles (numba): not timed, as on the workers
    return raw_stepping(*args)


def raw_parallel(processes: int, episodes: int, max_steps: int, seed: int) -> tuple[float, float]:
    """``processes`` raw Crafter loops at once: (summed steps per wall second, steps per CPU second)."""
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        runs = pool.map(_raw_in_process, [(episodes, max_steps, seed * 10 + s) for s in range(processes)])
    return sum(n / wall for n, wall, _ in runs), sum(n for n, _, _ in runs) / sum(cpu for _, _, cpu in runs)


def cluster_record(client, episodes: int, max_steps: int, folder: Path) -> tuple[float, float, float]:
    """``record`` on the cluster (no frames): (steps per wall second, steps per worker CPU second,
    client CPU seconds per 1,000 steps)."""
    from workbench.cluster import DaskScheduler
    from workbench.data.recording import record

    shutil.rmtree(folder, ignore_errors=True)
    before, client_cpu = client.run(time.process_time), time.process_time()
    report = record(
        "random", episodes, folder, max_steps=max_steps, frames=False, progress=False, scheduler=DaskScheduler(client)
    )
    after, client_cpu = client.run(time.process_time), time.process_time() - client_cpu
    assert report.ok, report.failed
    worker_cpu = sum(after[w] - before[w] for w in after)
    return report.steps_per_second, report.steps / worker_cpu, 1000 * client_cpu / report.steps


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def bench_record(args: argparse.Namespace, workdir: Path) -> None:
    from workbench.cluster import connect

    print(
        f"== recording: random policy, {args.episodes} episodes per worker of up to {args.max_steps} steps, "
        f"{args.repeats} repeats, each beside raw Crafter in as many processes ({load()})"
    )
    wall: dict[int, list[float]] = {1: [], 2: []}
    ratio: dict[int, list[float]] = {1: [], 2: []}
    cpu_ratio: dict[int, list[float]] = {1: [], 2: []}
    raw_wall: dict[int, list[float]] = {1: [], 2: []}
    for workers in (1, 2):
        with connect(f"local:{workers}") as client:
            client.wait_for_workers(workers)
            cluster_record(client, workers, 50, workdir / "warmup")  # imports and first worlds, not timed
            for repeat in range(args.repeats):
                raw, raw_cpu = raw_parallel(workers, args.episodes, args.max_steps, repeat)
                sps, sps_cpu, client_ms = cluster_record(
                    client, args.episodes * workers, args.max_steps, workdir / "recorded"
                )
                wall[workers].append(sps)
                raw_wall[workers].append(raw)
                ratio[workers].append(sps / raw)
                cpu_ratio[workers].append(sps_cpu / raw_cpu)
                print(
                    f"  {workers} worker(s) repeat {repeat}: cluster {sps:.0f} steps/s, raw Crafter ({workers} "
                    f"process(es)) {raw:.0f} steps/s: {sps / raw:.0%}; per CPU second {sps_cpu:.0f} vs {raw_cpu:.0f} "
                    f"steps: {sps_cpu / raw_cpu:.0%}; client {client_ms:.0f} ms CPU per 1,000 steps ({load()})"
                )
    med = statistics.median
    print(
        f"  overhead per worker against raw Crafter in the same number of processes (wall, median of paired "
        f"repeats): 1 worker {1 - med(ratio[1]):.1%}, 2 workers {1 - med(ratio[2]):.1%} (target <= 10%)"
    )
    print(
        f"  the same in CPU time (steps per worker CPU second vs raw): 1 worker {1 - med(cpu_ratio[1]):.1%}, "
        f"2 workers {1 - med(cpu_ratio[2]):.1%}"
    )
    scaling, raw_scaling = med(wall[2]) / (2 * med(wall[1])), med(raw_wall[2]) / (2 * med(raw_wall[1]))
    print(
        f"  scaling efficiency 1 -> 2 workers: {scaling:.1%} (target >= 85%); raw Crafter's own 1 -> 2 processes "
        f"in the same run: {raw_scaling:.1%}"
    )
    print(
        f"record_overhead_1={1 - med(ratio[1]):.3f} record_overhead_2={1 - med(ratio[2]):.3f} "
        f"cpu_overhead_1={1 - med(cpu_ratio[1]):.3f} cpu_overhead_2={1 - med(cpu_ratio[2]):.3f} "
        f"scaling={scaling:.3f} raw_scaling={raw_scaling:.3f}"
    )


def bench_score(args: argparse.Namespace, workdir: Path) -> None:
    import pandas as pd
    from bench_scoring import synthetic_corpus

    from workbench.cluster import connect, score_on_cluster
    from workbench.core.config import RewardConfig
    from workbench.data.episodes import Corpus
    from workbench.data.storage import load_corpus, save_corpus
    from workbench.scoring import score

    decisions = args.score_episodes * args.decisions
    folder = workdir / f"synthetic-{args.score_episodes}x{args.decisions}"
    if not (folder / "corpus.json").exists():
        started = time.perf_counter()
        shutil.rmtree(folder, ignore_errors=True)
        for start in range(0, args.score_episodes, args.part_size):  # one part per write, as appends make them
            chunk = synthetic_corpus(min(args.part_size, args.score_episodes - start), args.decisions, seed=start)
            # Columnar storage checks that status is true exactly when the count is positive.
            episodes = [
                dataclasses.replace(e, id=f"synthetic-{start + i:05d}", achievement_status=e.achievement_counts > 0)
                for i, e in enumerate(chunk)
            ]
            save_corpus(Corpus(episodes), folder)
        print(f"  (wrote {folder} in {time.perf_counter() - started:.0f} s)")
    config = RewardConfig(strategy="per_achievement", weights={"collect_wood": 0.5}, indicator_lambda=0.8)
    print(
        f"== scoring {args.score_episodes} episodes x {args.decisions} = {decisions:,} decisions from {folder} "
        f"({load()})"
    )
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
            print(
                f"  repeat {repeat}: in memory {memory[-1]:.1f} s, cluster ({args.score_workers} workers, "
                f"{args.part_size} episodes a part) {cluster[-1]:.1f} s, tables equal ({load()})"
            )
    ratio = statistics.median(cluster) / statistics.median(memory)
    print(
        f"  medians: in memory {statistics.median(memory):.1f} s, cluster {statistics.median(cluster):.1f} s: "
        f"{ratio:.2f}x (target <= 3x)"
    )
    print(
        f"score_ratio={ratio:.3f} memory_s={statistics.median(memory):.2f} cluster_s={statistics.median(cluster):.2f}"
    )


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
