"""Pieces the widget views share: fixed layouts, latest-value-wins updates, names and notes."""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import pandas as pd

from workbench.data.episodes import Corpus
from workbench.data.importers.counts import ESTIMATED_MEANING
from workbench.data.importers.producers import producer_lines
from workbench.util.labels import short_label, short_labels
from workbench.views.plots import KIND_COLORS, PALETTE

#: Width of a control column: fixed, so controls never move when an output changes size.
CONTROL_WIDTH = 470
#: Width of a slider's label; with the readout this leaves the track >= 150 px.
LABEL_WIDTH = 150
#: The shortest gap between two re-scores while a control is dragged (seconds): values that
#: arrive meanwhile are kept and only the latest is scored.
MIN_UPDATE_GAP = 0.03
#: Line height (px) of the views' text boxes: JupyterLab gives widget HTML a control's 28 px, so a
#: fixed box of N lines (``lines_box``) holds N lines of ``lined`` text and scrolls at line boundaries.
LINE_HEIGHT = 18


def fixed(width: int | str, **more: Any) -> w.Layout:
    """A layout that keeps ``width`` whatever its siblings do (no flex shrink or grow).

    Args:
        width: Pixels, or a CSS width.
        **more: Other layout properties.

    Returns:
        The layout.
    """
    width = f"{width}px" if isinstance(width, int) else width
    return w.Layout(width=width, min_width=width, max_width=width, flex="0 0 auto", **more)


def scroll_box(height: int, **more: Any) -> w.Layout:
    """A layout of fixed height whose content scrolls: text that changes length moves nothing.

    Args:
        height: Pixels.
        **more: Other layout properties.

    Returns:
        The layout.
    """
    return w.Layout(height=f"{height}px", min_height=f"{height}px", overflow="auto", **more)


def lines_box(lines: int, *, border: bool = False, **more: Any) -> w.Layout:
    """A ``scroll_box`` exactly ``lines`` lines of ``lined`` text high (plus a 1 px border when
    ``border``): its content scrolls a whole line at a time and is never cut through a line.

    Args:
        lines: How many lines it holds.
        border: Draw a 1 px border.
        **more: Other layout properties.

    Returns:
        The layout.
    """
    height = lines * LINE_HEIGHT + (2 if border else 0)
    if border:
        more = {"border": "1px solid #ddd", "padding": "0 6px", **more}
    return scroll_box(height, **more)


def lined(content: str) -> str:
    """HTML ``content`` set at ``LINE_HEIGHT`` (for a ``lines_box``).

    Args:
        content: HTML.

    Returns:
        The HTML, wrapped.
    """
    return f"<div style='line-height:{LINE_HEIGHT}px;margin:0;padding:0'>{content}</div>"


def slider_style() -> dict[str, str]:
    """Style for a labelled slider: the label's width is fixed, so every track is as wide.

    Returns:
        The style dict.
    """
    return {"description_width": f"{LABEL_WIDTH}px"}


def from_browser(change: dict[str, Any]) -> bool:
    """Whether a trait change came from the page (ipywidgets locks the property while it applies
    a front-end update), rather than from code in the kernel.

    Args:
        change: A traitlets change dict.

    Returns:
        Whether the page made the change.
    """
    owner = change.get("owner")
    return bool(owner is not None and change.get("name") in getattr(owner, "_property_lock", {}))


class LatestWins:
    """Run ``update`` after control changes, the latest values winning.

    A change made in code runs ``update`` at once (so ``tuner.weight_sliders[x].value = 2`` then
    reading ``tuner.scores`` works). A change from the page, as a drag sends many, only marks the
    update due and schedules it on the kernel's event loop, at most once per ``gap`` seconds:
    changes that arrive meanwhile cost nothing and the update reads the controls as they are then,
    so no queue of superseded re-scores builds up behind a drag. ``defer(change)`` says which
    changes are scheduled rather than run at once (default: those from the page; a follower of
    another view's trait defers every change, so it runs after that view's messages went out).
    """

    def __init__(
        self,
        update: Callable[[], None],
        gap: float = MIN_UPDATE_GAP,
        *,
        defer: Callable[[dict[str, Any]], bool] = from_browser,
    ) -> None:
        self.update, self.gap, self.defer = update, gap, defer
        self._scheduled = False
        self._next = 0.0
        self.coalesced = 0  # page changes folded into a later update (for tests and benchmarks)

    def request(self, change: dict[str, Any] | None = None) -> None:
        """Ask for an update after ``change`` (a traitlets change dict, or None for code).

        Args:
            change: The change, or None for a change made in code.
        """
        loop = None
        if change is not None and self.defer(change):
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
        if loop is None:
            self.run()
            return
        if self._scheduled:
            self.coalesced += 1
            return
        self._scheduled = True
        loop.call_later(max(0.0, self._next - time.monotonic()), self.run)

    def run(self) -> None:
        """Update now (and forget any scheduled update)."""
        self._scheduled = False
        try:
            self.update()
        finally:
            self._next = time.monotonic() + self.gap


def groups_of(corpus: Corpus, by: str) -> pd.Series:
    """Episode id -> group (``corpus.groups``), with episodes that have none (e.g. no policy
    recorded) in a group named "(none)" rather than NaN.

    Args:
        corpus: The corpus.
        by: An index column, e.g. "policy".

    Returns:
        The group of each episode, by id.
    """
    return corpus.groups(by).astype(object).fillna("(none)").astype(str)


def group_colors(groups: pd.Series) -> dict[str, str]:
    """One colour per group (e.g. policy) in first-seen order, the same in every view.

    Args:
        groups: The group of each episode.

    Returns:
        Group -> CSS colour.
    """
    return {group: PALETTE[i % len(PALETTE)] for i, group in enumerate(dict.fromkeys(groups.astype(str)))}


def counts_note(corpus: Corpus) -> str:
    """HTML saying which episodes' count shaping is an estimate (``metadata["counts"]``), or ''.

    Args:
        corpus: The corpus.

    Returns:
        The HTML, or ''.
    """
    counts = corpus.index["counts"] if "counts" in corpus.index.columns else pd.Series(dtype=object)
    estimated = int((counts == "estimated").sum())
    if not estimated:
        return ""
    return (
        f"<div style='color:#8a5a00'>&#9888; {estimated} of {len(corpus)} episodes have estimated "
        f"achievement counts: {html.escape(ESTIMATED_MEANING)}.</div>"
    )


def producers_note(corpus: Corpus) -> str:
    """HTML naming the synth-ai loops that produced the corpus's episodes (``metadata["producer"]``)
    and saying when one ignored a run's step_rewards weights, or '' when no episode names one.

    Args:
        corpus: The corpus.

    Returns:
        The HTML, or ''.
    """
    lines = producer_lines(corpus.episode_metadata())
    return "".join(f"<div>{html.escape(line)}</div>" for line in lines)


def fit_chars(width_px: float, slots: int, char_px: float = 8.5) -> int:
    """How many characters of ``char_px`` fit in one of ``slots`` slots sharing ``width_px`` (at least 6).

    Args:
        width_px: The width shared.
        slots: How many share it.
        char_px: One character's width.

    Returns:
        The characters that fit.
    """
    return max(6, int(width_px / max(slots, 1) / char_px))


def legend_html(groups: list[str], colors: dict[str, str], short: list[str], title: str = "") -> str:
    """The figure's groups in their colours, each whole (its tick label may be shortened), after ``title``.

    Args:
        groups: The groups' names.
        colors: Group -> colour.
        short: Each group's tick label.
        title: Written first ('' for none).

    Returns:
        The HTML.
    """
    items = []
    for name, label in zip(groups, short):
        shown = html.escape(name) if label == name else f"{html.escape(label)} = {html.escape(name)}"
        items.append(
            f"<span style='margin-right:12px;white-space:nowrap'><span style='color:{colors.get(name, '#555')}'>"
            f"&#9679;</span> {shown}</span>"
        )
    lead = f"<b>{html.escape(title)}</b>: " if title else ""
    return f"<div style='font-size:12px;line-height:18px;word-break:break-all'>{lead}{' '.join(items)}</div>"


def error_html(message: str) -> str:
    """A user error as a line of red text.

    Args:
        message: The error's text.

    Returns:
        The HTML.
    """
    return f"<span style='color:#D55E00'>{html.escape(message)}</span>"


__all__ = [
    "CONTROL_WIDTH",
    "KIND_COLORS",
    "LABEL_WIDTH",
    "LINE_HEIGHT",
    "LatestWins",
    "counts_note",
    "error_html",
    "fit_chars",
    "fixed",
    "from_browser",
    "group_colors",
    "groups_of",
    "legend_html",
    "lined",
    "lines_box",
    "scroll_box",
    "short_label",
    "short_labels",
    "slider_style",
]
