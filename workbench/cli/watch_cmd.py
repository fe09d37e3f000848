"""``workbench watch``: append each new episode of a live source (a run still going) into a corpus folder."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TYPE_CHECKING

from workbench.cli.common import read_named_configs
from workbench.cli.errors import UsageError
from workbench.data.source_kinds import KINDS

if TYPE_CHECKING:
    from workbench.data.watch import WatchReport
    from workbench.scoring import LiveScores

EXAMPLE = """\
examples:
  workbench watch runs/rollouts --into corpora/live            # a folder rollout JSON files land in
  workbench watch logdir --kind recorder --into corpora/ppo    # crafter.Recorder's .npz files
  workbench watch corpora/recording --into corpora/live --config configs/recommended.yaml
  workbench watch runs/rollouts --into corpora/live --once     # what is complete now, e.g. from cron
  workbench watch traces/synth_ai.db --into corpora/live       # a task app's trace database
  workbench watch runs/new --into corpora/live                 # empty or missing: waits for the first file

  Started before the run, on a folder that is missing or empty, it waits and tells SOURCE's
  kind from the first file that lands (and says so once).

  A file is taken once complete: its size and mtime unchanged across two polls, and it reads
  cleanly; one that stays unchanged and unreadable is reported (file, line, problem) and the
  watch goes on. Each episode is appended once, also across restarts (the corpus remembers
  where its episodes came from; progress is in CORPUS/watch-state.json). SOURCE is only read.
  With --config, each new episode's shaped return under each config is printed as it lands.

exit status: 0 watched (until --once, --max-polls or Ctrl-C), 1 some input could not be read,
2 bad usage or unreadable input.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench watch`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "watch",
        help="follow a run while it trains: append each new episode of a live source into a corpus",
        description="Follow a live source (rollout files, crafter.Recorder files, a corpus being recorded, "
        "a synth-ai trace database) "
        "and append each new episode into a corpus folder, once.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source_arguments(parser, positional=True)
    parser.add_argument(
        "--into", required=True, metavar="CORPUS", help="corpus folder to append into (made if missing)"
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="also print each new episode's shaped return under this config (repeatable)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only problems and the final count")
    parser.set_defaults(func=run)


def add_source_arguments(parser: argparse.ArgumentParser, *, positional: bool) -> None:
    """SOURCE (or --follow SOURCE) with --kind, --interval, --once and --max-polls (shared with audit)."""
    kinds = "; ".join(f"{name}: {what}" for name, what in KINDS.items())
    if positional:
        parser.add_argument("source", metavar="SOURCE", help="what to follow (its kind is told from the path)")
    parser.add_argument("--kind", choices=list(KINDS), help=f"the kind of SOURCE, when the path cannot tell ({kinds})")
    parser.add_argument(
        "--interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="seconds between polls (default 1.0; file events wake it sooner when watchfiles is installed)",
    )
    parser.add_argument(
        "--once",
        action="store_true",
        help="read what is complete now and exit (polls until no new file is still settling)",
    )
    parser.add_argument("--max-polls", type=int, metavar="N", help="stop after N polls")


#: --once polls until nothing is settling (a new file needs two polls to be known complete), at most this often.
ONCE_POLLS = 20


def polls_limit(args: argparse.Namespace) -> int | None:
    """The number of polls ``--once`` / ``--max-polls`` allow (None: until interrupted)."""
    if args.interval <= 0:
        raise UsageError(f"--interval must be positive, not {args.interval}")
    if args.max_polls is not None and args.max_polls < 1:
        raise UsageError(f"--max-polls must be at least 1, not {args.max_polls}")
    return ONCE_POLLS if args.once else args.max_polls


def run(args: argparse.Namespace) -> int:
    """Watch until --once / --max-polls / Ctrl-C; exit 1 when some input could not be read."""
    from workbench.data.episodes import Corpus  # the watchers and scores: imported when a command runs
    from workbench.data.watch import Watcher, open_source
    from workbench.scoring import LiveScores
    from workbench.util.processes import signals_set

    limit = polls_limit(args)
    configs = read_named_configs(args.config)
    source = open_source(args.source, args.kind)
    live = LiveScores(Corpus(), configs) if configs else None
    counts = {"problems": 0, "appended": 0}

    def report(found: WatchReport) -> bool:
        counts["problems"] += len(found.problems)
        counts["appended"] += len(found.appended)
        for issue in found.problems:
            print(f"problem: {issue}", file=sys.stderr, flush=True)
        if not args.quiet:
            for note in found.notes:
                print(note, flush=True)
            print_appended(found, live)
        return bool(args.once and not found.settling)

    with Watcher(source, args.into, on_append=None if live is None else live.append) as watcher:
        if not args.quiet:
            kind = source.kind if source.kind in KINDS else "its kind told by the first file that lands"
            print(f"watching {source.path} ({kind}) into {args.into}; {watcher.held} episode(s) held", flush=True)
        stop = threading.Event()
        try:  # Ctrl-C (or SIGTERM) ends the run at once, after the poll under way is saved
            with signals_set(stop):
                watcher.run(interval=args.interval, max_polls=limit, on_report=report, stop=stop)
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: what was appended is saved (each poll saves before it records progress)
    print(f"appended {counts['appended']} episode(s) into {args.into}; {counts['problems']} problem(s)", flush=True)
    return 1 if counts["problems"] else 0


def print_appended(found: WatchReport, live: LiveScores | None) -> None:
    """One line per appended episode: id, decisions, seconds from landing to saved, returns."""
    table = live.episodes() if live is not None and len(found.appended) else None
    for episode, latency in zip(found.appended, found.latency):
        line = f"+ {episode.id}  {episode.n_decisions} decisions  landed {latency:.2f}s ago"
        if table is not None:
            rows = table[table["episode"] == episode.id]
            line += "  " + "  ".join(f"{c}={r:.4g}" for c, r in zip(rows["config"], rows["return"]))
        print(line, flush=True)
