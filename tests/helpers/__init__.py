"""What many test modules share: the repository's paths and the task app's vectors.

Test modules import from here (``from helpers import REPO``), never from ``conftest`` or from
each other; ``tests`` is on pytest's ``pythonpath``.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"


def read_jsonl(path: Path) -> list[dict]:
    """The JSON documents of a JSON Lines file, one per non-blank line."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def exact(value) -> str:
    """A rendering that differs whenever keys, key order, types or float bits differ."""
    return json.dumps(value, allow_nan=True)
