"""Where opening and scoring a corpus from disk spends its time, stage by stage (issue 33).

    .venv/bin/python benchmarks/bench_corpus.py --sizes 1000000 --work /tmp/corpora   # builds one
    .venv/bin/python benchmarks/profile_corpus.py /tmp/corpora/corpus_1000000

Prints medians of ``--repeats`` runs in one process (after a warm-up) of: ``load_corpus`` as
shipped (events from the parts' events tables) and its stages (the digest of the decisions
tables, the events tables' Parquet read, their checks, the index); the same for the decisions
read that parts without an events table take: Parquet decode of the columns it reads (threads
on and off, and with the status columns it skips) and its stages (each wrapped with a timer;
the decode done beforehand so the stages are the main thread's own work); the first score (a
freshly opened corpus), and re-scores after an achievement weight change (of it ``Scores``) and
after a resource weight change. The machine's load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.data.storage import columnar, events_table, load_corpus, stream
from workbench.data.storage.decode import OPEN_COLUMNS, READ_COLUMNS
from workbench.data.storage.parquet import ParquetReader
from workbench.scoring import prepare, score, scores, slot_weights
from workbench.scoring.resource_part import resource_part
from workbench.util.memory import retain_freed_memory

CONFIG = RewardConfig.from_file(Path(__file__).resolve().parent.parent / "configs" / "upstream_shaped.yaml")


def median_ms(action: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def decode(root: Path, columns: list[str], threads: bool) -> None:
    """Decode every decisions table's ``columns`` a row group at a time, as opening does."""
    for path in sorted((root / "decisions").glob("*.parquet")):
        with open(path, "rb") as handle:
            reader = ParquetReader(handle, dictionary=["episode"])
            for group in range(reader.num_row_groups):
                reader.read_row_group(group, columns, threads).to_batches(max_chunksize=stream.STREAM_BATCH)


class Stages:
    """Timers around the stages of ``columnar.load`` / ``stream`` / ``events_table`` (module
    attributes swapped in); the decisions read's stages are timed with ``from_decisions``."""

    NAMES = ("check_batch", "check_values", "check_totals", "decision_events")
    EVENTS = {"file_digest": "events table: digest of the decisions table", "_events": "events table: checks"}

    def __init__(self, from_decisions: bool) -> None:
        self.spent: dict[str, float] = {}
        if not from_decisions:
            for name, label in self.EVENTS.items():
                setattr(events_table, name, self._timed(label, getattr(events_table, name)))
            events_table.ParquetReader.read = self._timed(  # type: ignore[method-assign]
                "Parquet reads: episodes and events tables", events_table.ParquetReader.read
            )
            columnar._live_episodes = self._timed("index rows + metadata", columnar._live_episodes)
            return
        stream.read_part_events = lambda root, part, first_decision: None
        for name in self.NAMES:
            setattr(stream, name, self._timed(name, getattr(stream, name)))
        block = stream._Block
        block.append = self._timed("copies into the block", block.append)  # type: ignore[method-assign]
        columnar._live_episodes = self._timed("index rows + metadata", columnar._live_episodes)
        stream.read_ahead = self._decoded_first  # the decode done before the stages: their own time

    def _timed(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - started

        return timed

    @staticmethod
    def _decoded_first(items: Iterator[Any]) -> Iterator[Any]:
        yield from list(items)


def _stage_rows(args: argparse.Namespace, label: str, from_decisions: bool) -> list[tuple[str, float]]:
    """``load_corpus``'s median and its stages' (timers swapped in, then put back)."""
    saved = {module: dict(vars(module)) for module in (stream, columnar, events_table)}
    read = events_table.ParquetReader.read
    try:
        stages = Stages(from_decisions)
        runs, totals = [], []
        for _ in range(args.repeats):
            stages.spent.clear()
            started = time.perf_counter()
            load_corpus(args.corpus)
            totals.append(time.perf_counter() - started)
            runs.append(dict(stages.spent))
    finally:
        for module, names in saved.items():
            for name, value in names.items():
                setattr(module, name, value)
        events_table.ParquetReader.read = read  # type: ignore[method-assign]
    rows = [(label, statistics.median(totals) * 1e3)]
    rows += [(f"  open stage: {name}", statistics.median(r[name] for r in runs) * 1e3) for name in runs[0]]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="a corpus folder (e.g. made by bench_corpus.py --work)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    retain_freed_memory()
    score(prepare(sample_corpus()), CONFIG).episodes  # warm-up: imports, code pages
    load = os.getloadavg()
    rows: list[tuple[str, float]] = []
    rows.append(
        (
            "decode, the 42 columns opening reads, 2 threads",
            median_ms(lambda: decode(args.corpus, OPEN_COLUMNS, True), args.repeats),
        )
    )
    rows.append(
        ("decode, the 42 columns, 1 thread", median_ms(lambda: decode(args.corpus, OPEN_COLUMNS, False), args.repeats))
    )
    rows.append(
        (
            "decode with the 22 status columns (64), 2 threads",
            median_ms(lambda: decode(args.corpus, READ_COLUMNS, True), args.repeats),
        )
    )
    corpus = load_corpus(args.corpus)
    fresh = [load_corpus(args.corpus) for _ in range(args.repeats)]  # a first score needs a corpus never prepared
    rows.append(
        (
            "first score: prepare + score + episodes table",
            median_ms(lambda: score(prepare(fresh.pop()), CONFIG).episodes, args.repeats),
        )
    )
    prepared = prepare(corpus)
    score(prepared, CONFIG)
    weights = iter(range(10**6))
    rows.append(
        (
            "re-score after an achievement weight change",
            median_ms(
                lambda: (
                    score(
                        prepared,
                        CONFIG.with_changes(weights={**CONFIG.weights, "collect_wood": 0.3 + next(weights) * 1e-3}),
                    ).episodes
                ),
                4 * args.repeats,
            ),
        )
    )
    changed = CONFIG.with_changes(weights={**CONFIG.weights, "collect_wood": 0.3})
    made = score(prepared, changed)
    part = resource_part(prepared, True, slot_weights(changed.resource_weights))
    rows.append(
        (
            "  of which Scores (sums, table)",
            median_ms(lambda: scores.Scores(prepared, changed, made._base, part, made._credited), 4 * args.repeats),
        )
    )
    rows.append(
        (
            "re-score after a resource weight change",
            median_ms(
                lambda: (
                    score(
                        prepared,
                        CONFIG.with_changes(resource_overrides={"inventory": {"wood": 0.1 + next(weights) * 1e-3}}),
                    ).episodes
                ),
                4 * args.repeats,
            ),
        )
    )
    rows[:0] = _stage_rows(args, "load_corpus as shipped (events tables)", from_decisions=False)
    rows += _stage_rows(args, "load_corpus, decisions read (parts without events tables)", from_decisions=True)
    print(f"{corpus.n_decisions:,} decisions, {len(corpus):,} episodes; medians of {args.repeats}")
    print("| stage | median ms |")
    print("|---|---:|")
    for name, ms in rows:
        print(f"| {name} | {ms:.1f} |")
    after = os.getloadavg()
    print(f"load average (1 min) {load[0]:.2f} before, {after[0]:.2f} after; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
