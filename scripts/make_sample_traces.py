"""Write ``workbench/data/shipped/sample_imports/traces/synth_ai.db``: a synth-ai trace database
made by the real task-app server, which tutorial 05 and docs/importing-rollouts.md import.

Usage, from the repository root (serves synth-ai 0.2.14's task app from its cached venv, the one
the ``taskapp`` tests build, with the tests' stand-in model answering its policy)::

    PYTHONPATH=$PWD .venv/bin/python scripts/make_sample_traces.py --overwrite

It runs the two loosely answered cases of ``tests/taskapp/cases.py`` (tool calls named after
actions with JSON-string arguments, empty lists, unknown names, integer ids, more than 20
actions; every form within 8 decisions) for ``--decisions`` and ``--decisions // 2 + 1``
decisions with tracing on, then copies the database compacted
(``VACUUM INTO``) so it stays well under 1 MB. The responses are kept beside it as
``responses/<case>.json`` so the trace import can be compared with the JSON import.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from taskapp.cases import CASES  # noqa: E402 - the tests' helpers, found through the path above
from taskapp.produce import produce  # noqa: E402

DEFAULT_OUT = ROOT / "workbench" / "data" / "shipped" / "sample_imports" / "traces"
MAX_BYTES = 1_000_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder to write synth_ai.db into")
    parser.add_argument("--decisions", type=int, default=8, help="decisions of the first rollout")
    parser.add_argument("--overwrite", action="store_true", help="replace what --out holds")
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()) and not args.overwrite:
        parser.error(f"{args.out} is not empty; pass --overwrite to replace it")
    loose = [c for c in CASES if c.name.startswith("loose")]
    cases = [
        dataclasses.replace(c, decisions=args.decisions if k == 0 else args.decisions // 2 + 1)
        for k, c in enumerate(loose)
    ]
    with tempfile.TemporaryDirectory(prefix="sample-traces-") as work:
        work_dir = Path(work)
        (work_dir / "server").mkdir()
        produced = produce(work_dir / "responses", work_dir / "server", cases, trace=work_dir / "trace")
        assert produced.trace_db is not None
        if args.out.exists():
            shutil.rmtree(args.out)
        (args.out / "responses").mkdir(parents=True)
        target = args.out / "synth_ai.db"
        source = sqlite3.connect(f"file:{produced.trace_db}?mode=ro", uri=True)
        try:
            source.execute("VACUUM INTO ?", (str(target),))
        finally:
            source.close()
        for name, path in produced.files.items():
            shutil.copy2(path, args.out / "responses" / f"{name}.json")
    size = target.stat().st_size
    print(f"wrote {target} ({size / 1e3:.0f} kB, {len(cases)} sessions of {[c.decisions for c in cases]} decisions)")
    if size > MAX_BYTES:
        print(f"warning: larger than {MAX_BYTES / 1e6:.0f} MB: pass fewer --decisions", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
