"""A save in several parts that commits all of them or none: ``staged_save``, for imports too large to hold."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from workbench.data.episodes import Corpus
from workbench.data.storage import columnar
from workbench.data.storage.layout import writing
from workbench.errors import TargetExistsError
from workbench.util.atomic import fsync_folder, write_errors_named


class StagedSave:
    """A save in several parts that commits whole or not at all (``staged_save``): each ``add``
    writes one part without committing it; leaving the ``with`` block commits them all.

    Args:
        root: The corpus folder (its writers' lock held by ``staged_save``).
        overwrite: Replace episodes whose ids ``root`` already holds.
        held: The ids ``root`` holds (read under the lock).
        hint: How the error for an id ``root`` holds names the way to replace it.
    """

    def __init__(self, root: Path, overwrite: bool, held: Collection[str], hint: str = "overwrite=True") -> None:
        self.root = root
        self.overwrite = overwrite
        self.hint = hint
        self.held = set(held)
        self.staged: list[Path] = []
        self.parts: list[str] = []
        self.logged_texts: Sequence[str | None] | None = None

    # A hand-over of its own, so ``add`` keeps its one argument for whoever calls or wraps it.
    def hand_logged_texts(self, texts: Sequence[str | None]) -> None:
        """Give the next ``add`` its episodes' ``logged`` texts as ``check_storable`` made them
        (the episodes unchanged since), so they are not encoded again.

        Args:
            texts: Per episode of the next ``add``'s corpus, in order, its text (None: made there).
        """
        self.logged_texts = texts

    def add(self, corpus: Corpus) -> None:
        """Write ``corpus`` as one more uncommitted part (with the texts ``hand_logged_texts``
        gave it, if any).

        Args:
            corpus: The episodes (ids unique in the whole save).

        Raises:
            TargetExistsError: An id ``root`` already holds, without ``overwrite``.
            EpisodeValueError: A value that cannot be stored (nothing of this part is kept).
        """
        texts, self.logged_texts = self.logged_texts, None  # for this add only
        clashes = [i for i in corpus.ids if i in self.held]
        if clashes and not self.overwrite:
            raise TargetExistsError(
                f"{self.root}: already holds episode(s) {clashes[:5]}; pass {self.hint} to replace them"
            )
        part = columnar.append(self.root, corpus, set(clashes), staged=self.staged, logged_texts=texts)
        if part is not None:
            self.parts.append(part)


@contextmanager
def staged_save(root: str | Path, *, overwrite: bool = False, hint: str = "overwrite=True") -> Iterator[StagedSave]:
    """For the ``with`` block: a save into ``root`` in parts (``StagedSave.add``; each bounds the
    memory a large import needs to one part's episodes) that commits all of them when the block
    ends, or none of them if it raises (Ctrl-C included): the folder is then as it was. The
    writers' lock is held throughout; a crash mid-way leaves only files the next writer removes.

    Args:
        root: The corpus folder (made if missing).
        overwrite: Replace episodes whose ids ``root`` already holds.
        hint: How the error for an id ``root`` holds names the way to replace it.

    Yields:
        The save.

    Raises:
        TargetExistsError: From ``add``: an id ``root`` already holds, without ``overwrite``.
        CorpusFormatError: ``root`` is of another schema version or unsafe.
        OutputError: ``root`` cannot be written (disk full, no permission).
    """
    root = Path(root)
    with write_errors_named(root, "cannot save the corpus"), writing(root):
        save = StagedSave(root, overwrite, columnar.stored_ids(root), hint)
        try:
            yield save
            commit_staged(root, save.staged)
        except BaseException:
            discard_staged(save.staged)
            raise


def commit_staged(root: Path, staged: list[Path]) -> None:
    """Commit the parts ``append`` staged (under the lock that staged them): each temporary
    episodes table renamed into place, its part's commit. If a rename fails, those already made
    are undone (renamed back) before raising, so no staged part stays committed."""
    pending = [path for path in staged if path.parent.name == "episodes"]
    done: list[tuple[Path, Path]] = []
    try:
        for path in pending:
            target = path.parent / path.name[1:].rsplit(".", 2)[0]  # ".<part>.parquet.<hex>.tmp"
            os.rename(path, target)
            done.append((path, target))
        fsync_folder(root / "episodes")
    except BaseException:
        for path, target in reversed(done):
            os.rename(target, path)
        raise


def discard_staged(staged: list[Path]) -> None:
    """Remove every file of parts ``append`` staged (never committed)."""
    for path in staged:
        path.unlink(missing_ok=True)
