"""Record the search corpus shipped in ``workbench/data/shipped/search_corpus/`` (``workbench.data.sample.search_corpus``).

Usage, from the repository root::

    .venv/bin/python scripts/make_search_corpus.py --overwrite

Records each part of ``PLAN`` with ``workbench.data.recording.record`` without frames (the corpus is
for scoring, searching and diagnosing, not replaying), concatenates the parts into one corpus
(ids start with the policy name) and replaces the folder. 24 episodes per policy leave 7 of each
in the search's held-out split (30% per policy): 21 held-out episodes to score on.
Crafter is not reproducible from seed and actions, so a re-run records the same worlds but not
identical episodes; that is why the corpus is shipped rather than regenerated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# scripts/plans.py, beside this script (also when a test loads this file by path)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from plans import record_plan  # noqa: E402

#: (policy, episodes, max_steps): long enough for the scripted policy to reach iron and for
#: episodes of a policy to differ in progress, short enough to record in a few minutes.
PLAN = (("scripted", 24, 1500), ("farmer", 24, 1000), ("random", 24, 500))
SEED = 2025
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "workbench" / "data" / "shipped" / "search_corpus"


def main(argv: list[str] | None = None) -> int:
    """Record the search corpus's plan (no frames) into ``--out``; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"corpus folder (default {DEFAULT_OUT})")
    parser.add_argument("--workers", type=int, default=2, help="recording worker processes (default 2)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing search corpus")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.overwrite:
        parser.error(f"{args.out} exists; pass --overwrite to replace it")
    return record_plan(PLAN, SEED, args.out, workers=args.workers, frames=False)


if __name__ == "__main__":
    sys.exit(main())
