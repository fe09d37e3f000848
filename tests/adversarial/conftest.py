"""Fixtures of the adversarial tests: nothing outside the test's folder changes; a full disk; a
read-only folder."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.hostile import TRAINING_TOML, stamps, tmpfs


@pytest.fixture(autouse=True)
def outside_untouched(tmp_path: Path) -> Iterator[None]:
    """Nothing outside the test's temp folder changes: the repository's data and configs, and
    no file is left in the working directory."""
    before, cwd = stamps(), sorted(os.listdir("."))
    yield
    assert stamps() == before
    assert sorted(os.listdir(".")) == cwd


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a full filesystem: a 256 KB tmpfs filled up (or, without mount rights, every
    fsync of a written file raising ENOSPC)."""
    root = tmp_path / "full"
    with tmpfs(root, "256k") as mounted:
        if mounted:  # leave room for a few small files only
            free = os.statvfs(root).f_bavail * os.statvfs(root).f_frsize
            (root / "filler").write_bytes(b"\0" * (free - 16 * 1024))
        else:

            def no_space(path: object) -> None:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

            monkeypatch.setattr("workbench.util.atomic._fsync", no_space)
        yield root


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody can write into (a read-only tmpfs; without mount rights, mode 0555),
    holding ``train.toml``."""
    root = tmp_path / "ro"
    with tmpfs(root, "64k") as mounted:
        (root / "train.toml").write_text(TRAINING_TOML)
        if mounted:
            subprocess.run(["mount", "-o", "remount,ro", str(root)], check=True)
        else:
            root.chmod(0o555)
        try:
            yield root
        finally:
            if not mounted:
                root.chmod(0o755)
