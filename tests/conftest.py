"""Shared fixtures: the task app's own vectors, shipped in ``tests/vectors`` (see its README)."""

from __future__ import annotations

import pytest
from helpers import VECTORS, read_jsonl


@pytest.fixture(scope="session")
def decision_vectors() -> list[dict]:
    return read_jsonl(VECTORS / "decisions.jsonl")


@pytest.fixture(scope="session")
def episode_vectors() -> list[dict]:
    return read_jsonl(VECTORS / "episodes.jsonl")
