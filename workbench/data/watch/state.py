"""The files a watcher owns in its target corpus folder: ``watch-state.json`` (progress) and ``.watch.lock``.

Both go through ``workbench.util.owned`` and ``workbench.util.atomic`` as the corpus's own
files do: never through a symlink (a planted ``watch-state.json -> ~/.bashrc`` is refused, and
a link swapped in later is replaced by the rename, never written through), never blocking on a
FIFO, and the state is parsed with a depth limit. Each problem is a ``WorkbenchError`` naming
the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.errors import WatchError
from workbench.util import jsonsafe
from workbench.util.atomic import atomic_write_text, write_errors_named
from workbench.util.owned import LockHeld, OwnedLock, read_owned

#: The watcher's state file and lock inside the target corpus folder.
STATE_FILE = "watch-state.json"
WATCH_LOCK = ".watch.lock"
STATE_FORMAT = "crafter-workbench-watch"


def target_folder(into: Path) -> None:
    """Make the target folder ``into`` (its parents too). Raises ``WatchError`` naming it when
    it is a file (or a FIFO...) or cannot be made."""
    if into.exists() and not into.is_dir():
        raise WatchError(f"{into}: the corpus to append into must be a folder (or one to make); this is a file")
    with write_errors_named(into, "cannot make the corpus folder"):
        into.mkdir(parents=True, exist_ok=True)


def take_lock(into: Path) -> OwnedLock:
    """The folder's watch lock, held. Raises ``WatchError`` when another watcher holds it and
    ``UnsafePathError`` when ``.watch.lock`` is a symlink (a loop too), a folder or a FIFO."""
    lock = OwnedLock(into / WATCH_LOCK, "watch lock")
    try:
        lock.acquire()
    except LockHeld:
        raise WatchError(f"{into}: another watcher is writing into this corpus ({WATCH_LOCK} is held)") from None
    return lock


def read_state(into: Path) -> dict[str, Any]:
    """The state file's contents; a missing one is an empty state. Raises ``UnsafePathError``
    for a symlink, FIFO or folder there and ``WatchError`` naming the file when it is not a
    watch state (not UTF-8 JSON, nested too deep, another document)."""
    path = into / STATE_FILE
    data = read_owned(path, "watch state")
    if data is None:
        return {}
    remedy = "remove it (the corpus remembers its episodes' origins: nothing is appended twice)"
    try:
        state = jsonsafe.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise WatchError(f"{path}: not UTF-8 text; {remedy}") from None
    except json.JSONDecodeError as error:
        raise WatchError(f"{path}: line {error.lineno}: not valid JSON ({error.msg}); {remedy}") from None
    except ValueError as error:  # nested too deeply, an integer of thousands of digits
        raise WatchError(f"{path}: not a watch state ({str(error)[:120]}); {remedy}") from None
    if not isinstance(state, dict) or not isinstance(state.get("sources"), dict):
        raise WatchError(f"{path}: not a watch state (an object with 'sources' expected); {remedy}")
    return state


def write_state(into: Path, sources: dict[str, Any]) -> dict[str, Any]:
    """Replace the state file with ``sources``' progress, atomically and never through a
    symlink; returns the state written. Raises ``OutputError`` / ``UnsafePathError`` naming it."""
    state = {"format": STATE_FORMAT, "version": 1, "sources": sources}
    path = into / STATE_FILE
    with write_errors_named(path, "cannot save the watch state"):
        atomic_write_text(path, json.dumps(state, indent=1, sort_keys=True), overwrite=True, own=True)
    return state
