"""``workbench report``: one self-contained HTML page of a corpus and its configs, to send and keep."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from workbench.cli.common import CORPUS_HELP, read_named_configs
from workbench.cli.errors import UsageError

#: What a report file may be called.
REPORT_SUFFIXES = (".html", ".htm")

EXAMPLE = """\
examples:
  workbench report sample --config configs/upstream_shaped.yaml --config configs/recommended.yaml --out report.html
  workbench report corpora/live --config my.yaml --live --out live.html --overwrite
  workbench audit corpora/run --config my.yaml --report audit.html   (the same page beside the audit's exit status)

  The page holds the corpus (source, producers, episodes, decisions, estimated counts with their
  return intervals), each config with its lint findings, the returns per config with bootstrap
  intervals, rank changes and the components that changed most, the audit (each flag and note
  with its measured precision, its evidence and a filmstrip of the first lap where the corpus has
  frames, and the exit status in words), the shaping certificate, reward distances with their
  coverage, the advantages a GRPO learner sees, with --live the over-optimisation watch, and how
  it was made (version, command, time, corpus digest). It opens offline in any browser: figures
  are inline SVG, frames inline PNG, nothing is fetched. See docs/report.md.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench report`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "report",
        help="write one self-contained HTML report of configs on a corpus (opens offline)",
        description="Write one HTML page saying what the configs pay and teach on a corpus: returns, "
        "the audit with evidence, the shaping certificate, distances and advantages.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    parser.add_argument(
        "--config",
        action="append",
        required=True,
        metavar="FILE",
        help="a config (repeatable); the first is the reference the others are compared with",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="the report to write (.html)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    parser.add_argument("--by", default="policy", help="the index column grouping episodes (default policy)")
    parser.add_argument("--live", action="store_true", help="a live run: add the over-optimisation watch")
    parser.set_defaults(func=run_report)


def check_report_path(path: Path, *, overwrite: bool, option: str = "--out") -> None:
    """Refuse a report path before any work: a suffix other than .html, or an existing file
    without ``overwrite``.

    Args:
        path: The report's path.
        overwrite: Whether an existing file may be replaced.
        option: The option's name, for the message.

    Raises:
        UsageError: Naming the path and what is wrong.
    """
    if path.suffix.lower() not in REPORT_SUFFIXES:
        raise UsageError(f"{path}: {option} must end in .html")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise UsageError(f"{path}: already exists; pass --overwrite to replace it")


def command_line(args: argparse.Namespace) -> str:
    """The command line that made a report, for its provenance (as typed, shell-quoted)."""
    return "workbench " + shlex.join(getattr(args, "argv", None) or [args.command])


def run_report(args: argparse.Namespace) -> int:
    """Write the report; exit status 0."""
    from workbench.analysis.audit import AuditThresholds
    from workbench.data.opening import open_corpus
    from workbench.views.report import build_report, write_report  # imports matplotlib: only here

    check_report_path(args.out, overwrite=args.overwrite)
    configs = read_named_configs(args.config)
    corpus = open_corpus(args.corpus)
    document = build_report(
        corpus,
        configs,
        corpus_name=str(args.corpus),
        command=command_line(args),
        by=args.by,
        live=args.live,
        thresholds=AuditThresholds(),
    )
    write_report(args.out, document, overwrite=args.overwrite)
    print(f"wrote {args.out} ({len(document.encode()) / 1e6:.1f} MB)")
    return 0
