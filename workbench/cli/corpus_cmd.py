"""``workbench corpus``: look at a corpus folder's layout and convert old folders (``upgrade``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.storage import load_corpus, schema_version, upgrade_corpus

EXAMPLE = """\
examples:
  workbench corpus info corpora/scripted
  workbench corpus upgrade corpora/old corpora/new     # old npz layout (schema 1) -> columnar (schema 2)

  upgrade reads OLD (either layout) and writes every episode, value, frame and metadata into
  NEW, a new or empty folder, as one part; OLD is never changed. Upgrading a columnar corpus
  compacts its parts (a recording writes one part per episode) into one.

exit status: 0 done, 2 bad usage or unreadable corpus.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench corpus info|upgrade`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "corpus",
        help="inspect a corpus folder or upgrade an old one to the columnar layout",
        description="Inspect corpus folders and convert old-layout ones.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    info = actions.add_parser("info", help="layout version, episodes, decisions and size on disk of a corpus folder")
    info.add_argument("path", metavar="DIR")
    info.set_defaults(func=run_info)
    upgrade = actions.add_parser(
        "upgrade",
        help="convert OLD into the current layout in NEW",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    upgrade.add_argument("old", metavar="OLD", help="a corpus folder (old npz or columnar layout)")
    upgrade.add_argument("new", metavar="NEW", help="a new or empty folder to write the upgraded corpus to")
    upgrade.add_argument("--quiet", action="store_true", help="no progress bars")
    upgrade.set_defaults(func=run_upgrade)


def run_info(args: argparse.Namespace) -> int:
    """Print a corpus folder's layout version, size and episodes; exit status 0."""
    version = schema_version(args.path)  # a CorpusFormatError is a WorkbenchError: one line, exit 2
    corpus = load_corpus(args.path)
    size = sum(f.stat().st_size for f in Path(args.path).rglob("*") if f.is_file())
    layout = "old npz layout (read-only; `workbench corpus upgrade` converts it)" if version == 1 else "columnar"
    print(f"{args.path}: schema_version {version}, {layout}")
    print(
        f"{len(corpus)} episodes, {corpus.n_decisions} decisions, {int(corpus.index['steps'].sum())} steps, "
        f"{int(corpus.index['has_frames'].sum())} with frames, {size / 1e6:.1f} MB on disk"
    )
    return 0


def run_upgrade(args: argparse.Namespace) -> int:
    """Convert an old (npz) corpus into a new columnar folder and say what it holds; exit status 0."""
    upgrade_corpus(args.old, args.new, progress=not args.quiet)
    corpus = load_corpus(args.new)
    print(
        f"upgraded {args.old} -> {args.new}: {len(corpus)} episodes, {corpus.n_decisions} decisions "
        f"(schema_version {schema_version(args.new)})"
    )
    return 0
