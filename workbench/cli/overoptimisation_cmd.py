"""``workbench overoptimisation CORPUS --config FILE``: does the shaped return keep rising while Crafter progress falls?"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli.common import CORPUS_HELP, output_paths, read_named_configs, write_tables
from workbench.cli.errors import UsageError
from workbench.util.atomic import atomic_write_bytes

if TYPE_CHECKING:
    import pandas as pd

TABLES = ("series", "alarms")

EPILOG = """\
Reads the run's episodes in order (corpus order, or --order COLUMN of the corpus index, e.g.
training_step) and compares the gold measure (achievements unlocked per episode, and Crafter's
score) with the proxy (each config's shaped return), as Gao, Schulman and Hilton (2022) measure
reward over-optimisation. The alarm fires for a config when, from the gold's peak (the top of its
centred rolling mean over --window episodes, followed by at least --min-run episodes) to the end,
the proxy's slope per episode has a bootstrap interval above 0 and the gold's one below 0; it
names the episode where the decline began. Crafter's score is given near the peak (the --window
episodes up to it) and at the end (the last --window episodes). --out FILE.parquet (or .csv) writes the series and the
alarms; --plot FILE.png draws gold against proxy with the alarm marked.

examples:
  workbench overoptimisation corpora/run --config configs/upstream_shaped.yaml
  workbench overoptimisation corpora/run --config a.yaml --config b.yaml --order training_step --plot watch.png

exit status: 0 no alarm, 1 an alarm fired, 2 bad usage or unreadable input.
"""


#: The figure formats --plot writes (matplotlib's, by the file's suffix).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench overoptimisation`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "overoptimisation",
        help="exit 1 when a config's shaped return keeps rising while achievements fall over a run",
        description="Watch a run for reward over-optimisation: proxy (shaped return) up, gold (progress) down.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    parser.add_argument("--config", action="append", required=True, metavar="FILE", help="a proxy config (repeatable)")
    parser.add_argument("--order", metavar="COLUMN", help="index column giving run order (default: corpus order)")
    parser.add_argument(
        "--window", type=int, default=9, help="episodes in the rolling mean finding the peak (default 9)"
    )
    parser.add_argument("--min-run", type=int, default=10, help="episodes needed after the peak (default 10)")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="write the series and alarms (.parquet or .csv)")
    parser.add_argument("--plot", metavar="FILE", type=Path, help="save the figure (.png, .svg or .pdf)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing --out / --plot files")
    parser.set_defaults(func=run_overoptimisation)


def run_overoptimisation(args: argparse.Namespace) -> int:
    """Print each config's alarm; write ``--out`` and ``--plot``; exit 1 when an alarm fired."""
    from workbench.analysis.overoptimisation import overoptimisation_watch
    from workbench.analysis.rankstats import MAX_REPS
    from workbench.data.opening import open_corpus

    if args.window < 1 or args.min_run < 2 or not 1 <= args.reps <= MAX_REPS:
        raise UsageError(f"--window must be >= 1, --min-run >= 2 and --reps from 1 to {MAX_REPS}")
    if args.plot is not None and args.plot.suffix.lower() not in PLOT_SUFFIXES:
        # checked before the watch runs, not after it (matplotlib knows the format only at the end)
        raise UsageError(f"{args.plot}: --plot must end in {', '.join(PLOT_SUFFIXES)}")
    if args.plot is not None and args.plot.exists() and not args.overwrite:
        raise UsageError(f"{args.plot} exists; pass --overwrite to replace it")
    configs = read_named_configs(args.config)
    if args.out is not None:
        output_paths(args.out, TABLES, overwrite=args.overwrite)
    corpus = open_corpus(args.corpus)
    watch = overoptimisation_watch(
        corpus, configs, order=args.order, window=args.window, min_run=args.min_run, reps=args.reps
    )
    print(report(watch.alarms, len(corpus)))
    if args.out is not None:
        written = write_tables(watch.tables(), args.out, overwrite=args.overwrite)
        print("wrote " + ", ".join(map(str, written)))
    if args.plot is not None:
        from workbench.views.plots.overoptimisation import overoptimisation

        buffer = io.BytesIO()
        overoptimisation(watch, window=args.window).savefig(buffer, format=args.plot.suffix.lower().lstrip("."))
        atomic_write_bytes(args.plot, buffer.getvalue(), overwrite=args.overwrite)
        print(f"wrote {args.plot}")
    return 1 if watch.alarms["alarm"].any() else 0


def report(alarms: pd.DataFrame, episodes: int) -> str:
    """The lines ``workbench overoptimisation`` prints: one per config."""
    lines = [f"over-optimisation watch on {episodes} episode(s): {int(alarms['alarm'].sum())} alarm(s)"]
    for row in alarms.itertuples():
        slopes = (
            f"gold {row.gold_slope:+.4f}/episode [{row.gold_low:+.4f}, {row.gold_high:+.4f}], "
            f"proxy {row.proxy_slope:+.4f}/episode [{row.proxy_low:+.4f}, {row.proxy_high:+.4f}] "
            f"over the last {row.episodes} episodes; Crafter score near the peak {row.score_before:.2f}%, at the end "
            f"{row.score_after:.2f}% ({row.score_change:+.2f} [{row.score_low:+.2f}, {row.score_high:+.2f}])"
        )
        verdict = f"ALARM from episode {row.began_at}" if row.alarm else "no alarm"
        if not row.settled:
            verdict += f" yet (the gold's peak, position {row.peak}, has {row.episodes - 1} episode(s) after it)"
        lines.append(f"  {row.config}: {verdict}: {slopes}")
    return "\n".join(lines)
