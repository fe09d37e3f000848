"""Files a folder owns (a watcher's state and lock): read and locked without following symlinks or blocking on a FIFO.

A planted symlink could send a read or a write outside the folder, and a FIFO would hang a
read for ever, so every open here uses ``O_NOFOLLOW`` (a symlink at the name fails the open
itself, no check-then-open gap) and ``O_NONBLOCK`` (a FIFO opens at once), then checks on the
open descriptor that it is a regular file. Writes go through ``atomic_write_bytes(...,
own=True)``, whose rename replaces the name itself, never what it points at.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from workbench.errors import UnsafePathError

__all__ = ["OwnedLock", "LockHeld", "open_owned", "read_owned"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class LockHeld(Exception):
    """Another process holds an ``OwnedLock``."""


def open_owned(path: Path, flags: int, what: str) -> int:
    """A descriptor of the regular file ``path`` opened with ``flags`` plus ``O_NOFOLLOW`` and
    ``O_NONBLOCK``. Raises ``FileNotFoundError`` when it is missing (and ``O_CREAT`` not given),
    ``UnsafePathError`` naming ``what`` and the path when it is a symlink (a loop too), a folder,
    a FIFO or a device, or cannot be opened."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK, 0o666)
    except FileNotFoundError:
        raise
    except OSError as error:
        if error.errno == errno.ELOOP or os.path.islink(path):
            raise UnsafePathError(
                f"{path}: the {what} is a symlink; remove it (the folder holds its own files)"
            ) from None
        if error.errno == errno.EISDIR:
            raise UnsafePathError(f"{path}: the {what} is a folder; remove it") from None
        raise UnsafePathError(f"{path}: the {what} cannot be opened ({error.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafePathError(f"{path}: the {what} is not a regular file (a folder, a FIFO or a device); remove it")
    return fd


def read_owned(path: Path, what: str, *, limit: int = 64 * 1024 * 1024) -> bytes | None:
    """The bytes of the owned file ``path``, or None when it does not exist. Raises
    ``UnsafePathError`` (see ``open_owned``) and when it holds more than ``limit`` bytes."""
    try:
        fd = open_owned(path, os.O_RDONLY, what)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnsafePathError(f"{path}: the {what} is larger than {limit} bytes; remove it")
    return data


class OwnedLock:
    """An exclusive ``flock`` on the owned file ``path`` (made if missing), never through a
    symlink: ``filelock`` opens its lock file following symlinks (and truncates the target).
    Where ``flock`` is missing (Windows) the open descriptor alone is held."""

    def __init__(self, path: Path, what: str) -> None:
        self.path, self.what = Path(path), what
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock at once. Raises ``LockHeld`` when another process holds it and
        ``UnsafePathError`` when the lock file is a symlink, a folder or not a regular file."""
        fd = open_owned(self.path, os.O_RDWR | os.O_CREAT, self.what)
        try:
            import fcntl
        except ImportError:  # Windows: no flock
            self._fd = fd
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(str(self.path)) from None
        except OSError:  # a filesystem without flock: the descriptor alone
            pass
        self._fd = fd

    @property
    def is_locked(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Let the lock go (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)  # closing releases the flock
            self._fd = None
