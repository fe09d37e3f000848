"""``workbench diagnose CONFIG CORPUS``: what is wrong with this config on this corpus, with why."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.common import CORPUS_HELP, output_paths, read_config, write_tables
from workbench.cli.errors import UsageError
from workbench.util.atomic import atomic_path

#: Rows of long tables printed (all rows go to --out).
PRINT_ROWS = 12
#: Flags printed per kind (section and code); the rest are counted.
FLAGS_PER_CODE = 10

EPILOG = """\
Scores the corpus under CONFIG and prints what the diagnosis flags, each with why, then its tables:
  farming        per episode: achievement credits, resource pay at first rises and at repeats
                 (flagged when repeats outweigh the credits); loops (mine / place stone,
                 pick / plant a sapling) with laps and pay per lap
  dominance      per group (--by, default policy): share of the reward by component kind
  dead entries   config and resource-table entries that cannot change any return, and why
  alignment      Spearman and Kendall rank agreement between shaped return and progress, with
                 stratified-bootstrap intervals (resampled within --by groups), misranked pairs
  sensitivity    per achievement weight, the exact interval keeping the ranking of episodes,
                 and the change that fixes the worst misranked pair
Episodes whose achievement counts are estimated (imported from text observations) are named:
their count shaping is an estimate.

--out FILE.parquet (or FILE.csv) writes every table beside each other (FILE.flags.parquet,
FILE.farming.parquet, ...); --figure FILE.png a one-page summary. Writes are atomic; nothing is
written if a target exists, unless --overwrite.

examples:
  workbench diagnose configs/upstream_shaped.yaml sample
  workbench diagnose train.toml corpora/mixed --out diagnosis.csv --figure diagnosis.png

exit status: 0 diagnosed (whatever it flags), 2 bad usage or unreadable config / corpus.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench diagnose`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "diagnose",
        help="what is wrong with a reward config on a corpus: farming, dominance, dead entries, alignment",
        description="Diagnose a reward config on a corpus of episodes: what it overpays, what cannot act, "
        "how well it ranks episodes by progress, and how far each weight can move.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", metavar="CONFIG", help="reward config: our YAML or a synth-ai TOML")
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    parser.add_argument(
        "--by",
        default="policy",
        metavar="COLUMN",
        help="corpus index column grouping episodes (dominance, bootstrap strata; default policy)",
    )
    parser.add_argument("--reps", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--confidence", type=float, default=0.95, help="interval confidence (default 0.95)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="write every table (.parquet or .csv)")
    parser.add_argument("--figure", metavar="PNG", type=Path, help="write the one-page figure (.png)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing --out / --figure files")
    parser.set_defaults(func=run_diagnose)


def check_outputs(out: Path | None, figure: Path | None, *, overwrite: bool) -> None:
    """Raise ``UsageError`` for a bad ``--out`` / ``--figure`` suffix, or when a target exists and
    ``overwrite`` is not set (checked before any work)."""
    from workbench.analysis.diagnostics import TABLES

    if out is not None:
        output_paths(out, TABLES, overwrite=overwrite)
    if figure is not None and figure.suffix.lower() != ".png":
        raise UsageError(f"{figure}: --figure must end in .png")
    if figure is not None and figure.exists() and not overwrite:
        raise UsageError(f"{figure}: already exists; pass --overwrite to replace")


def run_diagnose(args: argparse.Namespace) -> int:
    """Diagnose a config on a corpus, print the flags and tables, write ``--out`` / ``--figure``; exit status 0."""
    from workbench.analysis.diagnostics import diagnose
    from workbench.data.opening import open_corpus

    config = read_config(args.config)
    check_outputs(args.out, args.figure, overwrite=args.overwrite)
    corpus = open_corpus(args.corpus)
    diagnosis = diagnose(corpus, config, by=args.by, reps=args.reps, seed=args.seed, confidence=args.confidence)
    print(report(diagnosis, args.config))
    if args.out is not None:
        written = write_tables(diagnosis.tables(), args.out, overwrite=args.overwrite)
        print("wrote " + ", ".join(map(str, written)))
    figure_path = args.figure
    if figure_path is not None:
        from workbench.views.plots.diagnostics import diagnosis_figure

        figure_path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(figure_path, overwrite=args.overwrite) as tmp:
            diagnosis_figure(diagnosis).savefig(tmp, format="png", dpi=100)
        print(f"wrote {figure_path}")
    return 0


def report(diagnosis, config_name: str) -> str:
    """The text ``workbench diagnose`` prints: flags with why, then the tables (long ones cut)."""
    import pandas as pd

    by = diagnosis.by
    config = diagnosis.config
    n = len(diagnosis.scores.episodes)
    lines = [
        (
            f"diagnosis of {config_name} ({config.rule.name}, lambda x{config.effective_lambda:g}) "
            f"on {n} episode(s), grouped by {by}: {len(diagnosis.flags)} flag(s)"
        )
    ]
    estimated = diagnosis.estimated_episodes
    if estimated:
        lines.append(
            f"note: {len(estimated)} episode(s) have estimated achievement counts, so their count shaping "
            f"(achievement_count rows) is an estimate: {', '.join(estimated[:8])}"
            f"{' ...' if len(estimated) > 8 else ''}"
        )
    if not config.active:
        lines.append(
            f"note: the task app would not shape with this config (enabled={config.enabled}, "
            f"mode={config.mode!r}); below is what it would pay if it did"
        )
    lines.append("\nflags:")
    for (where, code), group in diagnosis.flags.groupby(["section", "code"], sort=False):
        lines += [f"  [{where}] {code} {row.subject}: {row.why}" for row in group.head(FLAGS_PER_CODE).itertuples()]
        if len(group) > FLAGS_PER_CODE:
            lines.append(
                f"  [{where}] {code}: ... and {len(group) - FLAGS_PER_CODE} more like these (--out writes all)"
            )
    if diagnosis.flags.empty:
        lines.append("  none")

    def section(title: str, table: pd.DataFrame, rows: int | None = PRINT_ROWS) -> None:
        shown = table if rows is None else table.head(rows)
        lines.append(f"\n{title}:")
        lines.append(shown.to_string(index=False, float_format=_number) if len(table) else "  (none)")
        if rows is not None and len(table) > rows:
            lines.append(f"  ... {len(table) - rows} more row(s) (--out writes them all)")

    with pd.option_context("display.width", 250, "display.max_columns", None, "display.max_colwidth", 60):
        section(
            "farming per episode (after lambda; flagged: repeats outweigh credits)",
            diagnosis.farming_episodes.drop(columns=["counts"]),
            rows=None if n <= 40 else PRINT_ROWS,
        )
        loops = diagnosis.cycles[diagnosis.cycles["laps"] > 0]
        section("cycles with laps", loops)
        section(f"dominance by kind (share of each {by}'s |reward|)", diagnosis.dominance_by_kind, rows=None)
        section(
            "dead entries (cannot change any return)",
            diagnosis.dead_entries[["key", "value", "code", "judged"]],
            rows=None,
        )
        section(
            "alignment (rank agreement, stratified bootstrap)", diagnosis.alignment.drop(columns=["strata"]), rows=None
        )
        section("misranked pairs (worst first)", diagnosis.misranked, rows=5)
        columns = [
            "achievement",
            "weight",
            "episodes_credited",
            "low",
            "high",
            "fix_weight",
            "fix_change",
            "misranked_after_fix",
        ]
        section(
            "sensitivity (weights keeping the ranking: low < weight < high; fix = worst pair ties)",
            diagnosis.sensitivity[columns],
            rows=None,
        )
        note = diagnosis.sensitivity.attrs.get("note")
        if note:
            lines.append(f"  note: {note}")
    return "\n".join(lines)


def _number(value: float) -> str:
    return f"{value:.4f}"
