"""The corpus folder itself: file names, the format marker, the writers' lock, safe reads, cleanup.

Every name in a corpus folder is made here (``new_part_name``) or is one of the fixed names
below; nothing is ever read or written by a name taken from a table row or an episode id. A
symlink anywhere in the folder is refused (``UnsafeCorpusPathError``), and files are opened
with ``O_NOFOLLOW`` so one planted between the check and the read is refused too.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from workbench.errors import CorpusFormatError, OutputError, UnsafeCorpusPathError, UnsafePathError
from workbench.util.atomic import atomic_write_text
from workbench.util.owned import LockHeld, OwnedLock

FORMAT = "crafter-workbench-corpus"
SCHEMA_VERSION = 2
MARKER = "corpus.json"
LOCK = ".corpus.lock"
#: The table folders the marker lists; a part ``P`` is ``episodes/P.parquet`` (its commit
#: record, written last), ``decisions/P.parquet`` and, when it has frames, ``frames/P.parquet``.
MARKED_TABLES = ("decisions", "episodes", "frames")
#: Every table folder: also ``events/P.parquet``, what opening needs of the decisions, derived
#: from them (``workbench.data.storage.events_table``; parts written before it have none, and
#: the marker does not list it, so older workbenches read the folder as before).
TABLES = (*MARKED_TABLES, "events")
PART_RE = re.compile(r"part-\d{20}-\d{1,10}-[0-9a-f]{8}")
_FILE_RE = re.compile(rf"({PART_RE.pattern})\.parquet")
#: Temporary files of ``workbench.util.atomic`` (hidden, so pandas and pyarrow skip them too).
_TEMP_RE = re.compile(r"\..+\.[0-9a-f]{16}\.tmp")
_LOCK_TIMEOUT = 600.0


def new_part_name() -> str:
    """A fresh part name: creation time (so parts sort in commit order), process id, random bits."""
    return f"part-{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"


def part_file(root: Path, table: str, part: str) -> Path:
    """The file of ``table`` for ``part`` (both checked: never a name from elsewhere).

    Args:
        root: The corpus folder.
        table: One of ``TABLES`` ("decisions", "episodes", "frames", "events").
        part: A tool-made part name (``part-<time>-<pid>-<random>``).

    Returns:
        ``root/table/part.parquet``.

    Raises:
        UnsafeCorpusPathError: ``table`` or ``part`` is not a name the storage makes.
    """
    if table not in TABLES or not PART_RE.fullmatch(part):
        raise UnsafeCorpusPathError(f"{root}: refusing the file name {table}/{part}.parquet")
    return root / table / f"{part}.parquet"


def refuse_symlinks(root: Path) -> None:
    """``UnsafeCorpusPathError`` naming the first symlink inside ``root`` (its tables included)."""
    if not root.is_dir():
        return
    for entry in _entries(root):
        if entry.is_symlink():
            raise UnsafeCorpusPathError(
                f"{entry.path}: is a symlink; a corpus folder must hold its own files "
                "(symlinks could point reads or writes outside it)"
            )
        if entry.name in TABLES and entry.is_dir(follow_symlinks=False):
            for inner in _entries(Path(entry.path)):
                if inner.is_symlink():
                    raise UnsafeCorpusPathError(
                        f"{inner.path}: is a symlink; a corpus folder must hold its own files "
                        "(symlinks could point reads or writes outside it)"
                    )


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as entries:
        return list(entries)


def committed_parts(root: Path) -> list[str]:
    """Names of the parts whose commit record (``episodes/P.parquet``) exists, in commit order.

    Args:
        root: The corpus folder.

    Returns:
        The part names.

    Raises:
        CorpusFormatError: A commit record that is not a regular file.
    """
    folder = root / "episodes"
    if not folder.is_dir():
        return []
    names = []
    for entry in _entries(folder):
        if match := _FILE_RE.fullmatch(entry.name):
            if not entry.is_file(follow_symlinks=False):  # never skipped: its part would vanish silently
                raise CorpusFormatError(f"{entry.path}: not a regular file (a part's commit record must be one)")
            names.append(match.group(1))
    return sorted(names)


def read_bytes(path: Path) -> bytes:
    """A corpus file's bytes, opened without following symlinks; errors name the file."""
    with open_file(path) as handle:
        return handle.read()


def open_file(path: Path) -> BinaryIO:
    """A corpus file opened for reading without following symlinks (a regular file only);
    ``CorpusFormatError`` / ``UnsafeCorpusPathError`` naming the file otherwise."""
    nonblock = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted at the name opens at once, not never
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | nonblock)
    except FileNotFoundError:
        raise CorpusFormatError(f"{path}: not found (the part it belongs to is incomplete)") from None
    except OSError as error:
        if path.is_symlink():
            raise UnsafeCorpusPathError(f"{path}: is a symlink; a corpus folder must hold its own files") from None
        raise CorpusFormatError(f"{path}: cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CorpusFormatError(f"{path}: not a regular file (a FIFO, socket or device)")
    if nonblock:
        os.set_blocking(fd, True)  # a regular file: reads as usual
    return os.fdopen(fd, "rb")


def read_marker(root: Path) -> dict[str, Any]:
    """The ``corpus.json`` document; ``CorpusFormatError`` naming the file when it is not one."""
    path = root / MARKER
    if not path.exists() and not path.is_symlink():
        raise CorpusFormatError(
            f"{path}: not found; is {root} a corpus folder (made by Corpus.save or `workbench record`)?"
        )
    try:
        document = json.loads(read_bytes(path).decode("utf-8"))
    except UnicodeDecodeError:
        raise CorpusFormatError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise CorpusFormatError(f"{path}: line {error.lineno}: not valid JSON ({error.msg})") from None
    except RecursionError:
        raise CorpusFormatError(f"{path}: JSON nested too deeply to be a corpus marker") from None
    except ValueError as error:  # an integer of thousands of digits
        raise CorpusFormatError(f"{path}: not valid JSON ({str(error)[:120]})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CorpusFormatError(f"{path}: not a workbench corpus index (format should be {FORMAT!r})")
    if document.get("schema_version") != SCHEMA_VERSION:
        raise CorpusFormatError(
            f"{path}: schema_version {document.get('schema_version')!r}; this workbench reads "
            f"schema_version {SCHEMA_VERSION} (the columnar layout) only"
        )
    # The marker holds nothing but these (the parts hold the rest): anything else is a hand edit
    # or another tool's file, and reading past it would guess.
    expected = json.loads(marker_text())
    for key, value in document.items():
        if key not in expected:
            raise CorpusFormatError(
                f"{path}: unknown key {key!r}; a columnar corpus marker holds {', '.join(expected)}"
            )
        if value != expected[key]:
            raise CorpusFormatError(f"{path}: {key} is {value!r}, expected {expected[key]!r}")
    return document


def marker_text() -> str:
    """What a new corpus folder's ``corpus.json`` says (the parts hold everything else)."""
    return (
        json.dumps(
            {"format": FORMAT, "schema_version": SCHEMA_VERSION, "layout": "columnar", "tables": list(MARKED_TABLES)},
            indent=1,
        )
        + "\n"
    )


@contextmanager
def writing(root: Path) -> Iterator[None]:
    """Hold the folder's writer locks, after making the folder and its marker.

    Two locks: an exclusive ``flock`` on the corpus folder itself (``folder_lock``), which no
    file deletion can break (a folder holding ``corpus.json`` cannot be removed), and the lock
    file ``.corpus.lock`` (``lock_file``; the only one where folders cannot be locked). Inside,
    no other writer is mid-write, so stray temporary files and the data files of a part that
    never committed are leftovers of a crashed write: they are removed on the way in (and even
    then only when the process that named the part is gone, see ``clean_leftovers``).
    ``UnsafeCorpusPathError`` when the lock file is a symlink or not a regular file."""
    if (root / MARKER).exists() or (root / MARKER).is_symlink():
        read_marker(root)  # a broken marker is named before anything, the lock file too, is made
    root.mkdir(parents=True, exist_ok=True)
    refuse_symlinks(root)
    _check_lock_file(root / LOCK)
    if (root / MARKER).exists() or (root / MARKER).is_symlink():
        # Refused before the lock file is made, so a write that cannot start leaves the folder
        # exactly as it was (read again under the lock: it may change while we wait).
        read_marker(root)
    with folder_lock(root), lock_file(root / LOCK):
        refuse_symlinks(root)
        _check_lock_file(root / LOCK)
        if (root / MARKER).exists():
            read_marker(root)  # another version or a tampered marker is refused before any write
        else:
            atomic_write_text(root / MARKER, marker_text())
        for table in TABLES:
            (root / table).mkdir(exist_ok=True)
        clean_leftovers(root)
        yield


def _check_lock_file(path: Path) -> None:
    """The lock file must be absent or a regular file (named before waiting for the lock; the
    open in ``lock_file`` refuses a symlink swapped in later)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise UnsafeCorpusPathError(
            f"{path}: the writers' lock is a symlink; remove it (a corpus folder holds its own files)"
        )
    if not stat.S_ISREG(mode):
        raise UnsafeCorpusPathError(f"{path}: the writers' lock is not a regular file; remove it")


@contextmanager
def folder_lock(root: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder ``root`` (waiting up to ``_LOCK_TIMEOUT``).

    Unlike a lock file, it cannot be deleted or replaced under a writer. Where folders cannot
    be locked (Windows, some network filesystems) this holds nothing and the lock file
    serves alone. ``OutputError`` when another writer holds it past the timeout."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    # The folder itself may be a symlink (the user's choice of path); only what is inside it is checked.
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        deadline = time.monotonic() + _LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OutputError(
                        f"{root}: another writer has held the corpus for {_LOCK_TIMEOUT:.0f} s; try again later"
                    ) from None
                lock_wait()
            except OSError:  # no flock on this filesystem's folders: the lock file alone
                break
        yield
    finally:
        os.close(fd)  # releases the flock


@contextmanager
def lock_file(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the lock file ``path`` (made if missing), waiting up to
    ``_LOCK_TIMEOUT``; opened with ``O_NOFOLLOW``, so a symlink swapped in after the checks is
    refused by the open itself, never followed (``filelock`` followed it and truncated the target).

    Raises:
        UnsafeCorpusPathError: the lock file is a symlink, a folder or not a regular file.
        OutputError: another writer held it past the timeout.
    """
    lock = OwnedLock(path, "the corpus writers' lock file")
    deadline = time.monotonic() + _LOCK_TIMEOUT
    while True:
        try:
            lock.acquire()
            break
        except LockHeld:
            if time.monotonic() > deadline:
                raise OutputError(
                    f"{path.parent}: another writer has held the corpus for {_LOCK_TIMEOUT:.0f} s; try again later"
                ) from None
            lock_wait()
        except UnsafePathError as error:
            raise UnsafeCorpusPathError(str(error)) from None
    try:
        yield
    finally:
        lock.release()


def lock_wait() -> None:
    """One pause while another writer holds the folder (a function of its own: tests watch it)."""
    time.sleep(0.02)


def _writer_alive(part: str) -> bool:
    """Whether the process that named ``part`` (its pid is in the name) may still be writing it:
    another live process on this machine. Our own process is not: under the folder lock no
    thread of ours is mid-write. A reused pid only keeps a leftover a while longer."""
    pid = int(part.split("-")[2])
    if pid == os.getpid():
        return False
    if os.name == "nt":  # os.kill would terminate the process there: keep the leftover
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process holds the pid
        return True
    except OverflowError:  # no process has such a pid
        return False
    return True


def clean_leftovers(root: Path) -> list[Path]:
    """Remove crashed writes' leftovers (call under the lock): temporary files, and decisions or
    frames files of parts without a commit record whose writer process is gone (a writer the
    locks did not stop, e.g. an older version, keeps its files). Returns what was removed."""
    committed = set(committed_parts(root))
    removed = []
    for table in TABLES:
        folder = root / table
        if not folder.is_dir():
            continue
        for entry in _entries(folder):
            match = _FILE_RE.fullmatch(entry.name)
            orphan = (
                table != "episodes"
                and match is not None
                and match.group(1) not in committed
                and not _writer_alive(match.group(1))
            )
            if (_TEMP_RE.fullmatch(entry.name) or orphan) and entry.is_file(follow_symlinks=False):
                Path(entry.path).unlink(missing_ok=True)
                removed.append(Path(entry.path))
    for entry in _entries(root):
        if _TEMP_RE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            Path(entry.path).unlink(missing_ok=True)
            removed.append(Path(entry.path))
    return removed
