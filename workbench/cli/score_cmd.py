"""``workbench score`` and ``compare``: a config's rewards over a corpus, two configs side by side.

(``verify``, which checks imported rollouts against what the task app logged, is ``verify_cmd``.)"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.common import (
    CORPUS_HELP,
    NAMED_HELP,
    add_cluster_argument,
    cluster_client,
    output_paths,
    read_config,
    write_tables,
)
from workbench.cli.errors import UsageError

if TYPE_CHECKING:
    from workbench.core.config import RewardConfig
    from workbench.data.episodes import Corpus

#: The tables ``--out`` writes, each to ``<stem>.<table><suffix>``.
TABLES = ("episodes", "decisions", "components")
#: Per-episode columns the summary prints (name lists are left to --out).
SUMMARY_COLUMNS = [
    "episode",
    "decisions",
    "steps",
    "env_return",
    "reward_sum",
    "indicator_sum",
    "resource_reward",
    "new_achievements_total",
    "unique_achievements_total",
    "counts",
]


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
  workbench score --config train.toml /shared/corpora/big --cluster tcp://head:8786 --out big.parquet

--cluster scores a corpus folder part by part on Dask workers (each reads its part from the
folder, so it must be on a filesystem every worker sees): the same per-episode table, totals and
alignment as in memory; only the per-episode table comes back, so --out writes FILE.episodes only.

Column counts says where an episode's achievement counts come from: observed (Crafter's own),
logged (rebuilt exactly from a rollout's logged rises) or estimated (lower bounds: its
achievement-count shaping is then approximate, and a warning says so).

exit status: 0 scored, 2 bad usage or unreadable config / corpus.
"""

COMPARE_EPILOG = """\
Scores the corpus under config A and config B and prints, per episode, both shaped returns, the
difference (B - A) and the episode's rank under each; per group of episodes (--by, default
policy) the mean returns and what one achievement is worth; whether each config ranks episodes
as their progress does; and the components whose corpus totals changed most (after lambda).
--distance epic|starc|srrd adds a reward distance that ignores potential shaping and scale (EPIC,
Gleave et al. 2021; STARC, Skalse et al. 2024; SRRD, Nyanhongo et al. 2025, built for sparse
transitions such as a corpus), with the coverage it rests on and a warning when that is thin.
Each distance is computed with --seeds seeds (default 5: seed S, S+1, ...; --seed S, default 0),
which draw the transitions' subsample (at most 5,000) and EPIC's / SRRD's --samples state draws
(default 16): the first seed's value is printed with the range over all of them.
--gamma defaults to 1 for EPIC and SRRD and to 0.99 for STARC, which refuses 1: its value
estimate (LSTD of the behaviour's value, standing in for the exact V^pi Skalse et al. require,
defined for gamma < 1) has no solution for episodes cut at a step limit.

examples:
  workbench compare configs/upstream_shaped.yaml configs/recommended.yaml sample
  workbench compare train.toml tuned.yaml corpora/scripted --top 5
  workbench compare configs/upstream_shaped.yaml configs/recommended.yaml sample --distance srrd

exit status: 0 compared, 2 bad usage or unreadable config / corpus.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench score`` and ``compare`` to ``subparsers``."""
    score = subparsers.add_parser(
        "score",
        help="score a corpus with a reward config: per-episode returns and corpus totals",
        description="Compute a config's stepwise (shaped) rewards on every decision of a corpus, "
        "exactly as the synth-ai task app would.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument(
        "--config",
        required=True,
        metavar="CONFIG",
        help=f"reward config: our YAML or a synth-ai TOML (see `workbench config --help`), or {NAMED_HELP}",
    )
    score.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    score.add_argument(
        "--out",
        metavar="FILE",
        type=Path,
        help="also write the episodes, decisions and components tables (.parquet or .csv)",
    )
    score.add_argument("--overwrite", action="store_true", help="replace existing --out files")
    add_cluster_argument(score)
    score.add_argument("--quiet", action="store_true", help="no progress bar (--cluster shows one per part)")
    score.set_defaults(func=run_score)

    comparing = subparsers.add_parser(
        "compare",
        help="two reward configs side by side on a corpus: returns, ranks, what changed",
        description="Compare two configs' shaped returns on every episode of a corpus, and which "
        "reward components the change moved.",
        epilog=COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    comparing.add_argument(
        "config_a", metavar="A", help="the first reward config (our YAML, a synth-ai TOML or a named config)"
    )
    comparing.add_argument("config_b", metavar="B", help="the second reward config")
    comparing.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    comparing.add_argument(
        "--by", default="policy", metavar="COLUMN", help="corpus index column to group episodes by (default policy)"
    )
    comparing.add_argument(
        "--top", type=int, default=10, metavar="N", help="how many changed components to list (default 10)"
    )
    comparing.add_argument(
        "--distance",
        action="append",
        choices=("epic", "starc", "srrd"),
        help="also print this reward distance between A and B, which ignores potential shaping, with the "
        "coverage it rests on (repeatable; see workbench.analysis.distances)",
    )
    comparing.add_argument(
        "--gamma",
        type=float,
        default=None,
        help="discount of --distance (default 1 for epic and srrd, 0.99 for starc, which needs gamma < 1)",
    )
    comparing.add_argument(
        "--samples", type=int, default=16, metavar="N", help="state draws per expectation of epic / srrd (default 16)"
    )
    comparing.add_argument("--seed", type=int, default=0, help="first seed of the subsample and draws (default 0)")
    comparing.add_argument(
        "--seeds", type=int, default=5, metavar="N", help="seeds each distance is computed with, for its spread (5)"
    )
    comparing.set_defaults(func=run_compare)


def run_score(args: argparse.Namespace) -> int:
    """Print a config's per-episode returns, totals and alignment (and write ``--out``); exit status 0."""
    import pandas as pd

    from workbench.analysis.alignment import progress_summary
    from workbench.data.opening import open_corpus
    from workbench.scoring import crafter_score, score

    config = read_config(args.config)
    tables = ("episodes",) if args.cluster else TABLES
    if args.out:
        output_paths(args.out, tables, overwrite=args.overwrite)  # fail before the work, not after it
    if args.cluster:
        if not Path(args.corpus).is_dir():
            raise UsageError(f"{args.corpus}: --cluster scores a corpus folder every worker can read")
        from workbench.cluster import score_on_cluster

        scores: Any
        with cluster_client(args.cluster) as client:
            scores = score_on_cluster(client, args.corpus, config, progress=not args.quiet)
        craft = scores.crafter_score
    else:
        corpus = open_corpus(args.corpus)
        scores = score(corpus, config)
        craft = crafter_score(corpus)
    if not config.active:
        print(
            f"note: the task app would not shape with {args.config} (enabled={config.enabled}, "
            f"mode={config.mode!r}); below is what it would pay if it did.\n"
        )
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_columns", None):
        print(scores.episodes[SUMMARY_COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    totals = scores.totals()
    n = totals["episodes"]
    print(
        f"\ntotal: {n} episode(s), {totals['decisions']} decisions, {totals['steps']} steps; "
        f"strategy {config.rule.name}, lambda x{config.effective_lambda:g}\n"
        f"  shaped return  {totals['reward_sum']:.4f} (mean {totals['reward_sum'] / n:.4f} per episode; "
        f"resource shaping {totals['resource_reward']:.4f} before lambda)\n"
        f"  Crafter return {totals['env_return']:.4f} (mean {totals['env_return'] / n:.4f} per episode)\n"
        f"  achievements   {totals['new_achievements_total']} unlocked; Crafter score {craft:.2f}%"
    )
    print("  alignment      " + progress_summary(scores.episodes))
    estimated = scores.estimated_episodes
    if estimated and scores.rule.reads_counts:
        print(
            f"warning: {len(estimated)} episode(s) have estimated achievement counts ({', '.join(estimated[:3])}"
            f"{', ...' if len(estimated) > 3 else ''}): imported from text observations without logged rises, so "
            "their achievement-count shaping is a lower bound, not the task app's number (column counts)"
        )
    if args.cluster and estimated and scores.rule.reads_counts:
        # The intervals and the weights note need the estimated episodes' states: read here,
        # and only then (text imports, small), not the whole corpus a cluster run avoids.
        corpus = open_corpus(args.corpus)
    if not args.cluster or (estimated and scores.rule.reads_counts):
        print_intervals(corpus, config)
        print_weights_note(corpus, {args.config: config})
    if args.out:
        written = write_tables({table: getattr(scores, table) for table in tables}, args.out, overwrite=args.overwrite)
        print("wrote " + ", ".join(map(str, written)))
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """Print two configs' returns, ranks, groups and largest changes side by side; exit status 0."""
    import pandas as pd

    from workbench.analysis.alignment import group_comparison, progress_summary
    from workbench.data.opening import open_corpus
    from workbench.errors import CorpusError
    from workbench.scoring import compare

    if args.top < 1:
        raise UsageError(f"--top must be at least 1, not {args.top}")
    if args.distance and args.gamma is not None and not 0.0 <= args.gamma <= 1.0:  # before any table is read
        raise UsageError(f"--gamma must be within [0, 1], not {args.gamma}")
    for name in ("samples", "seeds"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1, not {getattr(args, name)}")
    config_a, config_b = read_config(args.config_a), read_config(args.config_b)
    corpus = open_corpus(args.corpus)
    if len(corpus) == 0:  # said as it is, before --by or a --distance is looked at
        raise UsageError(f"{args.corpus}: holds no episodes; nothing to compare")
    try:
        groups = corpus.groups(args.by)
    except CorpusError as error:  # a grouping column the corpus index lacks
        raise UsageError(f"--by: {error}") from None
    comparison = compare(corpus, config_a, config_b)
    episodes = comparison.episodes.assign(**{args.by: comparison.episodes["episode"].map(groups)})
    columns = ["episode", args.by, "env_return", "return_a", "return_b", "difference", "rank_a", "rank_b"]
    number = lambda v: f"{v:.4f}"  # noqa: E731
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_columns", None):
        print(f"A: {args.config_a} ({config_a.rule.name}, lambda x{config_a.effective_lambda:g})")
        print(f"B: {args.config_b} ({config_b.rule.name}, lambda x{config_b.effective_lambda:g})\n")
        print(episodes[columns].to_string(index=False, float_format=number))
        print(f"\nper {args.by}:")
        print(group_comparison(comparison, corpus, by=args.by).to_string(index=False, float_format=number))
        print("\nprogress:")
        print("  A: " + progress_summary(comparison.a))
        print("  B: " + progress_summary(comparison.b))
        for label, config in (("A", config_a), ("B", config_b)):
            print_intervals(corpus, config, label=f"{label}: ")
        print_weights_note(corpus, {args.config_a: config_a, args.config_b: config_b})
        changes = comparison.largest_changes(args.top)[["component", "total_a", "total_b", "difference"]]
        print(f"\ncomponents that changed most (corpus totals after lambda, top {len(changes)}):")
        print(changes.to_string(index=False, float_format=number))
    for kind in args.distance or ():
        print_distance(corpus, config_a, config_b, kind, args)
    return 0


def print_distance(corpus, config_a: RewardConfig, config_b: RewardConfig, kind: str, args: argparse.Namespace) -> None:
    """Print one reward distance between A and B with its spread over seeds and its coverage
    report (``--distance``, ``--gamma``, ``--samples``, ``--seed``, ``--seeds``)."""
    from workbench.analysis.distances import distance_spread

    spread = distance_spread(
        corpus, config_a, config_b, kind, seeds=args.seeds, first_seed=args.seed, gamma=args.gamma, samples=args.samples
    )
    result = spread.runs[0]
    c = result.coverage
    draws = "" if kind == "starc" else f"{result.samples} draws per expectation, "
    print(
        f"\n{kind.upper()} distance A-B: {result.value:.4f} (0 = the same up to potential shaping and scale; "
        f"gamma {result.gamma:g}; {draws}seed {result.seed}; over seeds {args.seed}..{args.seed + args.seeds - 1}: "
        f"{spread.low:.4f}-{spread.high:.4f}, median {spread.median:.4f}; {c.transitions} transitions, {c.states} "
        f"distinct states, {c.distinct_transitions} distinct transitions, {c.branching:.0%} of states seen with 2+ "
        f"successors, {c.observed_pairs:.1%} of evaluated state pairs observed)"
    )
    if c.warning:
        print(f"warning: {c.warning}")


def print_intervals(corpus: Corpus, config: RewardConfig, label: str = "") -> None:
    """Under per_achievement, print the interval each episode with estimated counts may have
    as its return (``return_intervals``): its single number is only the lower end."""
    import pandas as pd

    from workbench.scoring.intervals import return_intervals

    if not config.rule.reads_counts:
        return
    intervals = return_intervals(corpus, config)
    if intervals.empty:
        return
    print(
        f"\n{label}per_achievement returns of the {len(intervals)} episode(s) with estimated counts lie in "
        "[return_low, return_high] (the returns above use the estimated counts, which cannot pin them):"
    )
    with pd.option_context("display.max_rows", None, "display.width", 200):
        print(intervals.to_string(index=False, float_format=lambda v: f"{v:.4f}"))


def print_weights_note(corpus: Corpus, configs: dict[str, RewardConfig]) -> None:
    """Say when a per_achievement config is scored on episodes an indicator-only synth-ai produced."""
    from workbench.data.importers.producers import weights_ignored_line

    line = weights_ignored_line(
        corpus.episode_metadata(),
        {name: config.to_dict() for name, config in configs.items()},
    )
    if line:
        print(f"note: {line}")
