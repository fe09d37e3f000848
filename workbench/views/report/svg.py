"""A matplotlib figure as inline SVG for the report: hover values as SVG titles, ids made unique.

The report draws with the workbench's own figure functions (``workbench.views.plots``) and keeps
them vector: SVG prints sharply to PDF, needs no script to draw and nothing from the network.
Hover values are SVG ``<title>`` elements, which every browser shows as a tooltip: a bar says its
value, a point its coordinates (or the episode a figure function attached with
``workbench.views.plots.tip``), a line its label.
"""

from __future__ import annotations

import io
import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.views.plots import TIPS_ATTRIBUTE

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)
_URL = re.compile(r"url\(#([^)]+)\)")
#: Figures exported in this process: each gets its own id prefix, so two in one page never clash.
_COUNTER = itertools.count(1)
#: A tooltip's value: 4 significant digits keep it short and still tell close bars apart.
_NUMBER = "{:.4g}"


def _number(value: float) -> str:
    return _NUMBER.format(float(value))


def _artist_tips(fig: Figure, bars: dict[Any, tuple[str, str]]) -> Iterator[tuple[Any, str | list[str]]]:
    """Each artist worth a tooltip with its text (one text, or one per point); ``bars``: each
    bar of a bar container -> its series and orientation (``_bar_series``)."""
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    for ax in fig.axes:
        ticks = {
            axis: {round(float(t), 6): label.get_text() for t, label in zip(ticks, labels)}
            for axis, ticks, labels in (
                ("x", ax.get_xticks(), ax.get_xticklabels()),
                ("y", ax.get_yticks(), ax.get_yticklabels()),
            )
        }
        for artist in [*ax.patches, *ax.collections, *ax.lines]:
            given = getattr(artist, TIPS_ATTRIBUTE, None)
            if given is not None:
                yield artist, given
            elif isinstance(artist, Rectangle) and artist.get_width() and artist.get_height():
                yield artist, _bar_tip(artist, ticks, *bars.get(artist, ("", "vertical")))
            elif isinstance(artist, PathCollection) and len(offsets := np.asarray(artist.get_offsets())):
                name = str(artist.get_label() or "")
                prefix = f"{name}: " if name and not name.startswith("_") else ""
                yield artist, [f"{prefix}({_number(x)}, {_number(y)})" for x, y in offsets]
            elif isinstance(artist, Line2D) and not str(artist.get_label()).startswith("_"):
                yield artist, str(artist.get_label())


def _bar_series(fig: Figure) -> dict[Any, tuple[str, str]]:
    """Each bar of ``fig``'s bar containers -> its series (the container's legend label, "" for a
    hidden one) and the container's orientation (kept here, not set on matplotlib's objects)."""
    from matplotlib.container import BarContainer

    bars: dict[Any, tuple[str, str]] = {}
    for container in (c for ax in fig.axes for c in ax.containers if isinstance(c, BarContainer)):
        label = str(container.get_label() or "")
        series = "" if label.startswith("_") else label
        orientation = getattr(container, "orientation", "vertical") or "vertical"
        for bar in container:
            bars[bar] = (series, orientation)
    return bars


def _bar_tip(bar: Any, ticks: dict[str, dict[float, str]], series: str, orientation: str) -> str:
    """A bar's tooltip: its category (tick label), its series (legend label) and its value."""
    horizontal = orientation == "horizontal"
    x, y, width, height = bar.get_x(), bar.get_y(), bar.get_width(), bar.get_height()
    start, value = (x, width) if horizontal else (y, height)
    centre = round(y + height / 2, 6) if horizontal else round(x + width / 2, 6)
    category = ticks["y" if horizontal else "x"].get(centre, "")
    span = f" (from {_number(start)} to {_number(start + value)})" if start else ""
    names = " / ".join(part for part in (category, series) if part)
    return f"{names}: {_number(value)}{span}" if names else f"{_number(value)}{span}"


def figure_svg(fig: Figure, *, title: str) -> str:
    """``fig`` as one ``<svg>`` element for an HTML page, with hover values and unique ids.

    Args:
        fig: A matplotlib figure (from ``workbench.views.plots``).
        title: What the figure shows (the SVG's accessible name and first tooltip).

    Returns:
        The SVG markup (no XML prolog), scaling to its container's width.
    """
    import matplotlib

    tips: dict[str, str | list[str]] = {}
    for k, (artist, text) in enumerate(_artist_tips(fig, _bar_series(fig))):
        artist.set_gid(f"wbtip{k}")
        tips[f"wbtip{k}"] = text
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "workbench"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    root = ET.fromstring(buffer.getvalue())
    _add_titles(root, tips)
    _prefix_ids(root, f"f{next(_COUNTER)}-")
    for size in ("width", "height"):
        root.attrib.pop(size, None)
    root.set("role", "img")
    root.set("class", "figure")
    root.set("aria-label", title)
    heading = ET.Element(f"{{{SVG_NS}}}title")
    heading.text = title
    root.insert(0, heading)
    return ET.tostring(root, encoding="unicode")


def _add_titles(root: ET.Element, tips: dict[str, str | list[str]]) -> None:
    """A ``<title>`` in each tipped group; per-point texts wrap each ``<use>`` (a marker) with its own."""
    parents = {child: parent for parent in root.iter() for child in parent}
    for group in root.iter(f"{{{SVG_NS}}}g"):
        text = tips.get(group.get("id", ""))
        if text is None:
            continue
        uses = list(group.iter(f"{{{SVG_NS}}}use"))
        if isinstance(text, list) and len(uses) == len(text):
            for use, point in zip(uses, text):
                holder = parents[use]
                wrapper = ET.Element(f"{{{SVG_NS}}}g")
                title = ET.SubElement(wrapper, f"{{{SVG_NS}}}title")
                title.text = point
                holder.insert(list(holder).index(use), wrapper)
                holder.remove(use)
                wrapper.append(use)
        else:
            title = ET.Element(f"{{{SVG_NS}}}title")
            title.text = "; ".join(text) if isinstance(text, list) else text
            group.insert(0, title)


def _prefix_ids(root: ET.Element, prefix: str) -> None:
    """Prefix every id and every reference to one (``url(#...)``, ``xlink:href="#..."``)."""
    href = f"{{{XLINK_NS}}}href"
    for element in root.iter():
        for key, value in list(element.attrib.items()):
            if key == "id":
                element.set(key, prefix + value)
            elif key in (href, "href") and value.startswith("#"):
                element.set(key, "#" + prefix + value[1:])
            elif "url(#" in value:
                element.set(key, _URL.sub(lambda m: f"url(#{prefix}{m.group(1)})", value))


def figure_html(fig: Figure, title: str) -> str:
    """``figure_svg`` of ``fig``, then its artists released (a report draws many figures).

    Args:
        fig: A matplotlib figure.
        title: What it shows.

    Returns:
        The SVG markup.
    """
    try:
        return figure_svg(fig, title=title)
    finally:
        fig.clear()
