"""Atomic file writes: a target file is either completely written or left as it was.

Every writer goes through ``atomic_path``: the data is written to a temporary file in the
target's own directory (same filesystem, so the final rename is atomic), flushed to disk, then
renamed into place in one step. A crash or an exception while writing leaves the old file (or
no file) behind, never a half-written one, and the temporary file is removed.

An existing file is replaced only with ``overwrite=True``; otherwise ``TargetExistsError`` (a
``FileExistsError`` and a ``WorkbenchError``) names
the file. The check happens before any work and again at the rename (a hard link, which fails
if the name was taken meanwhile), so a file created concurrently is not clobbered either.
A replaced file keeps its permission bits; a symlink keeps pointing at the file it named.
A folder's own file (``own=True``: a watcher's state) is never reached through a symlink: one
at the name is refused, and the rename replaces the name itself, so a link swapped in after
the check is replaced, never written through.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from workbench.errors import OutputError, TargetExistsError, UnsafePathError, WorkbenchError

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text", "fsync_file", "fsync_folder", "write_errors_named"]


def atomic_write_text(path: str | Path, text: str, *, overwrite: bool = False, own: bool = False) -> Path:
    """Write ``text`` as UTF-8, byte for byte (no newline translation), atomically.

    Args:
        path: The file to write.
        text: Its content.
        overwrite: Replace an existing file.
        own: ``path`` is a file its folder owns (see ``atomic_path``).

    Returns:
        ``path``, as given (a symlink there is written through, unless ``own``).

    Raises:
        TargetExistsError: ``path`` exists and ``overwrite`` is False.
        UnsafePathError: With ``own``, a symlink, folder, FIFO or device at the name.
    """
    return atomic_write_bytes(path, text.encode("utf-8"), overwrite=overwrite, own=own)


def atomic_write_bytes(path: str | Path, data: bytes, *, overwrite: bool = False, own: bool = False) -> Path:
    """Write ``data`` atomically.

    Args:
        path: The file to write.
        data: Its content.
        overwrite: Replace an existing file.
        own: ``path`` is a file its folder owns (see ``atomic_path``).

    Returns:
        ``path``, as given (a symlink there is written through, unless ``own``).

    Raises:
        TargetExistsError: ``path`` exists and ``overwrite`` is False.
        UnsafePathError: With ``own``, a symlink, folder, FIFO or device at the name.
    """
    with atomic_path(path, overwrite=overwrite, own=own) as tmp:
        tmp.write_bytes(data)
    return Path(path)


@contextmanager
def atomic_path(path: str | Path, *, overwrite: bool = False, own: bool = False) -> Iterator[Path]:
    """Yield a temporary path to write to; on success it is renamed to ``path``.

    The temporary file already exists (empty) when yielded, so its name is reserved; write it
    by name (``open(tmp, "wb")``, ``np.savez(tmp, ...)``). If the ``with`` body raises, the
    temporary file is removed and ``path`` is untouched.

    Args:
        path: The file to write.
        overwrite: Replace an existing file (else ``TargetExistsError``).
        own: ``path`` is a file its folder owns: never followed if a symlink (the final rename
            replaces the name itself).

    Yields:
        The temporary path, in ``path``'s folder.

    Raises:
        TargetExistsError: ``path`` exists and ``overwrite`` is False.
        UnsafePathError: With ``own``, a symlink, folder, FIFO or device at the name.
    """
    target = _checked_own(Path(path)) if own else _resolve(Path(path))
    if not overwrite:
        _refuse_existing(target)
    tmp = _reserve_temp(target)
    try:
        yield tmp
        _fsync(tmp)
        if own:
            _keep_own_mode(target, tmp)
        elif overwrite and target.exists():
            shutil.copymode(target, tmp)
        _move_into_place(tmp, target, overwrite)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def write_errors_named(path: str | Path, what: str = "cannot write") -> Iterator[None]:
    """Turn an ``OSError`` raised while writing ``path`` (unwritable folder, disk full, name too
    long...) into an ``OutputError`` naming ``path`` and the reason; a ``WorkbenchError`` (e.g.
    ``TargetExistsError``) passes through unchanged.

    Args:
        path: The path the messages name.
        what: What failed, for the message.

    Yields:
        Nothing: the ``with`` body runs.

    Raises:
        OutputError: The body raised an ``OSError``.
    """
    try:
        yield
    except WorkbenchError:
        raise
    except OSError as error:
        reason = error.strerror or str(error)
        where = error.filename if error.filename and str(error.filename) != str(path) else None
        detail = f" ({where})" if where else ""
        raise OutputError(f"{path}: {what}: {reason}{detail}") from None


def _resolve(path: Path) -> Path:
    # Replacing a symlink itself would turn it into a regular file and leave the file it
    # points at unchanged; write where it points instead, as editors do.
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _checked_own(target: Path) -> Path:
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return target
    if stat.S_ISLNK(mode):
        raise UnsafePathError(f"{target}: is a symlink; remove it (the folder holds its own files)")
    if not stat.S_ISREG(mode):
        raise UnsafePathError(f"{target}: is not a regular file (a folder, a FIFO or a device); remove it")
    return target


def _keep_own_mode(target: Path, tmp: Path) -> None:
    # lstat, not stat: a symlink swapped in meanwhile lends no mode (and is replaced, not followed).
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        os.chmod(tmp, stat.S_IMODE(mode))


def _refuse_existing(target: Path) -> None:
    if target.exists():
        raise TargetExistsError(f"{target}: already exists; pass overwrite=True to replace it")


def _reserve_temp(target: Path) -> Path:
    # os.open with mode 0o666 lets the umask decide permissions, as for any new file
    # (tempfile.mkstemp would force 0o600).
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    return tmp


def _fsync(path: Path) -> None:
    """Flush the data to disk so the rename can never expose an empty or partial file."""
    fd = os.open(path, os.O_RDWR)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    """Flush a file written by name to disk (before a rename makes it visible).

    Args:
        path: The file.
    """
    _fsync(path)


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (renames into it) to disk; a no-op where folders cannot be opened.

    Args:
        folder: The folder.
    """
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a folder: the renames are still made
    finally:
        os.close(fd)


def _move_into_place(tmp: Path, target: Path, overwrite: bool) -> None:
    if overwrite:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)  # atomic "create only if absent"
    except FileExistsError:
        raise TargetExistsError(f"{target}: already exists; pass overwrite=True to replace it") from None
    except OSError:
        # Filesystems without hard links (FAT, some network mounts): check, then rename.
        _refuse_existing(target)
        os.replace(tmp, target)
        return
    tmp.unlink()
