"""``workbench verify``: check imported rollouts against the reward their producer computed."""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.cli.common import CORPUS_HELP, read_config
from workbench.cli.errors import UsageError
from workbench.core.config_io.checks import checked
from workbench.core.config_io.locate import StepRewardsLocation
from workbench.util import jsonsafe

#: ``verify``'s exit status when it checked no decision at all (never a pass).
NOTHING_CHECKED = 3

VERIFY_EPILOG = """\
For every episode imported from task-app rollouts (`workbench import rollouts`), compares each
logged decision with the reward the loop that produced it computes (its producer, recorded at
import: `workbench corpus info` shows it):
  synth-ai 0.2.14          the full stepwise reward under the rollout's step_rewards config:
                           reward, base_reward, indicator, resource_reward, new and credited
                           achievements;
  synth-ai 0.2.16-0.2.24   indicator-only: reward = lambda x (1 if anything unlocked), lambda
                           omitted or 0 paying 0; reward, indicator and new achievements.
The config is the one the file logged (its request, or the 0.2.14 summary's echo); for episodes
whose file holds none (0.2.16-0.2.24 log no config), give the run's request with --request (the
rollout request JSON you posted) or its config with --config. Prints every decision that
differs, and what was checked and skipped.

An episode that follows another in one rollout (on_done = reset) has its first decision scored
against the previous episode's end, as the task app does (quirk 7 in the README). Text
observations carry no achievement counts: a per_achievement rollout logged every rise, so its
counts are rebuilt exactly; a consistent one logged none, so its counts are estimates (lower
bounds), said in the output and in each difference's note.

examples:
  workbench verify corpora/llm-rollouts
  workbench verify corpora/newer-rollouts --request request.json

exit status: 0 every checked decision reproduced, 1 some differ, 2 bad usage or unreadable
corpus, 3 nothing could be checked (the reason is printed: a check of nothing is no pass).
"""


#: The largest rollout request read: a request is a few KB, a saved response carrying one a few
#: MB; a bigger file is not one, and reading it whole would only cost memory.
MAX_REQUEST_BYTES = 64 * 2**20


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench verify`` to ``subparsers``."""

    parser = subparsers.add_parser(
        "verify",
        help="check imported rollouts: does re-scoring reproduce the rewards the task app logged?",
        description="Re-score imported task-app rollouts as their producer did and list every decision "
        "whose logged stepwise reward is not reproduced.",
        epilog=VERIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--request",
        metavar="FILE",
        type=Path,
        help="the rollout request (JSON) the run posted: its step_rewards table (policy.config first, "
        "then env.config) for episodes whose log holds none",
    )
    given.add_argument(
        "--config",
        metavar="FILE",
        help="the step_rewards config the run used (our YAML or a synth-ai TOML), for episodes whose log holds none",
    )
    parser.set_defaults(func=run_verify)


def request_table(path: Path) -> dict[str, Any]:
    """The step_rewards table of a rollout request file, read as the task app reads it:
    ``policy.config.step_rewards`` when non-empty, else ``env.config.step_rewards``. Raises
    ``UsageError`` naming the file (and the keys looked at) when it has none."""
    try:
        request = jsonsafe.loads(_request_bytes(path))  # a depth limit: junk is one line, not a traceback
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise UsageError(f"{path}: not a readable JSON rollout request ({error})") from None
    if isinstance(request, Mapping) and isinstance(request.get("request"), Mapping):
        request = request["request"]  # a saved response that carries its request
    for section in ("policy", "env"):
        part = request.get(section) if isinstance(request, Mapping) else None
        config = part.get("config") if isinstance(part, Mapping) else None
        table = config.get("step_rewards") if isinstance(config, Mapping) else None
        if isinstance(table, Mapping) and table:
            # The config readers' checks: 1e400 (read as inf) or NaN is refused, not scored.
            return checked(table, StepRewardsLocation("task-app", (section, "config", "step_rewards")), str(path))
    raise UsageError(f"{path}: no step_rewards table at policy.config.step_rewards or env.config.step_rewards")


def _request_bytes(path: Path) -> bytes:
    """The request file's bytes: a regular file of at most ``MAX_REQUEST_BYTES``, opened without
    blocking (a FIFO would hang the read, ``/dev/zero`` never end). Raises ``UsageError``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise UsageError(f"{path}: cannot open the rollout request ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{path}: not a regular file (a folder, FIFO or device); expected a rollout request JSON")
        if info.st_size > MAX_REQUEST_BYTES:
            raise UsageError(f"{path}: {info.st_size} bytes; a rollout request is at most {MAX_REQUEST_BYTES} bytes")
        data = handle.read(MAX_REQUEST_BYTES + 1)  # the file may grow after the fstat
    if len(data) > MAX_REQUEST_BYTES:
        raise UsageError(f"{path}: more than {MAX_REQUEST_BYTES} bytes; a rollout request is at most that")
    return data


def run_verify(args: argparse.Namespace) -> int:
    """Print what verify checked and every decision that differs; exit status 1 when some
    differ, ``NOTHING_CHECKED`` when nothing could be checked."""
    import pandas as pd

    from workbench.data.importers.producers import INDICATOR, WEIGHTS_IGNORED
    from workbench.data.opening import open_corpus
    from workbench.scoring import verify

    table, source = None, "given"
    if args.request is not None:
        table, source = request_table(args.request), f"--request {args.request}"
    elif args.config is not None:
        table, source = read_config(args.config).to_dict(), f"--config {args.config}"
    corpus = open_corpus(args.corpus)
    result = verify(corpus, table, source)
    print(
        f"checked {result.decisions_checked} logged decision(s) in {result.episodes_checked} episode(s); "
        f"{len(result.skipped)} episode(s) skipped, {len(result.unchecked)} decision(s) not checked"
    )
    for producer, count in result.producers.items():
        print(f"  {count} decision(s) checked against the reward of {producer}")
    if table is not None:
        print(f"  config for episodes whose log holds none: {source}")
    for reason, count in pd.Series(result.skipped, dtype=object).value_counts().items():
        print(f"  skipped {count} episode(s): {reason}")
    for reason, count in pd.Series([u[2] for u in result.unchecked], dtype=object).value_counts().items():
        print(f"  not checked {count} decision(s): {reason}")
    if result.carried_over:
        print(f"  {len(result.carried_over)} episode(s) scored from the previous episode's end (quirk 7)")
    if result.weights_ignored:
        print(
            f"  {WEIGHTS_IGNORED}: {len(result.weights_ignored)} episode(s) ran with a per_achievement table; "
            "their producer paid lambda x any unlock"
        )
    estimated = int((corpus.index["counts"] == "estimated").sum())
    if estimated and any(p != INDICATOR.name for p in result.producers):
        print(
            f"  {estimated} episode(s) have estimated achievement counts (text observations, no logged rises): "
            "their count shaping is a lower bound"
        )
    reason = result.nothing_checked
    if reason is not None:
        print(f"nothing verified: {reason}")
        return NOTHING_CHECKED
    mismatches = result.mismatches
    if mismatches.empty:
        print("every logged decision reproduced")
        return 0
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_colwidth", 80):
        print(f"\n{len(mismatches)} decision(s) differ:")
        print(mismatches.to_string(index=False))
    return 1
