"""The ``workbench`` command line.

Each command group lives in its own module with a ``register(subparsers)`` function that adds
its parser and sets ``func`` (the handler, returning an exit code). Usage errors and unreadable
input exit 2 with one line on stderr; a finding that should fail a script exits 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from workbench.cli import config_cmd, corpus_cmd, import_cmd, record_cmd, score_cmd
from workbench.cli.errors import UsageError

#: Command groups, in the order ``--help`` lists them.
COMMAND_MODULES = [config_cmd, record_cmd, import_cmd, corpus_cmd, score_cmd]


def build_parser() -> argparse.ArgumentParser:
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
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as error:
        print(f"workbench: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        return 130
