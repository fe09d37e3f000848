"""What following a live run costs: appending an episode to ``LiveScores``, and file landed -> appended and scored.

    .venv/bin/python benchmarks/bench_live.py                       # 1,000 x 1,000 decisions, 3 configs
    .venv/bin/python benchmarks/bench_live.py --episodes 100 --files 10   # a quick run

- append: a ``LiveScores`` over a synthetic corpus of ``--episodes`` x 1,000 decisions
  (``bench_scoring.synthetic_corpus``, saved and opened as a corpus folder; 1M decisions by
  default) under 3 configs
  (recommended, upstream_shaped, consistent); each repeat appends one new 1,000-decision
  episode, timing ``append`` alone and ``append`` + ``episodes()`` (the table a view redraws).
  The reference, measured in the same run, re-prepares and re-scores the whole grown corpus under
  the 3 configs (a fresh ``Corpus`` object, so nothing cached) and builds its episode tables.
- watch: a writer thread renames ``--files`` rollout JSON files into a watched folder, one every
  ``--gap`` seconds; a ``Watcher`` with a ``LiveScores`` (same 3 configs) appends and scores them.
  Latency per file: from the rename to the end of ``LiveScores.append`` for its episodes. Run
  with file events (watchfiles) and with polling every ``--poll-interval`` seconds.

Medians of ``--repeats``; the load average (``os.getloadavg``) before and after. The last line
reads ``append_ms=<x> ratio=<y> watch_events_ms=<z> watch_poll_ms=<w>``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench_scoring import synthetic_corpus

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus, Episode
from workbench.data.storage import load_corpus, save_corpus
from workbench.data.watch import Watcher, open_source
from workbench.scoring import LiveScores, prepare, score

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("recommended", "upstream_shaped", "consistent")
ROLLOUT = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "rollouts" / "shaped_raw.json"


def configs() -> dict[str, RewardConfig]:
    """The three configs every measurement scores under."""
    return {name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in CONFIGS}


def bench_append(episodes: int, repeats: int, reference_repeats: int) -> dict[str, float]:
    """Median append costs and the full re-score reference, in ms."""
    # Saved and opened again: a live corpus is a folder on disk, held columnar (an in-memory corpus of
    # a million decisions holds a million small Python lists, whose garbage collection would be timed).
    scratch = tempfile.TemporaryDirectory()
    save_corpus(_storable(synthetic_corpus(episodes, 1000, seed=0)), Path(scratch.name) / "corpus")
    corpus = load_corpus(Path(scratch.name) / "corpus")
    gc.collect()
    new = synthetic_corpus(repeats, 1000, seed=1)
    fresh = [Corpus([_renamed(new[i], f"new-{i:05d}")]) for i in range(repeats)]
    started = time.perf_counter()
    live = LiveScores(corpus, configs())
    build = time.perf_counter() - started
    live.episodes()
    append, refresh = [], []
    for one in fresh:
        started = time.perf_counter()
        live.append(one)
        middle = time.perf_counter()
        live.episodes()
        done = time.perf_counter()
        append.append(middle - started)
        refresh.append(done - started)
    reference = []
    for _ in range(reference_repeats):
        grown = Corpus.concat([corpus, *fresh])  # a new object: prepare starts from nothing
        started = time.perf_counter()
        prepared = prepare(grown)
        for config in configs().values():
            score(prepared, config).episodes  # noqa: B018 - the episode table is part of the work
        reference.append(time.perf_counter() - started)
    scratch.cleanup()
    return {
        "decisions": corpus.n_decisions,
        "build_s": build,
        "append_ms": 1e3 * statistics.median(append),
        "append_refresh_ms": 1e3 * statistics.median(refresh),
        "reference_ms": 1e3 * statistics.median(reference),
    }


def _storable(corpus: Corpus) -> Corpus:
    """The synthetic episodes with their status taken from the counts (storage refuses the
    status flips ``synthetic_corpus`` adds for k-limit tests)."""
    return Corpus(
        Episode(
            id=e.id,
            inventory=e.inventory,
            achievement_counts=e.achievement_counts,
            actions=e.actions,
            env_reward=e.env_reward,
            done=e.done,
            metadata=e.metadata,
        )
        for e in corpus
    )


def _renamed(episode, episode_id: str):
    episode.id = episode_id
    return episode


def bench_watch(files: int, gap: float, events: bool, interval: float) -> list[float]:
    """Per-file latency (s) from landing to appended and scored."""
    document = json.loads(ROLLOUT.read_text(encoding="utf-8"))
    landed: dict[str, float] = {}
    latency: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        source, target = Path(scratch) / "rollouts", Path(scratch) / "corpus"
        source.mkdir()
        live = LiveScores(Corpus(), configs())

        def scored(new: Corpus) -> None:
            now = time.time()
            runs = {e.metadata.get("run_id") for e in new}
            latency.extend(now - landed[run] for run in runs if run in landed)

        live.on_append(scored)
        stop = threading.Event()

        def write() -> None:
            for i in range(files):
                name = f"run-{i:04d}"
                tmp = source / f".{name}.tmp"
                tmp.write_text(json.dumps({**document, "run_id": name}), encoding="utf-8")
                landed[name] = time.time()
                tmp.rename(source / f"{name}.json")
                time.sleep(gap)

        writer = threading.Thread(target=write)
        with Watcher(open_source(source, "rollouts"), target, on_append=live.append) as watcher:
            writer.start()
            watcher.run(
                interval=interval,
                events=events,
                stop=stop,
                on_report=lambda _: len(latency) >= files,
                max_polls=int(10 * files * max(gap, interval) / min(interval, 0.2)) + 100,
            )
        writer.join()
    return latency


def main() -> None:
    """Run both parts and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=1000, help="episodes of 1,000 decisions held (default 1000)")
    parser.add_argument("--repeats", type=int, default=15, help="appends timed (default 15)")
    parser.add_argument("--reference-repeats", type=int, default=3, help="full re-scores timed (default 3)")
    parser.add_argument("--files", type=int, default=20, help="rollout files landed per watch run (default 20)")
    parser.add_argument("--gap", type=float, default=0.3, help="seconds between two files (default 0.3)")
    parser.add_argument("--poll-interval", type=float, default=0.5, help="polling mode's interval (default 0.5)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    result = bench_append(args.episodes, args.repeats, args.reference_repeats)
    ratio = result["reference_ms"] / result["append_ms"]
    print(f"corpus: {result['decisions']:,} decisions, 3 configs; LiveScores built in {result['build_s']:.2f} s")
    print(f"append one 1,000-decision episode, median of {args.repeats}: {result['append_ms']:.2f} ms")
    print(f"append + episodes() table, median:                 {result['append_refresh_ms']:.2f} ms")
    print(f"reference: full re-prepare + score, median of {args.reference_repeats}: {result['reference_ms']:.0f} ms")
    print(f"ratio reference / append: {ratio:.0f}x")
    events = bench_watch(args.files, args.gap, True, 1.0)
    polling = bench_watch(args.files, args.gap, False, args.poll_interval)
    for label, values in (("file events (watchfiles)", events), (f"polling every {args.poll_interval} s", polling)):
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(
            f"watch, {label}: landed -> appended and scored, {len(values)} files: "
            f"median {1e3 * statistics.median(values):.0f} ms, p95 {1e3 * p95:.0f} ms, max {1e3 * max(values):.0f} ms"
        )
    print(f"load average after: {os.getloadavg()}")
    print(
        f"append_ms={result['append_ms']:.2f} ratio={ratio:.0f} "
        f"watch_events_ms={1e3 * statistics.median(events):.0f} watch_poll_ms={1e3 * statistics.median(polling):.0f}"
    )


if __name__ == "__main__":
    main()
