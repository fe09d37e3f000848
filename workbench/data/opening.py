"""Opening the corpus a user names: the word ``sample`` (the shipped sample) or a corpus folder."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from workbench.data.episodes import Corpus
from workbench.data.storage import MARKER, load_corpus
from workbench.errors import CorpusFormatError, WorkbenchError

__all__ = ["SAMPLE", "index_errors_named", "open_corpus"]

#: The word that names the sample corpus shipped with the package (``./sample`` names a folder).
SAMPLE = "sample"


def open_corpus(spec: str | Path) -> Corpus:
    """The corpus a user names, on the command line or in the dashboard's box.

    Args:
        spec: ``"sample"`` for the shipped sample corpus, else a corpus folder (``~`` expanded;
            blanks around it ignored, as typed into a box).

    Returns:
        The corpus.

    Raises:
        CorpusFormatError: nothing named, no such folder, or a folder that is not a readable
            corpus (naming its ``corpus.json`` when its index cannot be read).
    """
    text = str(spec).strip()
    if text == SAMPLE:
        from workbench.data.sample import sample_corpus  # shipped data: only touched when asked for

        return sample_corpus()
    if not text:
        raise CorpusFormatError("no corpus folder given")
    root = Path(text).expanduser()
    if not root.is_dir():
        raise CorpusFormatError(f"{text}: no such corpus folder")
    with index_errors_named(root):
        return load_corpus(root)


@contextmanager
def index_errors_named(root: Path) -> Iterator[None]:
    """Around code that reads only ``root``'s index: whatever breaks is the index's fault.

    Args:
        root: the corpus folder being read.

    Raises:
        CorpusFormatError: naming ``root``'s ``corpus.json``, for any error that is not already
            a ``WorkbenchError`` (which passes through).
    """
    try:
        yield
    except WorkbenchError:
        raise
    except (OSError, UnicodeDecodeError, TypeError, KeyError, AttributeError, ValueError) as error:
        raise CorpusFormatError(
            f"{root / MARKER}: not a readable corpus index ({type(error).__name__}: {str(error)[:120]})"
        ) from None
