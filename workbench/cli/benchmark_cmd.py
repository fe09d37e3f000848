"""``workbench benchmark make``: record the labelled reward-hacking benchmark into a corpus folder."""

from __future__ import annotations

import argparse

from workbench.cli.common import add_cluster_argument, recording_scheduler
from workbench.cli.record_cmd import _positive

EXAMPLE = """\
example:
  workbench benchmark make --out corpora/benchmark --episodes 20 --max-steps 600 --workers 2
  workbench benchmark make --out corpora/benchmark --episodes 200 --cluster local:2

  Every roster policy (19 reward hackers, 8 honest players) plays the same --episodes worlds of
  corpus seed --seed; each episode carries its label and the decision spans where its loop ran
  (metadata benchmark_label, loop, loop_spans). The same command plays the same worlds with
  the same policy seeds (Crafter itself is not reproducible step for step, so later steps may
  differ); --resume continues an interrupted one. Load it with
  workbench.data.benchmarks.load_benchmark(DIR).

exit status: 0 all recorded, 1 some episodes failed, 2 bad usage, 130 stopped by Ctrl-C or SIGTERM.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench benchmark make`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "benchmark",
        help="make the labelled reward-hacking benchmark",
        description="The labelled Crafter reward-hacking benchmark (workbench.data.benchmarks).",
    )
    commands = parser.add_subparsers(dest="benchmark_command", metavar="COMMAND", required=True)
    make = commands.add_parser(
        "make",
        help="record every benchmark policy into a corpus folder, with labels and loop spans",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    make.add_argument("--out", required=True, metavar="DIR", help="corpus folder to create (or resume)")
    make.add_argument("--episodes", type=_positive, default=4, metavar="N", help="episodes per policy (default 4)")
    make.add_argument("--seed", type=int, default=0, metavar="S", help="corpus seed (default 0)")
    make.add_argument("--max-steps", type=_positive, default=400, metavar="L", help="episode length (default 400)")
    make.add_argument("--workers", type=_positive, default=1, metavar="W", help="worker processes (default 1)")
    make.add_argument("--policies", nargs="+", metavar="NAME", help="only these roster policies (default all)")
    make.add_argument("--frames", action="store_true", help="store frames too (1-2 KB a step instead of ~20 B)")
    make.add_argument("--resume", action="store_true", help="skip episodes already in --out and record the rest")
    make.add_argument("--quiet", action="store_true", help="no progress bars")
    add_cluster_argument(make)
    make.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Make the benchmark and print each policy's report; exit status 1 when an episode failed."""
    from workbench.data.benchmarks import make_benchmark  # imports Crafter: only when recording

    with recording_scheduler(args.cluster, args.workers) as scheduler:
        reports = make_benchmark(
            args.out,
            episodes=args.episodes,
            seed=args.seed,
            max_steps=args.max_steps,
            policies=args.policies,
            workers=args.workers,
            frames=args.frames,
            resume=args.resume,
            progress=not args.quiet,
            scheduler=scheduler,
        )
    for report in reports:
        print(report)
    return 1 if any(report.failed for report in reports) else 0
