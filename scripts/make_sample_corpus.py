"""Record the sample corpus shipped in ``workbench/data/sample/`` (loaded by ``workbench.sample``).

Usage, from the repository root::

    .venv/bin/python scripts/make_sample_corpus.py --overwrite

Records each part of ``PLAN`` with ``workbench.recording.record`` (frames on), concatenates the
parts into one corpus (ids are unique: they start with the policy name) and replaces the
folder. Crafter is not reproducible from seed and actions, so a re-run records the same worlds
but not byte-identical episodes; that is why the corpus is shipped rather than regenerated.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from workbench.episodes import Corpus
from workbench.recording import record
from workbench.storage import load_corpus

#: (policy, episodes, max_steps): modest lengths keep the package small (a few MB with frames).
PLAN = (("scripted", 4, 600), ("farmer", 3, 400), ("random", 3, 200))
SEED = 2024
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "workbench" / "data" / "sample"


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"corpus folder (default {DEFAULT_OUT})")
    parser.add_argument("--workers", type=int, default=2, help="recording worker processes (default 2)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing sample corpus")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.overwrite:
        parser.error(f"{args.out} exists; pass --overwrite to replace it")
    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        for policy, episodes, max_steps in PLAN:
            report = record(policy, episodes, Path(tmp) / policy, seed=SEED, max_steps=max_steps, workers=args.workers)
            print(report)
            if report.failed:
                return 1
            parts.append(load_corpus(Path(tmp) / policy))
        # Save beside the target, then swap, so a failure never leaves half a sample corpus.
        staged = args.out.with_name(f".{args.out.name}.new")
        shutil.rmtree(staged, ignore_errors=True)
        Corpus.concat(parts).save(staged)
        (staged / ".corpus.lock").unlink(missing_ok=True)  # the writers' lock file: not package data
    shutil.rmtree(args.out, ignore_errors=True)
    staged.rename(args.out)
    corpus = load_corpus(args.out)
    print(
        f"{args.out}: {len(corpus)} episodes, {int(corpus.index.steps.sum())} steps, "
        f"{folder_size(args.out) / 1e6:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
