"""Which files of a folder being written are complete: size and mtime stable across two polls.

A writer that is still writing changes a file's size or mtime between two polls, so a file is
offered for reading only once its signature (size, mtime in ns) is the one the previous poll
saw. A file that then does not read cleanly (a JSON document cut short, a ``.npz`` without its
zip directory) may still be in the writer's hands (a writer that paused): it is retried while it
stays unchanged, for ``retries`` more polls, and only then becomes a named problem. The
problem is reported once per signature; a file that changes again is read again.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

#: (size in bytes, mtime in ns): a file's identity between two polls.
Signature = tuple[int, int]


@dataclass
class _Seen:
    signature: Signature
    failures: int = 0
    reported: bool = False


@dataclass
class FileSettler:
    """Tracks the files under ``root`` whose names end in ``suffixes`` (any case).

    ``taken`` maps a file (relative path, POSIX) to the signature it was read at: such a file is
    offered again only after it changes (a JSON Lines file that grows, a file rewritten).
    """

    root: Path
    suffixes: Collection[str]
    taken: dict[str, Signature] = field(default_factory=dict)
    retries: int = 2
    #: Folders under ``root`` the last scan could not list (path -> the reason): their files
    #: cannot be seen, which the source reports rather than skipping them silently.
    unreadable: dict[str, str] = field(default_factory=dict)
    _seen: dict[str, _Seen] = field(default_factory=dict)

    def ready(self) -> tuple[list[tuple[str, Signature]], int]:
        """The files complete since the last poll (relative path, signature), in name order,
        and how many others are still settling (changed since the last poll)."""
        current = self._scan()
        ready: list[tuple[str, Signature]] = []
        settling = 0
        for rel, signature in sorted(current.items()):
            if self.taken.get(rel) == signature:
                continue
            seen = self._seen.get(rel)
            if seen is None or seen.signature != signature:
                self._seen[rel] = _Seen(signature)
                settling += 1
            elif not seen.reported:
                ready.append((rel, signature))
        for gone in set(self._seen) - set(current):
            del self._seen[gone]
        return ready, settling

    def take(self, rel: str, signature: Signature) -> None:
        """Record that ``rel`` was read cleanly at ``signature``."""
        self.taken[rel] = signature
        self._seen.pop(rel, None)

    def failed(self, rel: str, signature: Signature) -> bool:
        """Record that ``rel`` did not read cleanly at ``signature``; True when it has now failed
        ``retries + 1`` times unchanged (report it: it is taken as it is, problem named)."""
        seen = self._seen.setdefault(rel, _Seen(signature))
        seen.failures += 1
        if seen.failures > self.retries:
            seen.reported = True
            self.taken[rel] = signature
            return True
        return False

    def _scan(self) -> dict[str, Signature]:
        """Signatures of the matching regular files (symlinks are not followed; hidden files,
        such as a writer's temporary files, are skipped)."""
        found: dict[str, Signature] = {}
        if not self.root.is_dir():
            return found
        suffixes = {s.lower() for s in self.suffixes}
        self.unreadable = {}

        def unreadable(error: OSError) -> None:
            self.unreadable[str(error.filename)] = error.strerror or str(error)

        for folder, dirs, files in os.walk(self.root, onerror=unreadable, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in files:
                if name.startswith(".") or Path(name).suffix.lower() not in suffixes:
                    continue
                path = Path(folder) / name
                try:
                    info = path.lstat()
                except OSError:  # removed between the listing and the stat
                    continue
                if path.is_symlink() or not path.is_file():
                    continue
                found[path.relative_to(self.root).as_posix()] = (info.st_size, info.st_mtime_ns)
        return found
