"""Importing at scale: each source at 10k, 100k and 1M decisions, against its parse floor in the same run.

    .venv/bin/python benchmarks/bench_ingest.py                                   # 10k and 100k, 3 repeats
    .venv/bin/python benchmarks/bench_ingest.py --sizes 1000000 --sources rollouts --repeats 1
    .venv/bin/python benchmarks/bench_ingest.py --stages                          # where the time goes, at 10k
    .venv/bin/python benchmarks/bench_ingest.py --baseline ../main-checkout       # before/after, in turn

Sources are made by copying the real fixtures with new run ids (``ingest_sources.py``): task-app
rollouts as JSONL, a synth-ai 0.2.24 trace database, crafter.Recorder files. Each measurement
runs in a fresh process (imports done first, not timed), which:

1. reads the same bytes with the same JSON parser the import uses (``jsonsafe.quick``: orjson),
   the parse floor, and with ``json.loads`` for reference: every line of the JSONL files; every
   JSON column of the database's event and message rows (fetched too); every array a Recorder
   import reads from each ``.npz``;
2. runs ``import_into`` (what ``workbench import`` runs) into a new corpus folder, with 1 or 2
   worker processes, and times it whole: read, checks, every part written and committed.

Reported per source, size and workers: the median wall time of ``--repeats`` runs and decisions/s;
the median CPU time of the import (this process and its workers: on a shared machine the wall
time waits for a core, the CPU time does not) and decisions per CPU second (per core); the ratio
of that CPU time to the floor's (CPU time too, measured in the same process just before), for
orjson and for ``json``; and the peak resident memory of the importing process and of its
largest worker (``ru_maxrss``). The load average is printed before and after, and after each
row. With ``--baseline DIR`` each run is made with the package of that checkout (e.g. main's) too,
in turn with this one's on the same sources, and its rows follow, marked ``baseline``. The last
line is machine-readable.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from ingest_sources import make_recorder, make_rollouts, make_traces  # noqa: E402

MAKERS = {"rollouts": make_rollouts, "traces": make_traces, "recorder": make_recorder}


def parse_floor(source: str, path: Path) -> tuple[float, float]:
    """Seconds to read ``path``'s bytes and parse them with orjson (the import's parser) and with json."""
    from workbench.data.importers import RECORDER_ARRAYS
    from workbench.util.jsonsafe import UNSURE, quick

    def parse_all(loads) -> float:
        started = time.process_time()
        if source == "rollouts":
            for file in sorted(path.glob("*.jsonl")):
                for line in file.read_bytes().split(b"\n"):
                    if line.strip():
                        loads(line)
        elif source == "traces":
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            query = (
                "SELECT system_state_before, system_state_after, call_records, metadata FROM events "
                "UNION ALL SELECT content, NULL, NULL, NULL FROM messages"
            )
            for row in connection.execute(query):
                for text in row:
                    if isinstance(text, str):
                        loads(text.encode())
            connection.close()
        else:
            for file in sorted(path.glob("*.npz")):
                with np.load(file, allow_pickle=False) as data:
                    for name in RECORDER_ARRAYS:
                        data[name]
        return time.process_time() - started

    def fast(raw: bytes) -> object:
        value = quick(raw)
        return json.loads(raw) if value is UNSURE else value

    return parse_all(fast), parse_all(json.loads)


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def child(source: str, path: str, out: str, workers: int, stages: bool) -> dict:
    """One measurement (in a fresh process): the floors, then the import."""
    from workbench.data.importers.pipeline import import_into

    floor, json_floor = parse_floor(source, Path(path))
    if stages:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
    cpu = _cpu()
    started = time.perf_counter()
    report = import_into(source, path, out, workers=workers, progress=False)
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    result = {
        "cpu": cpu,
        "decisions": report.decisions,
        "episodes": report.episodes,
        "errors": len(report.errors),
        "seconds": seconds,
        "floor": floor,
        "json_floor": json_floor,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }
    if stages:
        profile.disable()
        stats = pstats.Stats(profile).stats
        cumulative: dict[str, float] = {}
        for (file, _, name), (_, _, _, cum, _) in stats.items():
            key = f"{Path(file).stem}.{name}"
            cumulative[key] = max(cumulative.get(key, 0.0), cum)
        wanted = {
            "parse (orjson, json where unsure)": "jsonsafe.quick",
            "text observations": "observations.text_observation",
            "tool calls": "toolcalls.played_actions",
            "counts estimated": "counts.estimated_counts",
            "counts estimated (a task at once)": "counts.estimated_counts_each",
            "trace rows fetched": "trace_db.rows",
            "trace JSON columns": "jsonsafe.loads",
            "trace call_records (kept fields + depth)": "trace_columns.call_records",
            "  of which msgspec's read and the depth proof": "jsonfields.first_fields",
            "Recorder arrays read": "crafter_recorder._read_recorder_arrays",
            "episode checked storable": "batch.unstorable",
            "episodes checked storable (a task)": "batch.storable_texts",
            "episodes kept (ids)": "batch.keep_items",
            "parts written": "columnar.append",
            "parts committed": "columnar.commit_staged",
        }
        result["stages"] = {label: cumulative.get(key, 0.0) for label, key in wanted.items()}
    return result


def measure(source: str, path: Path, workers: int, scratch: Path, stages: bool = False, package: Path = REPO) -> dict:
    """One fresh process's measurement, importing with the ``workbench`` package of the checkout ``package``."""
    out = scratch / f"out-{source}-{workers}"
    shutil.rmtree(out, ignore_errors=True)
    call = f"b.child({source!r}, {str(path)!r}, {str(out)!r}, {workers}, {stages!r})"
    code = (
        f"import json, sys; sys.path[:0] = [{str(package.resolve())!r}, {str(HERE)!r}]; "
        f"import bench_ingest as b; print(json.dumps({call}))"
    )
    # The workers (spawned) find the same package through PYTHONPATH.
    env = {**os.environ, "PYTHONPATH": str(package.resolve())}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env)
    shutil.rmtree(out, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Make the sources, measure each size and worker count, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--sources", nargs="+", default=list(MAKERS), choices=list(MAKERS))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stages", action="store_true", help="profile the stages of one 1-worker import a source")
    parser.add_argument("--scratch", type=Path, default=None, help="where sources are made (default: a temp folder)")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="also import with the package of this checkout (e.g. main's), in turn with this one",
    )
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}", flush=True)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    rows = []
    try:
        for source in args.sources:
            for size in args.sizes:
                path = scratch / (f"{source}-{size}" + (".db" if source == "traces" else ""))
                made = MAKERS[source](path, size)
                if args.stages:
                    found = measure(source, path, 1, scratch, stages=True)
                    print(
                        f"\n{source}, {found['decisions']} decisions, 1 worker: {found['seconds']:.2f} s "
                        f"(profiled), floor {found['floor']:.2f} s",
                        flush=True,
                    )
                    for label, seconds in found["stages"].items():
                        if seconds:
                            print(f"  {label:34s} {seconds:7.2f} s  {seconds / found['seconds']:5.0%}", flush=True)
                    (shutil.rmtree if path.is_dir() else Path.unlink)(path)
                    continue
                packages = [REPO] if args.baseline is None else [args.baseline, REPO]
                for workers in args.workers:
                    every: dict[Path, list[dict]] = {package: [] for package in packages}
                    for _ in range(args.repeats):  # in turn, so a drift of the load touches each alike
                        for package in packages:
                            every[package].append(measure(source, path, workers, scratch, package=package))
                    for package, runs in every.items():
                        rows.append(_row(source, made, workers, runs, baseline=package != REPO))
                (shutil.rmtree if path.is_dir() else Path.unlink)(path)
    finally:
        if args.scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"load after: {os.getloadavg()}")
    print(
        " ".join(
            f"{r['source'].replace(' (baseline)', '-baseline')}_{r['decisions']}_w{r['workers']}="
            f"{r['per_cpu']:.0f}/cpu-s,{r['ratio']:.2f}x"
            for r in rows
        )
    )


def _row(source: str, made: int, workers: int, runs: list[dict], *, baseline: bool) -> dict:
    """The medians of one source, size, worker count and package's runs, printed as a table row."""
    seconds = statistics.median(r["seconds"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    floor = statistics.median(r["floor"] for r in runs)
    json_floor = statistics.median(r["json_floor"] for r in runs)
    decisions = runs[0]["decisions"]
    row = {
        "source": source + (" (baseline)" if baseline else ""),
        "decisions": decisions,
        "made": made,
        "workers": workers,
        "seconds": seconds,
        "rate": decisions / seconds,
        "cpu": cpu,
        "per_cpu": decisions / cpu,
        "ratio": cpu / floor,
        "ratio_json": cpu / json_floor,
        "floor": floor,
        "rss_mb": max(r["rss_mb"] for r in runs),
        "worker_rss_mb": max(r["worker_rss_mb"] for r in runs),
        "errors": runs[0]["errors"],
        "load": os.getloadavg()[0],
    }
    print(
        f"| {row['source']} | {decisions:,} | {workers} | {seconds:.2f} s | {row['rate']:,.0f} | "
        f"{cpu:.2f} s | {row['per_cpu']:,.0f} | {row['ratio']:.1f}x ({floor:.2f} s) | "
        f"{row['ratio_json']:.1f}x | "
        f"{row['rss_mb']:.0f} / {row['worker_rss_mb']:.0f} MB | {row['load']:.1f} |",
        flush=True,
    )
    return row


if __name__ == "__main__":
    main()
