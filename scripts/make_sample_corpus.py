"""Record the sample corpus shipped in ``workbench/data/shipped/sample/`` (loaded by ``workbench.data.sample``).

Usage, from the repository root::

    .venv/bin/python scripts/make_sample_corpus.py --overwrite

Records each part of ``PLAN`` with ``workbench.data.recording.record`` (frames on), concatenates the
parts into one corpus (ids are unique: they start with the policy name) and replaces the
folder. Crafter is not reproducible from seed and actions, so a re-run records the same worlds
but not byte-identical episodes; that is why the corpus is shipped rather than regenerated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# scripts/plans.py, beside this script (also when a test loads this file by path)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from plans import record_plan  # noqa: E402

#: (policy, episodes, max_steps): modest lengths keep the package small (a few MB with frames).
PLAN = (("scripted", 4, 600), ("farmer", 3, 400), ("random", 3, 200))
SEED = 2024
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "workbench" / "data" / "shipped" / "sample"


def main(argv: list[str] | None = None) -> int:
    """Record the sample corpus's plan into ``--out``; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"corpus folder (default {DEFAULT_OUT})")
    parser.add_argument("--workers", type=int, default=2, help="recording worker processes (default 2)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing sample corpus")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.overwrite:
        parser.error(f"{args.out} exists; pass --overwrite to replace it")
    return record_plan(PLAN, SEED, args.out, workers=args.workers)


if __name__ == "__main__":
    sys.exit(main())
