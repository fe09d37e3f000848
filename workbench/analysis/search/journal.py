"""The search's Optuna journal file (``--storage``): checked line by line before Optuna reads it, then opened."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import optuna

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


def open_study(storage: str | Path | None, study_name: str, sampler: optuna.samplers.BaseSampler) -> optuna.Study:
    """The study ``study_name``: in memory, or in the journal file ``storage`` (checked first,
    created if missing, resumed if it holds the study).

    Args:
        storage: None (in memory) or the journal file's path.
        study_name: The study's name in the journal.
        sampler: The sampler the study asks with.

    Returns:
        A study that maximises, new or resumed.

    Raises:
        SearchError: ``storage`` is not a journal Optuna can resume (naming the file and line).
    """
    if storage is None:
        return optuna.create_study(sampler=sampler, study_name=study_name, direction="maximize")
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    check_journal(storage)
    try:
        backend = JournalStorage(JournalFileBackend(str(storage)))  # replays the journal
        return optuna.create_study(
            storage=backend, sampler=sampler, study_name=study_name, direction="maximize", load_if_exists=True
        )
    except Exception as error:  # noqa: BLE001 - well-formed lines whose operations do not fit together
        raise SearchError(
            f"{storage}: not a journal of a study Optuna can resume ({type(error).__name__}: {str(error)[:120]})"
        ) from None
