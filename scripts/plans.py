"""Recording a plan of policies into one shipped corpus, for the scripts that make the sample corpora."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from workbench.data.episodes import Corpus
from workbench.data.recording import record
from workbench.data.storage import load_corpus


def folder_size(path: Path) -> int:
    """Total size in bytes of the files under ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def record_plan(
    plan: Sequence[tuple[str, int, int]], seed: int, out: Path, *, workers: int, frames: bool = True
) -> int:
    """Record every ``(policy, episodes, max_steps)`` of ``plan`` with corpus seed ``seed`` and save
    them as one corpus in ``out`` (written beside it, then swapped in, so a failure never leaves
    half a corpus); returns the process exit code (1 if an episode failed)."""
    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        for policy, episodes, max_steps in plan:
            report = record(
                policy, episodes, Path(tmp) / policy, seed=seed, max_steps=max_steps, workers=workers, frames=frames
            )
            print(report)
            if report.failed:
                return 1
            parts.append(load_corpus(Path(tmp) / policy))
        staged = out.with_name(f".{out.name}.new")
        shutil.rmtree(staged, ignore_errors=True)
        Corpus.concat(parts).save(staged)
        (staged / ".corpus.lock").unlink(missing_ok=True)  # the writers' lock file: not package data
    shutil.rmtree(out, ignore_errors=True)
    staged.rename(out)
    corpus = load_corpus(out)
    print(f"{out}: {len(corpus)} episodes, {int(corpus.index.steps.sum())} steps, {folder_size(out) / 1e6:.1f} MB")
    return 0
