"""``workbench search``: find weights whose shaped return ranks episodes as progress does."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.common import CORPUS_HELP, NAMED_HELP, add_cluster_argument, cluster_client, read_config
from workbench.cli.errors import UsageError
from workbench.util.atomic import atomic_path

if TYPE_CHECKING:
    import pandas as pd

TRIALS_SUFFIXES = (".csv", ".parquet")

SEARCH_EPILOG = """\
Splits the corpus by episode into fit and held-out episodes (stratified by policy, seeded),
runs N Optuna trials (multivariate TPE) over strategy, k-limits (only where they can act) and
the fit's settings, fitting the 22 achievement weights exactly in every trial (cross-validated
inside the fit episodes), then refits the best trial on all fit episodes and scores the result
once on the held-out episodes, which nothing was fitted or chosen on, with a bootstrap
interval. The score on the fit episodes is printed too, labelled in-sample.

With few episodes (the sample corpus has 10: 3 are held out) the held-out score says little;
the output says so. Record more episodes per policy for a score you can rely on.

--out writes the best config (YAML or standalone TOML; refused if the file exists, unless
--overwrite); --export writes it into an existing training TOML (keeping everything else);
--trials-out writes one row per trial (.csv or .parquet).

--max-exploitability R constrains the search to weights that also leave no probe loop paid
above R times honest play's sustained progress-free pay (R = 1: no probe above honest play;
see workbench exploitability): a trial that does not is infeasible and ranks below every one
that does; the summary says whether the chosen config meets it (--probes names a probe corpus,
--honest a corpus of honest play; defaults as workbench exploitability's).

examples:
  workbench search sample --trials 200 --out best.yaml
  workbench search corpora/mixed --trials 500 --penalize farmer --penalty 0.5 --out best.yaml
  workbench search corpora/mixed --base configs/recommended.yaml --export train.toml --trials-out trials.csv
  workbench search sample --trials 100 --max-exploitability 1 --out unexploitable.yaml

exit status: 0 searched, 2 bad usage, unreadable input or an output that exists.
"""

#: The --base option's help: a file or a named config.
BASE_HELP = (
    f"config to start from (keeps its lambda and resource tables; default per_achievement): a file or {NAMED_HELP}"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench search`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "search",
        help="search for weights that rank episodes as progress does (held-out score with an interval)",
        description="Search reward weights on a corpus: agreement between shaped return and "
        "progress on held-out episodes.",
        epilog=SEARCH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    parser.add_argument(
        "--trials", type=int, default=200, metavar="N", help="Optuna trials (default 200; 0 = the exact fit only)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the split, the folds, the sampler and the bootstrap (default 0)"
    )
    parser.add_argument("--out", type=Path, metavar="FILE", help="write the best config (.yaml, .yml or .toml)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out or --trials-out file")
    parser.add_argument(
        "--export", type=Path, metavar="TOML", help="write the best config into this existing training TOML"
    )
    parser.add_argument("--trials-out", type=Path, metavar="FILE", help="write the trials table (.csv or .parquet)")
    parser.add_argument("--base", metavar="CONFIG", help=BASE_HELP)
    parser.add_argument(
        "--progress",
        default="achievements",
        choices=["achievements", "env_return"],
        help="progress measure to agree with (default: distinct achievements unlocked)",
    )
    parser.add_argument(
        "--metric", default="spearman", choices=["spearman", "kendall"], help="rank agreement (default spearman)"
    )
    parser.add_argument(
        "--penalize", metavar="POLICY", help="a policy whose overpay per achievement is subtracted (e.g. farmer)"
    )
    parser.add_argument("--penalty", type=float, default=0.5, help="weight of that overpay (default 0.5)")
    parser.add_argument(
        "--weight-range",
        type=float,
        nargs=2,
        default=(0.0, 5.0),
        metavar=("LOW", "HIGH"),
        help="bounds of every achievement weight (default 0 5)",
    )
    parser.add_argument(
        "--held-out", type=float, default=0.3, metavar="FRACTION", help="share of each policy held out (default 0.3)"
    )
    parser.add_argument(
        "--folds", type=int, default=3, help="cross-validation folds inside the fit episodes (default 3)"
    )
    parser.add_argument(
        "--strategy",
        default="both",
        choices=["both", "per_achievement", "consistent"],
        help="strategies the search may choose (default both)",
    )
    parser.add_argument(
        "--resource-overrides",
        action="store_true",
        help="also search resource-table scales (a workbench extension: a training TOML cannot carry them)",
    )
    parser.add_argument(
        "--storage",
        type=Path,
        metavar="JOURNAL",
        help="Optuna journal file to keep the study in (resumed if it exists)",
    )
    _add_constraint_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_cluster_argument(parser)
    parser.add_argument(
        "--batch",
        type=int,
        metavar="B",
        help="with --cluster: trials proposed and evaluated at once (default: the cluster's worker threads; "
        "1 gives the trials of a serial search with the same seed)",
    )
    parser.set_defaults(func=run_search)


def _add_constraint_arguments(parser: argparse.ArgumentParser) -> None:
    """The exploitability constraint's options (``--max-exploitability``, ``--probes``, ``--honest``)."""
    parser.add_argument(
        "--max-exploitability",
        type=float,
        metavar="R",
        help="constrain: no probe loop paid above R times honest play's sustained progress-free pay",
    )
    parser.add_argument("--probes", metavar="DIR", help="the constraint's probe corpus (default: the shipped one)")
    parser.add_argument(
        "--honest", metavar="CORPUS", help="the constraint's honest play (default: the sample's scripted and random)"
    )


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse before any work: outputs that exist (without --overwrite), bad suffixes, a missing TOML."""
    if args.trials < 0:
        raise UsageError(f"--trials must be >= 0, not {args.trials}")
    if args.out is not None:
        if args.out.suffix.lower() not in (".yaml", ".yml", ".toml"):
            raise UsageError(f"{args.out}: --out must end in .yaml, .yml or .toml")
        if args.out.exists() and not args.overwrite:
            raise UsageError(f"{args.out}: already exists; pass --overwrite to replace it")
    if args.trials_out is not None:
        if args.trials_out.suffix.lower() not in TRIALS_SUFFIXES:
            raise UsageError(f"{args.trials_out}: --trials-out must end in .csv or .parquet")
        if args.trials_out.exists() and not args.overwrite:
            raise UsageError(f"{args.trials_out}: already exists; pass --overwrite to replace it")
    if args.export is not None and not args.export.is_file():
        raise UsageError(f"{args.export}: no such training TOML to export into")
    if args.max_exploitability is None and (args.probes or args.honest):
        raise UsageError("--probes and --honest are the exploitability constraint's: give --max-exploitability")
    if args.max_exploitability is not None and not args.max_exploitability > 0:
        raise UsageError(f"--max-exploitability must be above 0, not {args.max_exploitability}")


def run_search(args: argparse.Namespace) -> int:
    """Search, print the trials' summary and the held-out score, write ``--out`` / ``--export`` / ``--trials-out``; exit status 0."""
    from workbench.data.opening import open_corpus

    _check_outputs(args)
    base = read_config(args.base) if args.base else None
    corpus = open_corpus(args.corpus)
    if args.batch is not None and (args.batch < 1 or not args.cluster):
        raise UsageError("--batch needs --cluster and must be at least 1")
    with cluster_client(args.cluster) as client:
        evaluate_on, batch_size = None, 1
        if client is not None:
            from workbench.cluster import trial_mapper

            batch_size = args.batch or max(1, sum(client.nthreads().values()))
            evaluate_on = lambda evaluator: trial_mapper(client, evaluator)  # noqa: E731
        result = _search(args, corpus, base, evaluate_on, batch_size)
    _report(args, corpus, result)
    return 0


def _search(args: argparse.Namespace, corpus: Any, base: Any, evaluate_on: Any, batch_size: int) -> Any:
    """``search`` with the command line's settings."""
    from workbench.analysis.search import search  # the search extra: imported when a search runs

    # its WorkbenchErrors (a corpus too small to split, a group to penalise that no episode has) print as one line
    return search(
        corpus,
        trials=args.trials,
        seed=args.seed,
        base=base,
        progress=args.progress,
        metric=args.metric,
        penalize=args.penalize,
        penalty=args.penalty if args.penalize else 0.0,
        weight_range=tuple(args.weight_range),
        held_out=args.held_out,
        folds=args.folds,
        resource_overrides=args.resource_overrides,
        strategies=("per_achievement", "consistent") if args.strategy == "both" else (args.strategy,),
        storage=args.storage,
        show_progress=not args.quiet,
        evaluate_on=evaluate_on,
        batch_size=batch_size,
        max_exploitability=args.max_exploitability,
        exploitability=None if args.max_exploitability is None else _exploitability(args),
    )


def _exploitability(args: argparse.Namespace) -> Any:
    """The constraint's scorer: ``--probes`` (or the shipped probe corpus) against ``--honest``
    (or the sample's scripted and random episodes)."""
    from workbench.analysis.exploitability import default_check
    from workbench.data.opening import open_corpus
    from workbench.data.probe_corpus import load_probes

    probes = load_probes(args.probes) if args.probes else None
    return default_check(open_corpus(args.honest) if args.honest else None, probes)


def _report(args: argparse.Namespace, corpus: Any, result: Any) -> None:
    """Print the search's summary and write its outputs."""
    import pandas as pd

    split = result.split
    print(
        f"{len(corpus)} episodes: {len(split.fit)} fit, {len(split.held_out)} held out "
        f"(stratified by {split.stratify}, seed {split.seed}): "
        + ", ".join(f"{g} {c['fit']}+{c['held_out']}" for g, c in split.table().items())
    )
    print(result.summary())
    if result.weights:
        print("\nweights (sorted by in-sample agreement lost without them):")
        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(result.importance.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    findings = [f for f in result.config.lint() if f.level != "info"]
    for finding in findings:
        print(f"lint: {finding}")
    if args.out is not None:
        written = result.to_file(args.out, overwrite=args.overwrite)
        print(f"wrote {written}")
    if args.export is not None:
        result.export_into(args.export)
        print(f"exported into {args.export}")
    if args.trials_out is not None:
        _write_trials(result.trials, args.trials_out, overwrite=args.overwrite)
        print(f"wrote {args.trials_out} ({len(result.trials)} trials)")


def _write_trials(table: pd.DataFrame, path: Path, *, overwrite: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path, overwrite=overwrite) as tmp:
        if path.suffix.lower() == ".parquet":
            table.to_parquet(tmp, index=False)
        else:
            table.to_csv(tmp, index=False)
