"""Lines added right after a chosen line of a TOML document, on tomlkit's public API only."""

from __future__ import annotations

import tomlkit

from workbench.core.config_io.insert_after import LinesAfter


def _render(text: str, table: str, anchors: set[str], *lines: tuple[str, object]) -> str:
    doc = tomlkit.parse(text)
    added = LinesAfter(doc[table], anchors)
    for key, value in lines:
        added.add(key, value)
    return added.render(doc)


def test_lines_follow_the_last_anchor_line_keeping_its_comment():
    text = "[t]\na = 1  # one\nb = 2\nother = 3\n\n[t.sub]\nc = 4\n"
    got = _render(text, "t", {"a", "b"}, ("x", True), ("y", 0.5))
    assert got == "[t]\na = 1  # one\nb = 2\nx = true\ny = 0.5\nother = 3\n\n[t.sub]\nc = 4\n"


def test_the_anchor_keeps_its_own_comment_and_indent():
    text = "[t]\n  a = 1   # keep me\n  z = 2\n"
    assert _render(text, "t", {"a"}, ("b", "s")) == '[t]\n  a = 1   # keep me\n  b = "s"\n  z = 2\n'


def test_keys_that_need_quotes_and_inline_tables():
    table = tomlkit.inline_table()
    table.update({"collect wood": 1.0})
    got = _render("[t]\na = 1\n", "t", {"a"}, ("w x", table))
    assert got == '[t]\na = 1\n"w x" = {"collect wood" = 1.0}\n'


def test_a_removed_anchor_is_no_anchor():
    doc = tomlkit.parse("[t]\na = 1\nb = 2\nz = 0\n")
    added = LinesAfter(doc["t"], {"a", "b"})
    added.add("c", 3)
    del doc["t"]["b"]  # removed after the line was added: the line follows ``a``
    assert added.render(doc) == "[t]\na = 1\nc = 3\nz = 0\n"


def test_without_an_anchor_line_the_keys_are_appended():
    assert _render("[t]\nz = 0\n", "t", {"a"}, ("a", 1), ("b", 2)) == "[t]\nz = 0\na = 1\nb = 2\n"


def test_crlf_and_a_last_line_without_newline():
    assert _render("[t]\r\na = 1\r\n", "t", {"a"}, ("b", 2)) == "[t]\r\na = 1\nb = 2\r\n"
    assert _render("[t]\na = 1", "t", {"a"}, ("b", 2)) == "[t]\na = 1\nb = 2"


def test_nothing_added_renders_the_document_unchanged():
    text = "# c\n[t]\na = 1 # x\n"
    assert _render(text, "t", {"a"}) == text
