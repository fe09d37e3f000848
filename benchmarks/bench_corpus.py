"""Opening and scoring corpora from disk (the columnar layout) against the reference loop.

    .venv/bin/python benchmarks/bench_corpus.py                         # ~100k, ~1M and ~10M decisions
    .venv/bin/python benchmarks/bench_corpus.py --sizes 100000 1000000  # a quicker run

Builds corpora by repeating the sample corpus's real recorded episodes (scripted, farmer and
random) under new ids, tiling their columns with numpy, and saves each with ``save_corpus``
(the smallest with frames, the larger without: their frames would be ~1.5 KB a step). Then, in
a fresh process per size (imports done and subtracted), measures:

- open: ``load_corpus``: each part's events from its events table (its digest matching the
  decisions table), the episodes tables read and checked; and, in a second set of processes
  (``--from-decisions``, the path of parts written before events tables), every decisions
  column read and value-checked, the episodes' events computed from them;
- first score: ``prepare`` (from those events) and scoring one config; and, up to
  ``--episode-path-limit`` decisions, ``score(corpus)`` on a freshly opened corpus in one call
  (the path a user takes);
- re-score after a weight change (median of 21, each ``collect_wood``'s credit a new value:
  a slider's moves) and after a resource weight change (median of 5);
- the CPU time of open + first score (both threads: on a loaded machine the wall time waits
  for a core, the CPU time does not);
- peak RSS (VmHWM) above the interpreter's resident size after imports and a warm-up on the
  sample (the libraries' code pages count as the interpreter's), per decision;
- bytes on disk per decision (decisions, episodes and events tables) and per frame (frames tables).

The reference, ``episode_reward.score_episode`` (one ``compute_stepwise_reward`` per decision), runs on
a ~20k-decision subset in the same run (median of 3), states built beforehand. Medians of ``--repeats`` fresh
processes per size. The last line is machine-readable (``key=value`` pairs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.core.episode_reward import score_episode
from workbench.data.episodes import ColumnStore, Corpus, DecisionArrays, EpisodeExtras
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus, stream
from workbench.scoring import prepare, score
from workbench.util.memory import retain_freed_memory

CONFIG = RewardConfig.from_file(Path(__file__).resolve().parent.parent / "configs" / "upstream_shaped.yaml")
N_ACH = len(ACHIEVEMENTS)


# -- building corpora ---------------------------------------------------------------------------
def repeated_corpus(decisions: int, frames: bool) -> Corpus:
    """The sample's episodes repeated under new ids until ``decisions``, columns tiled with numpy."""
    sample = sample_corpus()
    base = sample.decision_arrays()
    reps = max(1, round(decisions / base.n_decisions))
    offsets = base.action_offsets
    steps_per_rep = int(offsets[-1])
    tiled = DecisionArrays(
        ids=tuple(f"{i}-r{r:05d}" for r in range(reps) for i in base.ids),
        lengths=np.tile(base.lengths, reps),
        env_return=np.tile(base.env_return, reps),
        inventory=np.tile(base.inventory, (reps, 1)),
        achievement_counts=np.tile(base.achievement_counts, (reps, 1)),
        player_pos=np.tile(base.player_pos, (reps, 1)),
        env_reward=np.tile(base.env_reward, reps),
        done=np.tile(base.done, reps),
        action_ids=np.tile(base.action_ids, reps),
        action_offsets=np.concatenate(
            [(offsets[:-1][None, :] + steps_per_rep * np.arange(reps)[:, None]).ravel(), [steps_per_rep * reps]]
        ),
    )
    extras = [sample.episode_extras(i) for i in range(len(sample))]
    n = len(sample)

    def extra(k: int) -> EpisodeExtras:
        e = extras[k % n]
        return EpisodeExtras(
            tiled.ids[k], e.metadata, e.logged, e.views, e.messages, e.frames_loader if frames else None
        )

    index = pd.concat([sample.index] * reps, ignore_index=True)
    index["episode"] = list(tiled.ids)
    index["has_frames"] = frames
    return Corpus.from_store(ColumnStore(tiled, extra), range(len(tiled.ids)), index)


def folder_bytes(root: Path, table: str) -> int:
    return sum(f.stat().st_size for f in (root / table).glob("part-*.parquet"))


# -- one size, in a fresh process -----------------------------------------------------------------
def child(path: str, episode_path: bool, untouched: bool = False, from_decisions: bool = False) -> dict[str, float]:
    """Measurements of one corpus folder (run in a fresh interpreter). The baseline is taken
    after opening and scoring the 10-episode sample, so the libraries' code pages (pyarrow's
    Parquet reader is tens of MB) count as the interpreter's, not as the corpus's. The child
    opts into keeping freed memory as ``workbench.cli.main`` does, unless ``untouched``;
    ``from_decisions`` opens as for parts without events tables (their events never read)."""
    if not untouched:
        retain_freed_memory()
    if from_decisions:
        stream.read_part_events = lambda root, part, first_decision: None
    score(prepare(sample_corpus()), CONFIG).episodes
    base_rss = _status_kb("VmRSS")
    cpu = time.process_time()
    started = time.perf_counter()
    corpus = load_corpus(path)
    opened = time.perf_counter()
    prepared = prepare(corpus)
    scores = score(prepared, CONFIG)
    scores.episodes  # the per-episode table: what a first look shows
    scored = time.perf_counter()
    cpu = time.process_time() - cpu
    rescore, resource = [], []
    for k in range(21):  # a weight slider: collect_wood's credit moves, the rest stays
        changed = CONFIG.with_changes(weights={**CONFIG.weights, "collect_wood": 0.3 + k * 0.01})
        t = time.perf_counter()
        score(prepared, changed).episodes
        rescore.append(time.perf_counter() - t)
    for k in range(5):  # a resource weight moves: gains, resource rewards and indicators again
        changed = CONFIG.with_changes(resource_overrides={"inventory": {"wood": 0.1 + k * 0.01}})
        t = time.perf_counter()
        score(prepared, changed).episodes
        resource.append(time.perf_counter() - t)
    result = {
        "decisions": corpus.n_decisions,
        "open_s": opened - started,
        "first_score_s": scored - opened,
        "cpu_s": cpu,
        "rescore_ms": statistics.median(rescore) * 1e3,
        "resource_rescore_ms": statistics.median(resource) * 1e3,
        "peak_rss_mb": (_status_kb("VmHWM") - base_rss) / 1024,
    }
    if episode_path:
        fresh = load_corpus(path)
        t = time.perf_counter()
        score(fresh, CONFIG).episodes
        result["episode_path_score_s"] = time.perf_counter() - t
    return result


def _status_kb(key: str) -> int:
    """A /proc/self/status figure in kB. VmHWM, not ``ru_maxrss``: Linux carries the parent's
    high-water mark into a forked child's ``ru_maxrss`` across exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/self/status")


def reference_rate(decisions: int) -> float:
    """Decisions per second of ``episode_reward.score_episode`` over the sample's episodes repeated."""
    sample = list(sample_corpus())
    states, total = [], 0
    while total < decisions:
        for episode in sample:
            states.append(episode.states())
            total += episode.n_decisions
    started = time.perf_counter()
    for episode_states in states:
        score_episode(episode_states, CONFIG)
    return total / (time.perf_counter() - started)


def _measure(root: Path, size: int, args: argparse.Namespace, from_decisions: bool) -> dict[str, Any]:
    """Medians over ``args.repeats`` fresh processes measuring ``root`` (see ``child``)."""
    runs = []
    for _ in range(args.repeats):
        command = [sys.executable, __file__, "--child", str(root)]
        if size <= args.episode_path_limit and not from_decisions:
            command.append("--episode-path")
        if args.untouched_allocator:
            command.append("--untouched-allocator")
        if from_decisions:
            command.append("--from-decisions")
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per size (medians)")
    parser.add_argument("--reference-decisions", type=int, default=20_000)
    parser.add_argument(
        "--episode-path-limit",
        type=int,
        default=1_200_000,
        help="also time today's score(corpus) (walks episodes) up to this many decisions",
    )
    parser.add_argument("--work", default=None, help="folder for the corpora (default: a temporary one, removed)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--episode-path", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--from-decisions", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--untouched-allocator",
        action="store_true",
        help="measure without the CLI's opt-in to keeping freed memory (workbench.util.memory)",
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.episode_path, args.untouched_allocator, args.from_decisions)))
        return
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_corpus_"))
    load = os.getloadavg()
    rows = []
    try:
        for size in args.sizes:
            root = work / f"corpus_{size}"
            if root.exists():
                shutil.rmtree(root)
            frames = size <= 150_000
            t = time.perf_counter()
            save_corpus(repeated_corpus(size, frames), root)
            saved = time.perf_counter() - t
            row = _measure(root, size, args, from_decisions=False)
            row["from_decisions"] = _measure(root, size, args, from_decisions=True)
            row["save_s"] = saved
            row["disk_bytes_per_decision"] = (
                sum(folder_bytes(root, t) for t in ("decisions", "episodes", "events")) / row["decisions"]
            )
            steps = int(load_corpus(root).index.loc[lambda i: i.has_frames, "steps"].sum())
            row["frame_bytes_per_step"] = folder_bytes(root, "frames") / steps if frames and steps else float("nan")
            rows.append(row)
            if not args.work:
                shutil.rmtree(root)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    rate = statistics.median(reference_rate(args.reference_decisions) for _ in range(3))
    print(
        f"machine load (1/5/15 min) at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, at end "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
        + f"; {os.cpu_count()} cores"
    )
    print(
        f"reference loop (episode_reward.score_episode): {rate:,.0f} decisions/s on {args.reference_decisions:,} "
        "decisions (median of 3)"
    )
    header = (
        "| decisions | open | first score | open + score | CPU (both threads) | vs reference | re-score "
        "| re-score, resource weight | peak RSS / decision | disk / decision | score(corpus) |"
    )
    print(header)
    print("|" + "---:|" * 11)
    for row in rows:
        for label, measured in (("", row), (" (decisions read)", row["from_decisions"])):
            total = measured["open_s"] + measured["first_score_s"]
            reference = row["decisions"] / rate
            episode = f"{measured['episode_path_score_s']:.2f} s" if "episode_path_score_s" in measured else "-"
            print(
                f"| {row['decisions']:,.0f}{label} | {measured['open_s'] * 1e3:,.0f} ms "
                f"| {measured['first_score_s'] * 1e3:,.0f} ms | {total * 1e3:,.0f} ms | {measured['cpu_s'] * 1e3:,.0f} ms "
                f"| {reference / total:,.0f}x | {measured['rescore_ms']:.1f} ms | {measured['resource_rescore_ms']:.1f} ms "
                f"| {measured['peak_rss_mb'] * 2**20 / row['decisions']:.0f} B | {row['disk_bytes_per_decision']:.1f} B "
                f"| {episode} |"
            )
    frames_rows = [r for r in rows if not np.isnan(r["frame_bytes_per_step"])]
    if frames_rows:
        print(f"frames on disk: {frames_rows[0]['frame_bytes_per_step']:,.0f} bytes per step")
    by_size = {int(r["decisions"]): r for r in rows}
    sizes = sorted(by_size)
    pairs = [f"reference_per_s={rate:.0f}"]
    for size in sizes:
        r = by_size[size]
        pairs += [
            f"open_score_ms_{size}={(r['open_s'] + r['first_score_s']) * 1e3:.1f}",
            f"ratio_{size}={size / rate / (r['open_s'] + r['first_score_s']):.1f}",
            f"rescore_ms_{size}={r['rescore_ms']:.2f}",
            f"cpu_ms_{size}={r['cpu_s'] * 1e3:.1f}",
            f"rss_bytes_per_decision_{size}={r['peak_rss_mb'] * 2**20 / size:.1f}",
            f"from_decisions_ms_{size}="
            f"{(r['from_decisions']['open_s'] + r['from_decisions']['first_score_s']) * 1e3:.1f}",
        ]
    if len(sizes) > 1:
        small, large = by_size[sizes[-2]], by_size[sizes[-1]]
        pairs.append(
            f"scaling_last_two={(large['open_s'] + large['first_score_s']) / (small['open_s'] + small['first_score_s']):.2f}"
        )
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
