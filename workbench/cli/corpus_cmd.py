"""``workbench corpus info`` / ``events``: what a corpus folder holds; events tables for its older parts."""

from __future__ import annotations

import argparse
from pathlib import Path

EXAMPLE = """\
examples:
  workbench corpus info corpora/scripted
  workbench corpus events corpora/scripted     # parts written before events tables open ~3x faster

exit status: 0 done, 2 bad usage or unreadable corpus.
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
    events.set_defaults(func=run_events)


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
    for line in producer_lines(corpus.episode_extras(k).metadata for k in range(len(corpus))):
        print(line)
    estimated = estimated_counts_line(list(index["episode"]), list(index["counts"])) if len(index) else None
    if estimated:
        print(f"note: {estimated}")
    return 0


def run_events(args: argparse.Namespace) -> int:
    """Write the missing or stale events tables of a corpus folder and say how many; exit status 0."""
    from workbench.data.storage import add_events_tables

    written, current = add_events_tables(args.path)  # errors are WorkbenchErrors: one line, exit 2
    print(f"{args.path}: {len(written)} part(s) given an events table, {current} already had a current one")
    return 0
