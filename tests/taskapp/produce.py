"""Run every case against the real task app and save each response as ``<case>.json``.

Used by ``tests/test_taskapp.py`` and, as a script, to (re)make ``workbench/data/shipped/sample_imports/taskapp``:

    PYTHONPATH=tests .venv/bin/python -m taskapp.produce OUT_DIR [--decisions N]
    PYTHONPATH=tests .venv/bin/python -m taskapp.produce OUT_DIR --version 0.2.24 --decisions 12  # traced into OUT_DIR/trace
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from taskapp.cases import CASES, NEWEST_CASES, Case, post_rollout, save_json
from taskapp.server import TRACE_DB, TaskAppServer, lay_out_app_folder, start_task_app
from taskapp.standin import StandIn
from taskapp.venv import NEWEST, VERSION, TaskAppVenv, ensure_venv

STANDIN_SEED = 2026


@dataclass
class Produced:
    """What one run produced: the saved files by case, the requests and the timings."""

    files: dict[str, Path]
    requests: dict[str, dict]
    seconds: dict[str, float]  # "venv_build", "server_start", "rollout:<case>"
    standin_calls: list[dict]
    server_log: str  # what ``synth-ai task-app serve`` printed
    trace_db: Path | None = None  # the server's trace database, when it ran with tracing


@contextmanager
def running_task_app(
    venv: TaskAppVenv, folder: Path, trace: Path | None = None, version: str = VERSION
) -> Iterator[TaskAppServer]:
    """The task app of synth-ai ``version`` served from ``folder`` (tracing into ``trace`` when
    given); stopped (with its children) on exit, also on error."""
    lay_out_app_folder(venv, folder)
    server = start_task_app(venv, folder, trace=trace, version=version)
    try:
        yield server
    finally:
        server.stop()


def produce(
    out_dir: Path,
    work_dir: Path,
    cases: Sequence[Case] = CASES,
    venv: TaskAppVenv | None = None,
    trace: Path | None = None,
    version: str = VERSION,
) -> Produced:
    """Serve the task app (from ``venv``, else the cached one, built when missing) from
    ``work_dir`` (tracing into ``trace`` when given), post every case with the stand-in answering
    the policy's calls, and save the responses into ``out_dir``. Raises what ``ensure_venv`` and
    ``start_task_app`` raise."""
    seconds: dict[str, float] = {}
    venv = venv or ensure_venv(version=version)
    if venv.build_seconds is not None:
        seconds["venv_build"] = venv.build_seconds
    standin = StandIn(seed=STANDIN_SEED).start()
    files: dict[str, Path] = {}
    requests: dict[str, dict] = {}
    try:
        started = time.monotonic()
        with running_task_app(venv, work_dir, trace, version) as server:
            seconds["server_start"] = time.monotonic() - started
            for case in cases:
                request = case.request(standin.inference_url(f"trace_{case.name}"))
                response, took = post_rollout(server.base_url, request)
                seconds[f"rollout:{case.name}"] = took
                requests[case.name] = request
                files[case.name] = save_json(out_dir / f"{case.name}.json", response)
    finally:
        standin.stop()
    log = (work_dir / "task_app.log").read_text(encoding="utf-8", errors="replace")
    trace_db = trace / TRACE_DB if trace is not None else None
    return Produced(files, requests, seconds, list(standin.calls), log, trace_db)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--decisions", type=int, default=None, help="override every case's max_llm_calls")
    parser.add_argument("--version", default=VERSION, help=f"synth-ai release to serve ({VERSION} or {NEWEST})")
    parser.add_argument("--trace", type=Path, default=None, help="trace into this folder (its synth_ai.db)")
    args = parser.parse_args(argv)
    chosen = CASES if args.version == VERSION else NEWEST_CASES
    cases = [dataclasses.replace(c, decisions=args.decisions) if args.decisions else c for c in chosen]
    trace = args.trace or (None if args.version == VERSION else args.out_dir / "trace")
    with tempfile.TemporaryDirectory(prefix="taskapp-") as work:
        produced = produce(args.out_dir, Path(work), cases, trace=trace, version=args.version)
    save_json(args.out_dir / "requests.txt", produced.requests)  # .txt: importers read only .json/.jsonl
    print(json.dumps({name: str(path) for name, path in produced.files.items()}, indent=1))
    print(json.dumps(produced.seconds, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
