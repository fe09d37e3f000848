"""``workbench score``, ``compare`` and ``verify``: a config's rewards over a corpus, two configs
side by side, and a check of imported rollouts against what the task app logged."""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path

import pandas as pd

from workbench.alignment import group_comparison, progress_summary
from workbench.atomic import atomic_path
from workbench.cli.errors import UsageError
from workbench.config import ConfigError, RewardConfig
from workbench.episodes import Corpus
from workbench.scoring import compare, crafter_score, score, verify_logged
from workbench.storage import CorpusFormatError, load_corpus

#: The tables ``--out`` writes, each to ``<stem>.<table><suffix>``.
TABLES = ("episodes", "decisions", "components")
OUT_SUFFIXES = (".parquet", ".csv")
#: Per-episode columns the summary prints (name lists are left to --out).
SUMMARY_COLUMNS = ["episode", "decisions", "steps", "env_return", "reward_sum", "indicator_sum",
                   "resource_reward", "new_achievements_total", "unique_achievements_total"]

CORPUS_HELP = "a corpus folder (from `workbench record` / `workbench import`), or the word `sample` " \
              "for the sample corpus shipped with the package (write ./sample for a folder of that name)"

SCORE_EPILOG = """\
Prints one row per episode (shaped return reward_sum, indicator_sum, resource_reward, achievements
unlocked, Crafter's env_return) and the corpus totals, with Crafter's score and whether the shaped
return ranks episodes as their progress does (rank agreement, and pairs of episodes where the one
that unlocked fewer achievements was paid more: a reward hacker's signature). Scores show what the
config would pay even when the task app would not shape with it (enabled false or another mode).

--out FILE.parquet (or FILE.csv) writes three tables beside each other:
  FILE.episodes.parquet    a row per episode (the rollout's metrics.details["stepwise"] numbers)
  FILE.decisions.parquet   a row per decision: reward, base, indicator, resource_reward, returns
  FILE.components.parquet  a row per reward component, in the task app's order
Writes are atomic; nothing is written if any of the three exists, unless --overwrite.
In CSV, name lists (unique_achievements, final_achievements) are space-separated.

examples:
  workbench score --config configs/recommended.yaml corpora/scripted
  workbench score --config train.toml sample --out results/shaped.parquet
  workbench score --config configs/upstream_complex.yaml sample --out shaped.csv --overwrite

exit status: 0 scored, 2 bad usage or unreadable config / corpus.
"""

COMPARE_EPILOG = """\
Scores the corpus under config A and config B and prints, per episode, both shaped returns, the
difference (B - A) and the episode's rank under each; per group of episodes (--by, default
policy) the mean returns and what one achievement is worth; whether each config ranks episodes
as their progress does; and the components whose corpus totals changed most (after lambda).

examples:
  workbench compare configs/upstream_shaped.yaml configs/recommended.yaml sample
  workbench compare train.toml tuned.yaml corpora/scripted --top 5

exit status: 0 compared, 2 bad usage or unreadable config / corpus.
"""

VERIFY_EPILOG = """\
For every episode imported from task-app rollouts (`workbench import rollouts`), re-scores it
under the step_rewards config the rollout ran with and compares each decision with the logged
info.stepwise (reward, base_reward, indicator, resource_reward, new and credited achievements).
Prints every decision that differs, and what was checked and skipped (episodes without a log).

An episode that follows another in one rollout (on_done = reset) has its first decision scored
against the previous episode's end, as the task app does (reward.md quirk 7). Episodes imported
from text observations carry no achievement counts (derived 0/1): under per_achievement their
achievement-count shaping cannot be reproduced and shows up here.

examples:
  workbench verify corpora/llm-rollouts

exit status: 0 every logged decision reproduced, 1 some differ, 2 bad usage or unreadable corpus.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    score = subparsers.add_parser(
        "score",
        help="score a corpus with a reward config: per-episode returns and corpus totals",
        description="Compute a config's stepwise (shaped) rewards on every decision of a corpus, "
        "exactly as the synth-ai task app would.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("--config", required=True, metavar="FILE",
                       help="reward config: our YAML or a synth-ai TOML (see `workbench config --help`)")
    score.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    score.add_argument("--out", metavar="FILE", type=Path,
                       help="also write the episodes, decisions and components tables (.parquet or .csv)")
    score.add_argument("--overwrite", action="store_true", help="replace existing --out files")
    score.set_defaults(func=run_score)

    comparing = subparsers.add_parser(
        "compare",
        help="two reward configs side by side on a corpus: returns, ranks, what changed",
        description="Compare two configs' shaped returns on every episode of a corpus, and which "
        "reward components the change moved.",
        epilog=COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    comparing.add_argument("config_a", metavar="A", help="the first reward config (our YAML or a synth-ai TOML)")
    comparing.add_argument("config_b", metavar="B", help="the second reward config")
    comparing.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    comparing.add_argument("--by", default="policy", metavar="COLUMN",
                           help="corpus index column to group episodes by (default policy)")
    comparing.add_argument("--top", type=int, default=10, metavar="N",
                           help="how many changed components to list (default 10)")
    comparing.set_defaults(func=run_compare)

    verify = subparsers.add_parser(
        "verify",
        help="check imported rollouts: does re-scoring reproduce the rewards the task app logged?",
        description="Re-score imported task-app rollouts and list every decision whose logged "
        "stepwise reward is not reproduced.",
        epilog=VERIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    verify.set_defaults(func=run_verify)


def open_corpus(spec: str) -> Corpus:
    """The corpus a CORPUS argument names; ``UsageError`` when it cannot be read."""
    if spec == "sample":
        try:
            from workbench.sample import sample_corpus  # shipped data: only touched when asked for
        except ImportError:
            raise UsageError("the sample corpus is not available in this installation") from None
        return sample_corpus()
    if not Path(spec).is_dir():
        raise UsageError(f"{spec}: no such corpus folder")
    try:
        return load_corpus(spec)
    except CorpusFormatError as error:
        raise UsageError(str(error)) from None


def output_paths(out: Path, *, overwrite: bool) -> dict[str, Path]:
    """Where ``--out FILE.ext`` puts each table (``FILE.<table>.ext``); ``UsageError`` for a bad
    suffix, or when one exists and ``overwrite`` is not set (checked before any scoring)."""
    if out.suffix not in OUT_SUFFIXES:
        raise UsageError(f"{out}: --out must end in {' or '.join(OUT_SUFFIXES)}")
    paths = {table: out.with_name(f"{out.stem}.{table}{out.suffix}") for table in TABLES}
    existing = [str(p) for p in paths.values() if p.exists()]
    if existing and not overwrite:
        raise UsageError(f"{', '.join(existing)}: already exist(s); pass --overwrite to replace")
    return paths


def write_tables(tables: dict[str, pd.DataFrame], out: Path, *, overwrite: bool) -> list[Path]:
    """Write every table atomically; if one target exists (without ``overwrite``) none is written."""
    paths = output_paths(out, overwrite=overwrite)
    paths[TABLES[0]].parent.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:  # every file is complete before any is renamed into place
        for table, path in paths.items():
            tmp = stack.enter_context(atomic_path(path, overwrite=overwrite))
            if path.suffix == ".parquet":
                tables[table].to_parquet(tmp, index=False)
            else:
                _csv_ready(tables[table]).to_csv(tmp, index=False)
    return list(paths.values())


def _csv_ready(table: pd.DataFrame) -> pd.DataFrame:
    """Name-list columns as space-separated strings (CSV has no lists)."""
    lists = [c for c in table.columns if table[c].dtype == object and table[c].map(lambda v: isinstance(v, list)).all()]
    return table.assign(**{c: table[c].map(" ".join) for c in lists})


def read_config(path: str) -> RewardConfig:
    try:
        return RewardConfig.from_file(path)
    except (ConfigError, OSError) as error:
        raise UsageError(str(error)) from None


def run_score(args: argparse.Namespace) -> int:
    config = read_config(args.config)
    if args.out:
        output_paths(args.out, overwrite=args.overwrite)  # fail before the work, not after it
    corpus = open_corpus(args.corpus)
    try:
        scores = score(corpus, config)
    except ValueError as error:  # CorpusFormatError included: an episode file that cannot be read
        raise UsageError(str(error)) from None
    if not config.active:
        print(f"note: the task app would not shape with {args.config} (enabled={config.enabled}, "
              f"mode={config.mode!r}); below is what it would pay if it did.\n")
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_columns", None):
        print(scores.episodes[SUMMARY_COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    totals = scores.totals()
    n = totals["episodes"]
    print(
        f"\ntotal: {n} episode(s), {totals['decisions']} decisions, {totals['steps']} steps; "
        f"strategy {config.effective_strategy}, lambda x{config.effective_lambda:g}\n"
        f"  shaped return  {totals['reward_sum']:.4f} (mean {totals['reward_sum'] / n:.4f} per episode; "
        f"resource shaping {totals['resource_reward']:.4f} before lambda)\n"
        f"  Crafter return {totals['env_return']:.4f} (mean {totals['env_return'] / n:.4f} per episode)\n"
        f"  achievements   {totals['new_achievements_total']} unlocked; Crafter score {crafter_score(corpus):.2f}%"
    )
    print("  alignment      " + progress_summary(scores))
    if args.out:
        tables = {"episodes": scores.episodes, "decisions": scores.decisions, "components": scores.components}
        written = write_tables(tables, args.out, overwrite=args.overwrite)
        print("wrote " + ", ".join(map(str, written)))
    return 0


def run_compare(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise UsageError(f"--top must be at least 1, not {args.top}")
    config_a, config_b = read_config(args.config_a), read_config(args.config_b)
    corpus = open_corpus(args.corpus)
    try:
        groups = corpus.groups(args.by)
        comparison = compare(corpus, config_a, config_b)
    except KeyError as error:
        raise UsageError(f"--by: {error.args[0]}") from None
    except ValueError as error:  # CorpusFormatError included
        raise UsageError(str(error)) from None
    episodes = comparison.episodes.assign(**{args.by: comparison.episodes["episode"].map(groups)})
    columns = ["episode", args.by, "env_return", "return_a", "return_b", "difference", "rank_a", "rank_b"]
    number = lambda v: f"{v:.4f}"  # noqa: E731
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_columns", None):
        print(f"A: {args.config_a} ({config_a.effective_strategy}, lambda x{config_a.effective_lambda:g})")
        print(f"B: {args.config_b} ({config_b.effective_strategy}, lambda x{config_b.effective_lambda:g})\n")
        print(episodes[columns].to_string(index=False, float_format=number))
        print(f"\nper {args.by}:")
        print(group_comparison(comparison, corpus, by=args.by).to_string(index=False, float_format=number))
        print("\nprogress:")
        print("  A: " + progress_summary(comparison.a))
        print("  B: " + progress_summary(comparison.b))
        changes = comparison.largest_changes(args.top)[["component", "total_a", "total_b", "difference"]]
        print(f"\ncomponents that changed most (corpus totals after lambda, top {len(changes)}):")
        print(changes.to_string(index=False, float_format=number))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    corpus = open_corpus(args.corpus)
    try:
        mismatches = verify_logged(corpus)
    except ValueError as error:  # CorpusFormatError included
        raise UsageError(str(error)) from None
    info = mismatches.attrs
    print(f"checked {info['decisions_checked']} logged decision(s) in {info['episodes_checked']} episode(s); "
          f"{len(info['skipped'])} episode(s) skipped, {len(info['unchecked'])} decision(s) not checked")
    for reason, count in pd.Series(info["skipped"], dtype=object).value_counts().items():
        print(f"  skipped {count} episode(s): {reason}")
    for reason, count in pd.Series([u[2] for u in info["unchecked"]], dtype=object).value_counts().items():
        print(f"  not checked {count} decision(s): {reason}")
    if info["carried_over"]:
        print(f"  {len(info['carried_over'])} episode(s) scored from the previous episode's end (quirk 7)")
    if mismatches.empty:
        print("every logged decision reproduced" if info["decisions_checked"] else "nothing to verify: no episode carries a task-app log")
        return 0
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_colwidth", 80):
        print(f"\n{len(mismatches)} decision(s) differ:")
        print(mismatches.to_string(index=False))
    return 1
