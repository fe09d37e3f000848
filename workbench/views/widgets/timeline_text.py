"""The Timeline's text views: the count line, the legend (configs and where a decline began) and the change points."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from workbench.analysis import timeline as tl
from workbench.views.widgets.common import lined
from workbench.views.widgets.overoptimisation_figure import rule_swatch

__all__ = ["changes_html", "legend_html", "note_html"]


def note_html(axis: tl.XAxis, n: int) -> str:
    """The count line: ``n`` episodes, and why the x asked for is not shown (when it is not).

    Args:
        axis: The x axis drawn.
        n: Episodes drawn.

    Returns:
        HTML.
    """
    note = f"{n} episodes"
    if axis.note:
        note += f" &middot; <span style='color:#8A5A00'>{html.escape(axis.note)}</span>"
    return lined(f"<span class='wb-timeline-count'>{note}</span>")


def legend_html(configs: list[str], colors: Mapping[str, str], declines: Mapping[str, str]) -> str:
    """Each config's colour ('' for series the same under every config), then a rule per config
    whose over-optimisation alarm is on, at the episode where its decline began.

    Args:
        configs: The config names drawn.
        colors: Name -> colour.
        declines: Config name -> the episode where its decline began.

    Returns:
        HTML.
    """
    swatches = [
        f"<span style='display:inline-block;margin-right:14px;word-break:break-all'>"
        f"<span style='display:inline-block;width:14px;height:4px;background:{colors[name]};vertical-align:middle;"
        f"margin-right:4px'></span>{html.escape(name or 'every config (Crafter score)')}</span>"
        for name in configs
    ]
    swatches += [
        f"<span class='wb-timeline-decline' style='display:inline-block;margin-right:14px;word-break:break-all'>"
        f"{rule_swatch(colors.get(name, '#444444'))}over-optimisation ({html.escape(name)}): the decline began at "
        f"episode <code>{html.escape(episode)}</code></span>"
        for name, episode in declines.items()
    ]
    return f"<div class='wb-timeline-legend' style='line-height:20px'>{''.join(swatches)}</div>"


def changes_html(found: list[tuple[str, Any]]) -> str:
    """The change points found, one line each (``found``: (config, row of ``series_change_points``)).

    Args:
        found: What ``Timeline._draw_changes`` found.

    Returns:
        HTML.
    """
    if not found:
        return lined("<span style='color:#555'>no change point yet</span>")
    items = [
        f"<b>{html.escape(name or 'every config')}</b>: shifts at episode {row.arrival} "
        f"(<code>{html.escape(str(row.episode))}</code>), mean {row.before:.3g} &rarr; {row.after:.3g}"
        for name, row in found
    ]
    return lined("<br>".join(items))
