"""``workbench record``: play a policy in Crafter and save the episodes as a corpus folder."""

from __future__ import annotations

import argparse

from workbench.cli.common import add_cluster_argument, recording_scheduler

EXAMPLE = """\
example:
  workbench record --policy scripted --episodes 8 --seed 0 --actions-per-decision 1 \\
      --max-steps 600 --workers 2 --out corpora/scripted

  Episode ids are <policy>-s<seed>-<NNNNN>; the same command records the same worlds.
  Each finished episode is saved at once, so an interrupted run keeps what finished:
  run the same command with --resume to record the rest. SIGTERM stops a run as Ctrl-C does.
  A policy that does not answer a decision within --decision-timeout fails only that episode.

  workbench record --policy random --episodes 1000 --cluster local:2 --out corpora/random
  workbench record --policy random --episodes 1000 --cluster tcp://head:8786 --out /shared/corpora/random

  With --cluster every episode is one Dask task; this process writes each finished episode, and
  a lost worker's episodes are run again on another worker.

exit status: 0 all recorded, 1 some episodes failed (the report says why), 2 bad usage or a folder
that cannot be written (disk full), 130 stopped by Ctrl-C or SIGTERM (finished episodes kept).
"""


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0 (0: no limit), got {text}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench record`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "record",
        help="record Crafter episodes played by a policy into a corpus folder",
        description="Play a policy in fresh Crafter worlds and save every episode (states, actions, "
        "Crafter's reward and frames) to a corpus folder the workbench scores and replays.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--policy",
        required=True,
        metavar="POLICY",
        help="random, scripted, farmer, or module:function (a factory(rng) -> policy)",
    )
    parser.add_argument("--episodes", required=True, type=_positive, metavar="N", help="how many episodes")
    parser.add_argument("--out", required=True, metavar="DIR", help="corpus folder to create (or resume)")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="corpus seed; episode worlds derive from (S, episode number) (default 0)",
    )
    parser.add_argument(
        "--actions-per-decision",
        type=_positive,
        default=1,
        metavar="K",
        help="most actions the policy may return per decision (default 1)",
    )
    parser.add_argument(
        "--max-steps",
        type=_positive,
        default=10000,
        metavar="L",
        help="episode length limit in env steps, Crafter's `length` (default 10000)",
    )
    parser.add_argument(
        "--workers", type=_positive, default=1, metavar="W", help="worker processes recording in parallel (default 1)"
    )
    parser.add_argument(
        "--no-frames",
        action="store_true",
        help="do not store frames: ~20 bytes a step instead of 1-2 KB, but nothing to watch in replays",
    )
    parser.add_argument(
        "--decision-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="fail an episode whose policy takes longer than this to answer one decision (default 60; 0: no limit)",
    )
    parser.add_argument("--resume", action="store_true", help="skip episodes already in --out and record the rest")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_cluster_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Record the episodes and print the report; exit status 1 when some episode failed."""
    from workbench.data.recording import DEFAULT_DECISION_TIMEOUT, record  # imports Crafter: only when recording

    with recording_scheduler(args.cluster, args.workers) as scheduler:
        report = record(
            args.policy,
            args.episodes,
            args.out,
            seed=args.seed,
            actions_per_decision=args.actions_per_decision,
            max_steps=args.max_steps,
            workers=args.workers,
            frames=not args.no_frames,
            resume=args.resume,
            progress=not args.quiet,
            decision_timeout=DEFAULT_DECISION_TIMEOUT if args.decision_timeout is None else args.decision_timeout,
            scheduler=scheduler,
        )
    print(report)
    return 1 if report.failed else 0
