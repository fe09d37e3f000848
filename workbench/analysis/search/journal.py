"""The search's Optuna journal file (``--storage``): checked line by line before Optuna reads or appends to it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from workbench.errors import SearchError

#: Optuna's journal operations (``optuna.storages.journal._storage.JournalOperation``: 0..10).
_OP_CODES = range(11)


def check_journal(path: str | Path) -> None:
    """``SearchError`` naming ``path`` (and the line) unless it is absent or a regular file of
    Optuna journal lines: UTF-8 JSON objects with an ``op_code`` Optuna knows and a
    ``worker_id``, each ended by a newline (an unfinished last line is a crashed write, and
    Optuna would append after it). Optuna itself checks what the operations say."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise SearchError(f"{path}: cannot read the search journal ({error.strerror})") from None
    if stat.S_ISLNK(mode) or not stat.S_ISREG(mode):
        kind = "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
        raise SearchError(f"{path}: the search journal is {kind}; give a file of its own")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SearchError(f"{path}: cannot read the search journal ({error.strerror})") from None
    lines = data.split(b"\n")
    if lines[-1]:
        raise SearchError(
            f"{path}: line {len(lines)} is incomplete (no newline: a crash while writing?); "
            "not an Optuna journal the search can resume"
        )
    for number, line in enumerate(lines[:-1], start=1):
        problem = _line_problem(line)
        if problem:
            raise SearchError(f"{path}: line {number}: {problem}; not an Optuna journal (written by --storage)")


def _line_problem(line: bytes) -> str | None:
    try:
        entry: Any = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except RecursionError:
        return "JSON nested too deeply"
    except ValueError as error:
        return f"not valid JSON ({str(error)[:80]})"
    if not isinstance(entry, dict):
        return f"a JSON {type(entry).__name__}, expected an object"
    code = entry.get("op_code")
    if isinstance(code, bool) or not isinstance(code, int) or code not in _OP_CODES:
        return f"op_code {code!r} is not an Optuna journal operation"
    if not isinstance(entry.get("worker_id"), str):
        return "no worker_id"
    return None
