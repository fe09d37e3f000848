"""Shared fixtures: the task app's own vectors, shipped in ``tests/vectors`` (see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VECTORS = Path(__file__).resolve().parent / "vectors"


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
