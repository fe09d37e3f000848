"""The ``workbench`` command line.

Each command group lives in its own module with a ``register(subparsers)`` function that adds
its parser and sets ``func`` (the handler, returning an exit code). A user's mistake (bad usage,
unreadable input: any ``WorkbenchError``) exits 2 with one line on stderr; a finding that should
fail a script exits 1. Any other exception is a bug and surfaces with its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from workbench.cli import (
    advantages_cmd,
    app_cmd,
    audit_cmd,
    benchmark_cmd,
    certify_cmd,
    config_cmd,
    corpus_cmd,
    diagnose_cmd,
    exploitability_cmd,
    import_cmd,
    overoptimisation_cmd,
    record_cmd,
    report_cmd,
    score_cmd,
    search_cmd,
    verify_cmd,
    watch_cmd,
)
from workbench.errors import WorkbenchError
from workbench.util.memory import retain_freed_memory

#: Command groups, in the order ``--help`` lists them.
COMMAND_MODULES = [
    config_cmd,
    record_cmd,
    benchmark_cmd,
    import_cmd,
    corpus_cmd,
    score_cmd,
    verify_cmd,
    diagnose_cmd,
    advantages_cmd,
    certify_cmd,
    overoptimisation_cmd,
    audit_cmd,
    exploitability_cmd,
    report_cmd,
    watch_cmd,
    search_cmd,
    app_cmd,
]


def build_parser() -> argparse.ArgumentParser:
    """The ``workbench`` parser with every command group registered."""
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Crafter Reward Workbench: design, re-score and compare the synth-ai task app's "
        "shaped (stepwise) rewards on recorded Crafter episodes.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 a finding, 2 a user's mistake).
    The command line owns its process, so it opts into keeping freed memory for re-scoring
    (``workbench.util.memory``; ``WORKBENCH_RETAIN_FREED_MB=0`` declines)."""
    retain_freed_memory()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)  # --help writes to stdout too
        args.argv = list(sys.argv[1:] if argv is None else argv)  # a report's provenance names it
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # inside the try: a reader gone early is met here, not at exit
        return status
    except BrokenPipeError:
        return _reader_gone()
    except WorkbenchError as error:
        print(f"workbench: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        return 130


def _reader_gone() -> int:
    """The standard-output reader went away (``workbench audit --json | head -c1``): point
    stdout at /dev/null so the interpreter's flush at exit raises nothing (Python's "Note on
    SIGPIPE"), and exit 1 as a command killed by the broken pipe would fail its pipeline."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 1
