"""Does ``workbench watch`` keep up with a fast writer? 2,000 decisions/s for 60 s, into rollout files and a trace database.

    .venv/bin/python benchmarks/bench_watch_ingest.py                      # both sources, 60 s each
    .venv/bin/python benchmarks/bench_watch_ingest.py --seconds 20 --sources traces

For each source a writer (``tests/helpers/live_writers.py``: copies of the real fixtures under new
run ids) produces ``--rate`` decisions a second for ``--seconds``:

- ``rollouts``: every 0.5 s a new JSONL file of task-app responses in a folder;
- ``traces``: every 0.1 s one transaction adding finished sessions (outcome rows included) to a
  synth-ai 0.2.24 trace database, waiting at most 5 s for a lock as synth-ai's server does.

``workbench watch SOURCE --into CORPUS --config configs/recommended.yaml --interval 0.5`` follows
it in its own process; each line it prints for an appended episode (after the save and the
episode's score: what a person sees) is timestamped as it arrives. Painted latency is that time
less the moment the writer's file closed or its transaction committed. After the writer stops
the watcher gets 30 s to catch up; then the corpus is opened and checked: every written run in
it once, nothing else. For the trace database the writer's transaction times are compared with
the same writer's without a watcher (run first): the watcher's reads must not hold it up. The
watcher's CPU time from the first write until it caught up (``/proc``) gives the decisions it
handles per CPU second: the rate it keeps up with on a core of its own.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.live_writers import new_trace_db, write_rollouts, write_sessions  # noqa: E402

from workbench.data.storage import load_corpus  # noqa: E402

CONFIG = REPO / "configs" / "recommended.yaml"
RUN = re.compile(r"^\+ \S*?(w\d{6})")


def follow(source: Path, into: Path) -> tuple[subprocess.Popen, dict[str, float], list[str]]:
    """Start ``workbench watch`` on ``source``; a thread timestamps each appended run's line."""
    watcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench",
            "watch",
            str(source),
            "--into",
            str(into),
            "--config",
            str(CONFIG),
            "--interval",
            "0.5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    painted: dict[str, float] = {}
    repeats: list[str] = []

    def read() -> None:
        assert watcher.stdout is not None
        for line in watcher.stdout:
            found = RUN.match(line)
            if found:
                if found.group(1) in painted:
                    repeats.append(found.group(1))
                painted.setdefault(found.group(1), time.time())

    threading.Thread(target=read, daemon=True).start()
    return watcher, painted, repeats


def _cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run(kind: str, rate: float, seconds: float, scratch: Path) -> dict:
    source = scratch / ("rollouts" if kind == "rollouts" else "traces.db")
    baseline = None
    if kind == "traces":
        new_trace_db(scratch / "alone.db")
        baseline = write_sessions(scratch / "alone.db", rate, seconds)
        new_trace_db(source)
    else:
        source.mkdir()
    into = scratch / f"corpus-{kind}"
    watcher, painted, repeats = follow(source, into)
    time.sleep(3.0)  # the watcher's start-up (imports) before the first write
    started_cpu = _cpu_seconds(watcher.pid)
    written = write_rollouts(source, rate, seconds) if kind == "rollouts" else write_sessions(source, rate, seconds)
    deadline = time.time() + 30
    while time.time() < deadline and len(painted) < len(written.landed):
        time.sleep(0.2)
    caught_up = time.time()
    cpu = _cpu_seconds(watcher.pid) - started_cpu
    watcher.send_signal(signal.SIGINT)
    try:
        watcher.wait(timeout=30)
    except subprocess.TimeoutExpired:
        watcher.kill()
    latencies = [painted[r] - t for r, t in written.landed.items() if r in painted]
    ids = list(load_corpus(into).ids) if into.exists() else []
    runs = [RUN.match("+ " + i).group(1) for i in ids]  # type: ignore[union-attr]
    result = {
        "kind": kind,
        "runs": len(written.landed),
        "decisions": written.decisions,
        "painted": len(painted),
        "repeats": len(repeats),
        "saved": len(ids),
        "saved_once": len(set(runs)) == len(runs) and set(runs) == set(written.landed),
        "p50": percentile(latencies, 0.5),
        "p95": percentile(latencies, 0.95),
        "max": max(latencies, default=float("nan")),
        "within_2s": sum(latency <= 2.0 for latency in latencies) / max(1, len(written.landed)),
        "catch_up": caught_up - max(written.landed.values()),
        "cpu": cpu,
        "write_max": max(written.write_seconds),
        "write_p99": percentile(written.write_seconds, 0.99),
        "alone_max": max(baseline.write_seconds) if baseline else None,
        "alone_p99": percentile(baseline.write_seconds, 0.99) if baseline else None,
        "stderr": watcher.stderr.read()[-500:] if watcher.stderr else "",
    }
    return result


def main() -> None:
    """Run each source and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=2000.0, help="decisions a second (default 2000)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the writer writes (default 60)")
    parser.add_argument("--sources", nargs="+", default=["rollouts", "traces"], choices=["rollouts", "traces"])
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}", flush=True)
    rows = []
    for kind in args.sources:
        with tempfile.TemporaryDirectory(prefix="bench-watch-") as scratch:
            found = run(kind, args.rate, args.seconds, Path(scratch))
        rows.append(found)
        alone = (
            f"{found['write_p99'] * 1000:.0f} / {found['write_max'] * 1000:.0f} ms "
            f"(alone {found['alone_p99'] * 1000:.0f} / {found['alone_max'] * 1000:.0f} ms)"
            if found["alone_max"] is not None
            else f"{found['write_p99'] * 1000:.0f} / {found['write_max'] * 1000:.0f} ms"
        )
        print(
            f"| {kind} | {found['runs']:,} runs, {found['decisions']:,} decisions | {found['painted']:,} painted, "
            f"{found['saved']:,} saved, once each: {found['saved_once']}, repeats {found['repeats']} | "
            f"{found['p50']:.2f} / {found['p95']:.2f} / {found['max']:.2f} s | {found['within_2s']:.1%} | "
            f"{found['catch_up']:.1f} s | {found['cpu']:.1f} s ({found['decisions'] / found['cpu']:,.0f} decisions "
            f"per CPU second) | {alone} | {os.getloadavg()[0]:.1f} |",
            flush=True,
        )
        if found["stderr"].strip():
            print("watcher stderr:", found["stderr"], flush=True)
    print(f"load after: {os.getloadavg()}")
    print(" ".join(f"{r['kind']}_p95={r['p95']:.2f}s {r['kind']}_within2s={r['within_2s']:.3f}" for r in rows))


if __name__ == "__main__":
    main()
