"""``workbench corpus info`` / ``events`` / ``check``: what a corpus folder holds; its events tables made and checked."""

from __future__ import annotations

import argparse
from pathlib import Path

EXAMPLE = """\
examples:
  workbench corpus info corpora/scripted
  workbench corpus events corpora/scripted     # parts written before events tables open ~3x faster
  workbench corpus check --deep corpora/scripted   # every events table re-derived from its decisions
  workbench corpus events --rebuild corpora/scripted

exit status: 0 done, 1 check found a table that disagrees with its source, 2 bad usage or unreadable corpus.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench corpus info`` and ``workbench corpus events`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "corpus",
        help="inspect a corpus folder",
        description="Inspect corpus folders.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    info = actions.add_parser("info", help="episodes, decisions and size on disk of a corpus folder")
    info.add_argument("path", metavar="DIR")
    info.set_defaults(func=run_info)
    events = actions.add_parser(
        "events",
        help="write the events table of each part that lacks a current one (older parts), so it opens faster",
        description=(
            "Give every part of a corpus folder a current events table: what scoring needs of its "
            "decisions, read on opening instead of decoding them. Parts written before events tables "
            "have none; a part whose decisions table changed has a stale one. Each is computed by the "
            "checked decisions read, under the writers' lock; other parts are left alone."
        ),
    )
    events.add_argument("path", metavar="DIR", help="a corpus folder")
    events.add_argument(
        "--rebuild", action="store_true", help="rewrite every part's events table from its decisions, current or not"
    )
    events.set_defaults(func=run_events)
    check = actions.add_parser(
        "check",
        help="check the derived tables (events, the episodes' totals) against the decisions they come from",
        description=(
            "Run every check of an open on each part and say whether its events table is used. With --deep, "
            "also re-derive each part's events from its decisions and compare them value by value: the only "
            "check that catches an events table edited with its digests recomputed. Exit 1 names each disagreement."
        ),
    )
    check.add_argument("path", metavar="DIR", help="a corpus folder")
    check.add_argument("--deep", action="store_true", help="re-derive every part's events from its decisions")
    check.set_defaults(func=run_check)


def run_info(args: argparse.Namespace) -> int:
    """Print a corpus folder's size and episodes, the loops that produced them (and whether one
    ignored the run's weights) and which have estimated counts; exit status 0."""
    from workbench.data.importers.counts import estimated_counts_line
    from workbench.data.importers.producers import producer_lines
    from workbench.data.storage import load_corpus

    corpus = load_corpus(args.path)  # a CorpusFormatError is a WorkbenchError: one line, exit 2
    size = sum(f.stat().st_size for f in Path(args.path).rglob("*") if f.is_file())
    print(f"{args.path}: columnar corpus (schema_version 2)")
    print(
        f"{len(corpus)} episodes, {corpus.n_decisions} decisions, {int(corpus.index['steps'].sum())} steps, "
        f"{int(corpus.index['has_frames'].sum())} with frames, {size / 1e6:.1f} MB on disk"
    )
    index = corpus.index
    counts = index["counts"].value_counts()
    print("achievement counts: " + ", ".join(f"{source} {n}" for source, n in counts.items()))
    for line in producer_lines(corpus.episode_metadata()):
        print(line)
    estimated = estimated_counts_line(list(index["episode"]), list(index["counts"])) if len(index) else None
    if estimated:
        print(f"note: {estimated}")
    return 0


def run_events(args: argparse.Namespace) -> int:
    """Write the missing or stale events tables of a corpus folder and say how many; exit status 0."""
    from workbench.data.storage import add_events_tables

    written, current = add_events_tables(args.path, rebuild=args.rebuild)  # WorkbenchErrors: one line, exit 2
    if args.rebuild:
        print(f"{args.path}: {len(written)} events table(s) rebuilt from their decisions")
    else:
        print(f"{args.path}: {len(written)} part(s) given an events table, {current} already had a current one")
    return 0


def run_check(args: argparse.Namespace) -> int:
    """Print each part whose derived tables disagree with their source (and why), a note for
    parts without a current events table, and a summary; exit status 1 when any disagrees."""
    from workbench.data.storage import check_corpus

    checks = check_corpus(args.path, deep=args.deep)  # not a corpus folder: a WorkbenchError, exit 2
    how = "events re-derived from the decisions" if args.deep else "as opening checks them; --deep re-derives"
    print(f"{args.path}: {len(checks)} part(s) checked ({how})")
    for check in checks:
        for problem in check.problems:
            print(f"  {check.part}: {problem}")
    unused = [c for c in checks if c.events in ("missing", "stale")]
    if unused:
        first = next((f" (first: {c.note})" for c in unused if c.note), "")
        print(
            f"note: {len(unused)} part(s) have no current events table and open from their decisions "
            f"(slower, same numbers){first}; `workbench corpus events {args.path}` writes them"
        )
    bad = [c for c in checks if c.problems]
    if bad:
        print(
            f"{sum(len(c.problems) for c in bad)} problem(s) in {len(bad)} part(s); "
            f"`workbench corpus events --rebuild {args.path}` rewrites the events tables from the decisions"
        )
        return 1
    print("every derived table agrees with its source")
    return 0
