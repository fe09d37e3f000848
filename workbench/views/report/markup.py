"""The report's HTML pieces: escaping, sortable tables, the page shell with its inline style and script.

Every text that comes from data (episode ids, policy and config names, messages) goes through
``text`` (``html.escape`` with quotes), so markup in a name is shown, never run. The only
script is the small table sorter below, inline; nothing is fetched.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: How a cell's value is written: a number format, or a function of the value.
Format = str | Callable[[Any], str]

STYLE = """
:root { --ink:#1d1d1f; --muted:#5f6368; --rule:#d9d9de; --flag:#b3261e; --note:#8a5a00; --ok:#1e7b34; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink);
  margin: 0 auto; padding: 16px 24px 48px; max-width: 1200px; }
h1 { font-size: 24px; margin: 8px 0 4px; } h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 15px; margin: 18px 0 6px; } p, li { max-width: 90ch; } .muted { color: var(--muted); }
nav.toc { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 13px; margin: 6px 0 12px; }
a { color: #0b57d0; } code { font-size: 12.5px; background: #f3f3f6; padding: 0 3px; border-radius: 3px; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12.5px; max-width: 100%; }
.scroll { overflow-x: auto; max-width: 100%; }
th, td { border-bottom: 1px solid var(--rule); padding: 3px 8px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f5f5f7; position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th::after { content: " \\2195"; color: #aaa; font-size: 11px; }
table.sortable th[aria-sort="ascending"]::after { content: " \\2191"; color: var(--ink); }
table.sortable th[aria-sort="descending"]::after { content: " \\2193"; color: var(--ink); }
svg.figure { width: 100%; height: auto; max-width: 1000px; display: block; margin: 6px 0 14px; }
.verdict { font-size: 16px; padding: 8px 12px; border-radius: 6px; margin: 8px 0; }
.verdict.flagged { background: #fdecea; color: var(--flag); } .verdict.clean { background: #e8f5e9; color: var(--ok); }
.finding { border-left: 4px solid var(--flag); padding: 4px 12px; margin: 10px 0; break-inside: avoid; }
.finding.note { border-left-color: var(--note); }
.finding .kind { font-weight: 600; text-transform: uppercase; font-size: 11px; letter-spacing: .04em; }
.strip { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0; }
.strip figure { margin: 0; text-align: center; font-size: 11px; color: var(--muted); }
.strip img { width: 96px; height: 96px; image-rendering: pixelated; border: 1px solid var(--rule); display: block; }
.warn { color: var(--note); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
@media print {
  body { max-width: none; padding: 0 8px; font-size: 11.5px; }
  nav.toc, .noprint { display: none; }
  h2, h3, h4 { break-after: avoid; } svg.figure, .strip, .finding, tr { break-inside: avoid; }
  th { position: static; } table.sortable th::after { content: none; }
}
"""

#: Sorts a table by the clicked header: numbers by ``data-v`` (the raw value), else by text.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.tabIndex = 0;
    function sort() {
      var body = table.tBodies[0];
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column];
        var v = cell.getAttribute("data-v");
        return v === null ? cell.textContent : parseFloat(v);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = (typeof x === "number" && typeof y === "number")
          ? ((isNaN(x) ? Infinity : x) - (isNaN(y) ? Infinity : y))
          : String(x).localeCompare(String(y));
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
  });
});
"""


def text(value: Any) -> str:
    """``value`` as HTML text: every ``<``, ``>``, ``&`` and quote escaped.

    Args:
        value: Anything (``str()`` of it is shown).

    Returns:
        The escaped text.
    """
    return html.escape(str(value), quote=True)


def number(value: Any, digits: int = 4) -> str:
    """A number to ``digits`` significant figures, "n/a" for a missing one (any other value as text).

    Args:
        value: The number (or None / NaN).
        digits: Significant figures.

    Returns:
        The text.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, (float, np.floating, np.integer)):
        return str(value)  # a text in a mostly numeric column (e.g. an episode id where a decline began)
    return f"{float(value):.{digits}g}"


def _cell(value: Any, form: Format | None) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool) or value is pd.NA:
        shown = form(value) if callable(form) else number(value) if form is None else form.format(value)
        raw = "NaN" if value is pd.NA or value != value else repr(float(value))
        return f'<td class="num" data-v="{raw}">{text(shown)}</td>'
    if isinstance(value, (list, tuple)):
        value = ", ".join(map(str, value))
    if isinstance(value, bool):
        value = "yes" if value else "no"
    shown = form(value) if callable(form) else str(value)
    return f"<td>{text(shown)}</td>"


def table(
    frame: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    formats: dict[str, Format] | None = None,
    headers: dict[str, str] | None = None,
    caption: str = "",
) -> str:
    """A sortable HTML table of ``frame`` (click a header to sort; numbers sort as numbers).

    Args:
        frame: The rows.
        columns: The columns shown, in order (default all).
        formats: Per column, a format string or a function of the value.
        headers: Per column, its header text (default the column name).
        caption: A caption (text).

    Returns:
        The table's HTML, in a horizontally scrolling box; "(none)" for no rows.
    """
    columns = list(frame.columns if columns is None else columns)
    formats, headers = formats or {}, headers or {}
    if frame.empty:
        return '<p class="muted">(none)</p>'
    numeric = {
        c for c in columns if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
    }
    head = "".join(
        f'<th scope="col"{" class=num" if c in numeric else ""}>{text(headers.get(c, c))}</th>' for c in columns
    )
    body = "".join(
        "<tr>" + "".join(_cell(_plain(row[c]), formats.get(c)) for c in columns) + "</tr>"
        for row in frame[columns].to_dict("records")
    )
    cap = f"<caption>{text(caption)}</caption>" if caption else ""
    return f'<div class="scroll"><table class="sortable">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _plain(value: Any) -> Any:
    """numpy scalars as Python ones (so numbers sort as numbers)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (list, tuple, str)) else value


def facts(pairs: Sequence[tuple[str, str]]) -> str:
    """A definition list of ``(label, value)`` pairs, both escaped.

    Args:
        pairs: Label and value texts.

    Returns:
        The HTML.
    """
    return '<dl class="facts">' + "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in pairs) + "</dl>"


def page(title: str, sections: Sequence[tuple[str, str, str]]) -> str:
    """The whole document: a title, a table of contents and the sections.

    Args:
        title: The page's title (text).
        sections: ``(anchor, heading, body HTML)`` each; anchors are ASCII ids the contents link to.

    Returns:
        One self-contained HTML document.
    """
    toc = "".join(f'<a href="#{anchor}">{text(heading)}</a>' for anchor, heading, _ in sections)
    body = "".join(
        f'<section id="{anchor}"><h2>{text(heading)}</h2>{content}</section>' for anchor, heading, content in sections
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing may be fetched: the policy blocks any request a crafted name could try.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{text(title)}</title><style>{STYLE}</style></head><body>"
        f'<h1 id="top">{text(title)}</h1><nav class="toc" aria-label="contents">{toc}</nav>{body}'
        f"<script>{SCRIPT}</script></body></html>\n"
    )
