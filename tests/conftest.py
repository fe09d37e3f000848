"""Shared fixtures: the task app's own vectors from ``../shared/spec/vectors``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The contract lives beside the checkout (../shared/spec), as CI lays it out;
# WORKBENCH_SPEC points elsewhere when a clone sits somewhere else.
SPEC = Path(os.environ.get("WORKBENCH_SPEC", REPO.parent / "shared" / "spec"))
VECTORS = SPEC / "vectors"
if not (VECTORS / "decisions.jsonl").exists():
    raise pytest.UsageError(
        f"the task app's vectors are not at {VECTORS}: put shared/ beside the checkout "
        "or set WORKBENCH_SPEC to the spec folder"
    )


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="session")
def decision_vectors() -> list[dict]:
    return read_jsonl(VECTORS / "decisions.jsonl")


@pytest.fixture(scope="session")
def episode_vectors() -> list[dict]:
    return read_jsonl(VECTORS / "episodes.jsonl")


def exact(value) -> str:
    """A rendering that differs whenever keys, key order, types or float bits differ."""
    return json.dumps(value, allow_nan=True)
