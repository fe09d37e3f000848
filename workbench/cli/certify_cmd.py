"""``workbench certify CONFIG CORPUS``: how far a config's shaping is from potential-based, on a corpus."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.common import CORPUS_HELP, output_paths, read_config, write_tables

#: Rows of long tables printed (all rows go to --out).
PRINT_ROWS = 15
TABLES = ("components", "cycles", "loops", "counterpart")

EPILOG = """\
Shaping of the form gamma*Phi(s') - Phi(s) leaves the optimal policy unchanged (Ng, Harada and
Russell 1999); the task app's resource shaping is not of that form. On the corpus's decisions:
  components   per component, the least-squares potential over Crafter's state (inventory with
               the vitals, unlocked achievements) and what it leaves unexplained (its share of
               the shaped return); credits are the task's reward, listed after the shaping
  loops        states revisited after the reward paid something net positive, by what was paid
               inside (e.g. collect_stone / place_stone): how often, how much, an example to replay
  counterpart  the config's potential-based counterpart (credits + gamma*Phi(s') - Phi(s), what
               CrafterStepwiseEnv(shaping="potential", gamma=...) pays) against the task app's
               return, per --by group
--out FILE.parquet (or .csv) writes components, cycles (every one), loops and counterpart.

examples:
  workbench certify configs/upstream_shaped.yaml sample
  workbench certify train.toml corpora/rollouts --gamma 0.99 --out certificate.parquet

exit status: 0 certified (whatever it finds), 2 bad usage or unreadable config / corpus.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench certify`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "certify",
        help="a shaping certificate: how far a config is from potential-based shaping, loops it pays for",
        description="Fit potentials to a config's reward components on a corpus, find the loops it pays "
        "for, and pay the corpus with its potential-based counterpart.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", metavar="CONFIG", help="reward config: our YAML or a synth-ai TOML")
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP)
    parser.add_argument("--gamma", type=float, default=1.0, help="the learner's discount (default 1: undiscounted)")
    parser.add_argument("--by", default="policy", metavar="COLUMN", help="index column grouping episodes (policy)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="write every table (.parquet or .csv)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing --out files")
    parser.set_defaults(func=run_certify)


def run_certify(args: argparse.Namespace) -> int:
    """Print the certificate; write ``--out``; exit status 0."""
    from workbench.analysis.shaping import certify
    from workbench.data.opening import open_corpus

    config = read_config(args.config)
    if args.out is not None:
        output_paths(args.out, TABLES, overwrite=args.overwrite)
    corpus = open_corpus(args.corpus)
    certificate = certify(corpus, config, gamma=args.gamma, by=args.by)
    print(report(certificate, args.config))
    if args.out is not None:
        written = write_tables(certificate.tables(), args.out, overwrite=args.overwrite)
        print("wrote " + ", ".join(map(str, written)))
    return 0


def report(certificate, config_name: str) -> str:
    """The text ``workbench certify`` prints."""
    import pandas as pd

    components = certificate.components
    shaping = components[components["role"] == "shaping"]
    total = float(certificate.counterpart["return"].sum())
    lines = [
        f"shaping certificate of {config_name} on {len(certificate.counterpart)} episode(s), gamma {certificate.gamma:g}",
        f"  shaped return {total:.4f}; shaping components paid {shaping['paid'].sum():.4f}, of which no potential "
        f"explains {shaping['unexplained'].sum():.4f} ({_share(shaping['unexplained'].sum(), total)} of the return)",
        f"  positive-return cycles: {len(certificate.cycles)}; the decisions inside them paid "
        f"{certificate.cycle_paid:.4f} ({_share(certificate.cycle_paid, total)} of the return; each decision once)",
    ]
    if certificate.credit_note():
        lines.append(f"  note: {certificate.credit_note()}")
    number = lambda v: f"{v:.4f}"  # noqa: E731
    with pd.option_context("display.width", 250, "display.max_columns", None, "display.max_colwidth", 70):
        lines += ["", "loops paid for (a state revisited with net positive reward):"]
        lines.append(certificate.loops.head(PRINT_ROWS).to_string(index=False, float_format=number))
        lines += ["", "components (shaping first; unexplained = paid - what the best potential explains):"]
        columns = [
            "kind",
            "name",
            "role",
            "paid",
            "unexplained",
            "unexplained_share",
            "unexplained_signal",
            "potential",
        ]
        lines.append(components[columns].head(PRINT_ROWS).to_string(index=False, float_format=number))
        if len(components) > PRINT_ROWS:
            lines.append(f"  ... {len(components) - PRINT_ROWS} more (--out writes them all)")
        lines += ["", f"potential-based counterpart (gamma {certificate.gamma:g}), means per {certificate.by}:"]
        lines.append(certificate.counterpart_by_group().to_string(index=False, float_format=number))
    return "\n".join(lines)


def _share(part: float, total: float) -> str:
    return f"{part / total:.0%}" if total else "n/a"
