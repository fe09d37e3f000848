"""Compare's text views as HTML: legend, summary, per-group table and largest component changes."""

from __future__ import annotations

import html

import pandas as pd

from workbench.core.components import component_label
from workbench.core.config import RewardConfig
from workbench.views.widgets.common import lined


def config_legend_html(names: list[str], colors: list[str]) -> str:
    """Every shown config, whole, in its colour (as the bars and points draw it); the first is the reference.

    Args:
        names: The configs shown, the reference first.
        colors: Their colours.

    Returns:
        The HTML.
    """
    items = []
    for k, (name, color) in enumerate(zip(names, colors)):
        role = "reference" if k == 0 else "compared"
        items.append(
            f"<span class='wb-legend-item' style='margin-right:14px;display:inline-block'>"
            f"<span style='display:inline-block;width:12px;height:12px;background:{color};"
            f"vertical-align:-1px;margin-right:4px'></span>{html.escape(name)} <span style='color:#666'>"
            f"({role})</span></span>"
        )
    return f"<div class='wb-legend' style='font-size:12px;line-height:18px;word-break:break-all'>{''.join(items)}</div>"


def summary_html(names: list[str], configs: list[RewardConfig], colors: list[str], progress: list[str]) -> str:
    """A line per config (its role, strategy, lambda and progress agreement): every config, no scrolling.

    Args:
        names: The configs shown, the reference first.
        configs: The configs.
        colors: Their colours.
        progress: Each config's progress sentence.

    Returns:
        The HTML.
    """
    rows = []
    for k, (name, config, color, line) in enumerate(zip(names, configs, colors, progress)):
        role = "reference" if k == 0 else "compared"
        rows.append(
            f"<li><b style='color:{color}'>{html.escape(name)}</b> ({role}): "
            f"{config.rule.name}, lambda x{config.effective_lambda:g}; {html.escape(line)}</li>"
        )
    return lined(f"<ul style='margin:0;padding-left:18px;font-size:12px;word-break:break-word'>{''.join(rows)}</ul>")


def groups_html(tables: dict[str, pd.DataFrame], by: str, groups: list[str]) -> str:
    """The per-group table of every config (``tables``: config name -> ``returns_by_group``).

    Args:
        tables: Config name -> its ``returns_by_group`` table.
        by: The group column.
        groups: The groups, in order.

    Returns:
        The HTML.
    """
    frames = [
        table.assign(config=name)[
            [by, "config", "episodes", "mean_achievements", "mean_return", "return_per_achievement"]
        ]
        for name, table in tables.items()
    ]
    table = pd.concat(frames).rename(
        columns={
            "mean_achievements": "mean achievements",
            "mean_return": "mean return",
            "return_per_achievement": "return per achievement",
        }
    )
    table = table.sort_values(by, key=lambda c: c.map({g: i for i, g in enumerate(groups)}), kind="stable")
    return table.to_html(index=False, float_format="%.3f")


def components_html(reference: str, comparisons: dict, top: int) -> str:
    """Per compared config, the ``top`` components whose corpus totals changed most (or "no differences").

    Args:
        reference: The reference config's name.
        comparisons: Compared config name -> its ``Comparison`` with the reference.
        top: How many components per config.

    Returns:
        The HTML.
    """
    parts = []
    for name, comparison in comparisons.items():
        changes = comparison.largest_changes(top)
        changes = changes[changes["difference"] != 0]
        title = f"<b>{html.escape(name)}</b> vs <b>{html.escape(reference)}</b>"
        if changes.empty:
            parts.append(f"<p>{title}: no differences (every component pays the same corpus total)</p>")
            continue
        table = pd.DataFrame(
            {
                "component": [component_label(k, n) for k, n in zip(changes["kind"], changes["name"])],
                "total: reference": changes["total_a"].to_numpy(),
                "total: compared": changes["total_b"].to_numpy(),
                "difference": changes["difference"].to_numpy(),
            }
        )
        parts.append(
            f"<p>{title}: the {len(table)} largest changes of corpus totals</p>"
            + table.to_html(index=False, float_format="%.3f")
        )
    return "".join(parts)
