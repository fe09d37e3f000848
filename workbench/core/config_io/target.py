"""The training TOML ``export`` rewrites: checked before, kept intact, failing harmlessly.

Only a regular file, only a writable one (unless forced), its hard links kept, its line endings
kept, and a failed write named and harmless."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from workbench.errors import OutputError
from workbench.util.atomic import atomic_write_text, write_errors_named


def check_target(path: Path, *, force: bool) -> os.stat_result:
    """The file's status when ``export`` may rewrite it. Raises ``OutputError`` naming it when
    it is not a regular file (a FIFO would hang the read, a device never end), or, unless
    ``force``, when it is read-only (no write bit, or this user may not write it) or has other
    hard links (a replace would leave them at the old text)."""
    try:
        status = path.stat()
    except OSError as error:
        raise OutputError(f"{path}: cannot read: {error.strerror}") from None
    if not stat.S_ISREG(status.st_mode):
        raise OutputError(f"{path}: not a regular file; export updates an existing training TOML file")
    if force:
        return status
    if not status.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise OutputError(
            f"{path}: read-only (mode {stat.S_IMODE(status.st_mode):04o}); export will not replace it: "
            "make it writable, or pass --force (force=True) to replace it anyway (it keeps its mode)"
        )
    if status.st_nlink > 1:
        raise OutputError(
            f"{path}: has {status.st_nlink} hard links; replacing it would leave the other links at the old "
            "text: pass --force (force=True) to update the file in place, so every link sees the change"
        )
    return status


def same_line_endings(new_text: str, old_text: str) -> str:
    """``new_text`` with the line endings of ``old_text`` when those were all CRLF (tomlkit
    writes the lines it adds with LF); any other file is left as tomlkit wrote it."""
    lf = old_text.count("\n")
    if lf and old_text.count("\r\n") == lf:
        return new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    return new_text


def write_target(path: Path, text: str, status: os.stat_result) -> None:
    """Write ``text`` into the export target ``path`` (``status`` from ``check_target``).

    A file with one link is replaced atomically (keeping its mode); one with several links
    (allowed only by ``force``) is rewritten in place, after reserving the space it needs, so
    a full disk fails before a byte changes. Raises ``OutputError`` naming the file when it
    cannot be written (unwritable folder, disk full).
    """
    with write_errors_named(path, "cannot export"):
        if status.st_nlink <= 1:
            atomic_write_text(path, text, overwrite=True)
            return
        data = text.encode("utf-8")
        fd = os.open(path, os.O_WRONLY)
        try:
            if len(data) > status.st_size:
                os.posix_fallocate(fd, 0, len(data))
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        finally:
            os.close(fd)
