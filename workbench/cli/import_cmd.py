"""``workbench import``: turn crafter.Recorder files or task-app rollouts into a corpus folder."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from workbench.cli.common import add_cluster_argument, cluster_client
from workbench.cli.errors import UsageError

EXAMPLE = """\
examples:
  workbench import recorder logdir/ --out corpora/ppo        # crafter.Recorder's *.npz files
  workbench import rollouts rollouts.jsonl --out corpora/llm  # task-app rollout responses
  workbench import traces traces/v3/synth_ai.db --into corpora/llm --config my_run.toml
                                                              # synth-ai's trace database

  workbench import rollouts runs/ --out corpora/llm --workers 2   # two processes read the files
  workbench import rollouts runs/ --out corpora/llm --cluster local:4

  Episodes are added to --out (a new or existing corpus folder); an id already there is an error
  unless --overwrite. Bad files or lines are reported (file, line/step, problem) and skipped; the
  rest is saved, in parts of about 50,000 decisions (memory holds one part, not the run) that
  commit together at the end: an import that fails or is stopped (Ctrl-C, disk full, unwritable
  folder) leaves --out as it was.
  A trace database imports incrementally: sessions --out already holds are skipped (unless
  --overwrite), and sessions still running are left for a later import.

exit status: 0 everything imported, 1 some input could not be imported, 2 bad usage.
"""

#: Each source (``import_into`` reads it with its importer, imported when the command runs,
#: not at start-up) and what it is.
SOURCES: dict[str, str] = {
    "recorder": "a folder (or one .npz) written by crafter.Recorder",
    "rollouts": "task-app rollout responses: a .json, a .jsonl or a folder of them",
    "traces": "a synth-ai trace database (task-app serve --trace): its finished sessions",
}


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench import recorder|rollouts`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "import",
        help="import episodes recorded elsewhere (crafter.Recorder files, task-app rollouts, synth-ai trace databases)",
        description="Import episodes recorded elsewhere into a workbench corpus folder.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sources = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)
    for name, what in SOURCES.items():
        sub = sources.add_parser(
            name,
            help=what,
            description=f"Import {what}.",
            epilog=EXAMPLE,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument("path", metavar="PATH", help=what)
        sub.add_argument("--out", "--into", dest="out", required=True, metavar="DIR", help="corpus folder to save into")
        sub.add_argument(
            "--overwrite", action="store_true", help="replace episodes --out already holds under the same ids"
        )
        sub.add_argument("--quiet", action="store_true", help="no progress bar")
        sub.add_argument(
            "--workers",
            type=_positive,
            default=1,
            metavar="N",
            help="worker processes reading the input in parallel (default 1)",
        )
        add_cluster_argument(sub)
        if name != "recorder":
            sub.add_argument(
                "--producer",
                metavar="synth-ai==X",
                help="the synth-ai release that produced the input (0.2.14, or 0.2.16 ... 0.2.24); "
                "default: told from its shape",
            )
        if name == "traces":
            sub.add_argument(
                "--config",
                metavar="FILE",
                help="the step_rewards config the rollouts ran with (the database does not hold it); "
                "kept in each episode's metadata",
            )
        sub.set_defaults(func=partial(run, name))


def run(source: str, args: argparse.Namespace) -> int:
    """Import ``source`` into ``--out`` (``import_into``: in parts that commit together, on
    ``--workers`` processes or ``--cluster``), print the report; exit status 1 when some input failed."""
    from workbench.data.importers.pipeline import import_into
    from workbench.data.opening import index_errors_named
    from workbench.data.storage import MARKER, episode_ids_by_part

    if not Path(args.path).exists():
        raise UsageError(f"{args.path}: no such file or folder")
    if args.cluster and args.workers > 1:
        raise UsageError("--workers and --cluster: pick one (a cluster's workers are its own)")
    out = Path(args.out)
    if (out / MARKER).exists():  # read first: a broken index is named before anything is read or written
        with index_errors_named(out):
            held = {i for ids in episode_ids_by_part(out).values() for i in ids}
    else:
        held = set()
    options = _trace_options(source, args, held)
    with cluster_client(args.cluster) as client:
        mapper = None
        if client is not None:
            from workbench.cluster import import_mapper  # imports dask: only with --cluster

            mapper = import_mapper(client)
        report = import_into(
            args.source,
            args.path,
            out,
            overwrite=args.overwrite,
            workers=args.workers,
            mapper=mapper,
            progress=not args.quiet,
            producer=getattr(args, "producer", None),
            hint="--overwrite",
            **options,
        )
    print(report)
    if report.episodes:
        print(f"saved {report.episodes} episode(s) to {args.out}")
    return 1 if report.errors else 0


def _trace_options(source: str, args: argparse.Namespace, held: set[str]) -> dict:
    """The trace import's options: ``--config`` read as a step_rewards table, and the ids the
    corpus already holds (``held``) skipped (importing the same database again adds only new
    sessions), unless ``--overwrite`` asks to read them all again (e.g. with another ``--config``)."""
    from workbench.core.config import RewardConfig

    if source != "traces":
        return {}
    config = RewardConfig.from_file(args.config).to_dict() if args.config else None
    return {"config": config, "skip": set() if args.overwrite else held}
