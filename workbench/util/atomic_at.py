"""Atomic writes relative to a folder's descriptor: each step opened with ``O_NOFOLLOW``, so no swapped-in symlink redirects the write.

Checking a path and then writing to it by name leaves a gap: a folder on the way swapped for a
symlink in between sends the write elsewhere. Here the root folder is opened once, each folder
below it is opened relative to its parent's descriptor (``openat``) with ``O_NOFOLLOW`` and
``O_DIRECTORY``, and the temporary file, the rename and the link happen relative to the last
descriptor: whatever is swapped in later, the write lands in the folders opened.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from workbench.errors import TargetExistsError, UnsafePathError

__all__ = ["write_at"]

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def write_at(root: Path, parts: Sequence[str], data: bytes, *, overwrite: bool = False) -> Path:
    """Write ``data`` to ``root/parts...`` atomically, never through a symlink.

    Missing folders on the way (``root`` included) are made; ``root``'s own parents are the
    caller's and may be links.

    Args:
        root: the folder everything is written under.
        parts: plain names (no ``/``, ``.`` or ``..``): folders, then the file.
        data: the file's bytes.
        overwrite: replace an existing file (it keeps its permission bits).

    Returns:
        The path written.

    Raises:
        UnsafePathError: a part is not a plain name, or ``root``, a folder on the way or the file
            is a symlink or of the wrong kind (named).
        TargetExistsError: the file exists and ``overwrite`` is False.
        OSError: the write itself failed (unwritable folder, disk full).
    """
    if not parts or any(part in ("", ".", "..") or "/" in part or os.sep in part for part in parts):
        raise UnsafePathError(f"{'/'.join(parts)!r}: would leave the folder {root}")
    root.parent.mkdir(parents=True, exist_ok=True)
    fds = [_open_folder(None, root, root)]
    try:
        path = root
        for part in parts[:-1]:
            path = path / part
            fds.append(_open_folder(fds[-1], part, path))
        _replace_in(fds[-1], parts[-1], path / parts[-1], data, overwrite)
        return path / parts[-1]
    finally:
        for fd in fds:
            os.close(fd)


def _open_folder(parent: int | None, name: str | Path, path: Path) -> int:
    """The folder ``name`` (relative to ``parent``'s descriptor), made when missing."""
    for attempt in (0, 1):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if attempt:
                raise
            try:
                os.mkdir(name, dir_fd=parent)
            except FileExistsError:  # made meanwhile: open it (checked) on the second attempt
                pass
        except OSError as error:
            raise _unsafe(path, error) from None
    raise AssertionError("unreachable")


def _unsafe(path: Path, error: OSError) -> UnsafePathError:
    if error.errno == errno.ELOOP or os.path.islink(path):
        return UnsafePathError(f"{path}: is a symlink; the app writes only into its own folders (remove the link)")
    if error.errno == errno.ENOTDIR:
        return UnsafePathError(f"{path}: should be a folder")
    return UnsafePathError(f"{path}: cannot be opened ({error.strerror})")


def _replace_in(folder: int, name: str, path: Path, data: bytes, overwrite: bool) -> None:
    """Write ``data`` to a temporary file in ``folder``, then rename (or link) it to ``name``."""
    mode = None
    try:
        status = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISLNK(status.st_mode):
            raise UnsafePathError(f"{path}: is a symlink; the app writes only into its own folders (remove the link)")
        if not stat.S_ISREG(status.st_mode):
            raise UnsafePathError(f"{path}: should be a regular file")
        if not overwrite:
            raise TargetExistsError(f"{path}: already exists; pass overwrite=True to replace it")
        mode = stat.S_IMODE(status.st_mode)
    tmp = f".{name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666, dir_fd=folder)
    try:
        try:
            view = memoryview(data)
            while view:  # os.write may write less than asked
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            if mode is not None:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        if overwrite:
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
            return
        try:
            os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
        except FileExistsError:
            raise TargetExistsError(f"{path}: already exists; pass overwrite=True to replace it") from None
        os.unlink(tmp, dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except FileNotFoundError:
            pass
        raise
