"""Adding ``key = value`` lines right after one line of a tomlkit document, on tomlkit's public API.

tomlkit can replace a value where it stands or append a key to a table, but it has no public
way to put a new key at a chosen place: an appended key lands after unrelated keys (or after
the blank lines before a sub-table). ``LinesAfter`` keeps the new lines aside while the
document is edited and splices them into its text when it is rendered: the anchor item is
given a unique comment for the rendering, so its line is found exactly in the text, and its own
comment is put back. The caller parses the result again (export checks that it reads back as
the table it wrote).
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.items import Item, Table
from tomlkit.toml_document import TOMLDocument


class LinesAfter:
    """New ``key = value`` lines for a table, rendered right after the last of its anchor lines.

    The anchor is chosen when the document is rendered, so a line removed after keys were added
    (an edit removing the last step_rewards line while adding another) is no anchor.
    """

    def __init__(self, table: Any, anchor_keys: Collection[str]) -> None:
        """Args:
        table: the tomlkit table (or document) the lines belong to.
        anchor_keys: the keys whose ``key = value`` lines the new lines should follow.
        """
        self.table = table
        self.anchor_keys = frozenset(anchor_keys)
        self.pending: list[tuple[str, Any]] = []

    def add(self, key: str, value: Any) -> None:
        """Put ``key = value`` after the anchor lines (and after the lines added before it)."""
        self.pending.append((key, value))

    def render(self, doc: TOMLDocument) -> str:
        """``doc`` (which holds ``table``) as text with the added lines after the last anchor line.

        With no anchor line left the lines are plain assignments (tomlkit appends them).

        Raises:
            ValueError: the anchor's line cannot be found once in the rendered text.
        """
        # A line after a [sub.table] header would land inside that table: only key = value lines.
        anchors = [k for k in self.table if k in self.anchor_keys and not isinstance(self.table[k], Table)]
        # A table's items are its container's (``Table.value``); a table split over the file
        # (tomlkit's proxy of it) has no single place: the lines are appended.
        items = self.table.value if isinstance(self.table, Table) else self.table
        if not anchors or not isinstance(items, Container):
            for key, value in self.pending:
                self.table[key] = value
            return doc.as_string()
        if not self.pending:
            return doc.as_string()
        anchor = items.item(anchors[-1])
        if not isinstance(anchor, Item):  # a key = value line is an Item, never a table proxy
            raise ValueError(f"{anchors[-1]}: not a key = value line")
        lines = "".join("\n" + anchor.trivia.indent + _line(key, value) for key, value in self.pending)
        trivia = anchor.trivia
        comment_ws, comment = trivia.comment_ws, trivia.comment
        marker = f"# workbench-anchor-{secrets.token_hex(16)}"
        anchor.comment(marker)  # rendered as " " + marker at the end of the anchor's line
        try:
            text = doc.as_string()
        finally:
            trivia.comment_ws, trivia.comment = comment_ws, comment
        if text.count(marker) != 1:
            raise ValueError("the line to add keys after is not in the document")
        start = text.index(marker) - 1
        end = text.find("\n", start)
        end = len(text) if end < 0 else end - (text[end - 1] == "\r")  # before a CRLF's CR
        return text[:start] + comment_ws + comment + text[start + 1 + len(marker) : end] + lines + text[end:]


def _line(key: str, value: Any) -> str:
    """``key = value`` as tomlkit writes it (the key quoted where TOML needs it)."""
    document = tomlkit.document()
    document.add(key, value)
    return document.as_string().rstrip("\n")
