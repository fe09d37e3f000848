"""``workbench advantages CONFIG CORPUS``: the advantages a GRPO-family learner would see, with flags."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.common import CORPUS_HELP, output_paths, read_config, write_tables
from workbench.cli.errors import UsageError

#: Flags printed per code; the rest are counted.
FLAGS_PER_CODE = 10
#: Rows of the per-rollout table printed (all go to --out).
PRINT_ROWS = 40
TABLES = ("episodes", "groups", "flags", "decisions")

EPILOG = """\
Groups the rollouts by seed (and policy_version when the corpus index has it; --by changes the
columns) and computes, from CONFIG's shaped returns, the advantages of
  grpo     (r - group mean) / (group std + eps)          Shao et al. 2024 (DeepSeekMath)
  dr_grpo  r - group mean                                Liu et al. 2025 (Dr.GRPO)
  rloo     r - mean of the group's other rollouts        Kool et al. 2019; Ahmadian et al. 2024
  gdpo     per component (credit, inventory, achievement_count) normalised in the group, summed,
           then normalised over the batch                Liu et al. 2026 (GDPO)
std is the sample standard deviation (--ddof 1, as torch.std, verl and TRL) unless --ddof 0.
Flags: zero-variance groups (no gradient), groups whose advantage order contradicts progress
(achievements unlocked, Crafter's reward), rollouts whose sign GDPO flips, single-rollout groups.
--out FILE.parquet (or .csv) writes episodes, groups, flags and decisions (per decision: reward
and the GAE credit with --gamma / --lam and no critic).

examples:
  workbench advantages configs/upstream_shaped.yaml sample
  workbench advantages train.toml corpora/rollouts --by seed,policy --out adv.parquet

exit status: 0 computed (whatever it flags), 2 bad usage or unreadable config / corpus.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench advantages`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "advantages",
        help="what a GRPO / Dr.GRPO / RLOO / GDPO learner sees of a reward config on a corpus",
        description="Group rollouts by seed and compute the advantages each estimator gives, with flags.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", metavar="CONFIG", help="reward config: our YAML or a synth-ai TOML")
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    parser.add_argument("--by", metavar="COLUMNS", help="comma-separated index columns making a group (default seed)")
    parser.add_argument("--eps", type=float, default=1e-6, help="epsilon added to standard deviations (default 1e-6)")
    parser.add_argument("--ddof", type=int, choices=(0, 1), default=1, help="1 sample (default), 0 population std")
    parser.add_argument("--gamma", type=float, default=0.99, help="discount of the per-decision credit (default 0.99)")
    parser.add_argument("--lam", type=float, default=0.95, help="GAE lambda of the per-decision credit (default 0.95)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="write every table (.parquet or .csv)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing --out files")
    parser.set_defaults(func=run_advantages)


def run_advantages(args: argparse.Namespace) -> int:
    """Print the advantages per rollout, the groups and the flags; write ``--out``; exit status 0."""
    from workbench.analysis.learner import learner_view
    from workbench.data.opening import open_corpus

    config = read_config(args.config)
    if args.out is not None:
        output_paths(args.out, TABLES, overwrite=args.overwrite)
    by = tuple(c.strip() for c in args.by.split(",") if c.strip()) if args.by else None
    if by == ():
        raise UsageError("--by needs at least one column name")
    if not 0 <= args.eps < float("inf"):  # inf would make every advantage 0, NaN every one NaN
        raise UsageError(f"--eps must be a finite number >= 0, not {args.eps}")
    corpus = open_corpus(args.corpus)
    view = learner_view(corpus, config, by=by, eps=args.eps, ddof=args.ddof, gamma=args.gamma, lam=args.lam)
    print(report(view, args.config))
    if args.out is not None:
        written = write_tables(view.tables(), args.out, overwrite=args.overwrite)
        print("wrote " + ", ".join(map(str, written)))
    return 0


def report(view, config_name: str) -> str:
    """The text ``workbench advantages`` prints."""
    import pandas as pd

    episodes, groups, flags = view.episodes, view.groups, view.flags
    lines = [
        f"advantages of {config_name} on {len(episodes)} rollout(s) in {len(groups)} group(s) by "
        f"{', '.join(view.by)}: {len(flags)} flag(s)",
        "",
        "flags:",
    ]
    for code, group in flags.groupby("code", sort=False):
        lines += [f"  {code} {row.subject}: {row.why}" for row in group.head(FLAGS_PER_CODE).itertuples()]
        if len(group) > FLAGS_PER_CODE:
            lines.append(f"  {code}: ... and {len(group) - FLAGS_PER_CODE} more (--out writes all)")
    if flags.empty:
        lines.append("  none")
    columns = ["episode", *view.by, "return", "achievements", "env_return", "grpo", "dr_grpo", "rloo", "gdpo"]
    shown = episodes.sort_values(["group", "return"], ascending=[True, False], kind="stable")[columns]
    with pd.option_context("display.width", 250, "display.max_columns", None):
        lines += ["", "per rollout (by group, highest return first):"]
        lines.append(shown.head(PRINT_ROWS).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        if len(shown) > PRINT_ROWS:
            lines.append(f"  ... {len(shown) - PRINT_ROWS} more row(s) (--out writes them all)")
        lines += ["", "per group:"]
        lines.append(groups.head(PRINT_ROWS).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return "\n".join(lines)
