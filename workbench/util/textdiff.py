"""The lines that differ between two versions of a text file, e.g. a training TOML before and after an export."""

from __future__ import annotations

import difflib
from pathlib import Path

__all__ = ["changed_lines"]


def changed_lines(before: str | Path, after: str | Path, *, context: int = 0) -> str:
    """A unified diff of ``after`` against ``before`` without its file header: one ``@@ -a,b +c,d @@``
    line per changed block (line numbers in the old and new text), then the removed lines (``-``),
    the added ones (``+``) and ``context`` unchanged lines around each block. ``before`` and
    ``after`` are texts, or paths of files to read (UTF-8).

    Args:
        before: The old text or file.
        after: The new text or file.
        context: Unchanged lines shown around each block.

    Returns:
        The diff, or "" when nothing changed.

    Raises:
        OSError: A path cannot be read.
    """
    old, new = (value.read_text(encoding="utf-8") if isinstance(value, Path) else value for value in (before, after))
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), n=context, lineterm="")
    return "\n".join(line for line in diff if not line.startswith(("---", "+++")))
