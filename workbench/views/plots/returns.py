"""Figures of several configs side by side: mean return per group with intervals, rank changes, advantages.

Each function returns a matplotlib ``Figure`` drawn from tidy tables (``workbench.views.report``
builds them; a notebook can too) and attaches hover texts with ``tip``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.util.labels import short_label
from workbench.views.plots import LABEL_CHARS, PALETTE, _figure, literal_text, tip

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: A rank-change figure draws at most this many episodes (those whose rank moves most).
MOST_MOVED = 40
#: An advantages figure draws at most this many rollouts (evenly spread over the returns).
MAX_ROLLOUTS = 400
#: The learner's advantage estimators, in legend order (columns of ``LearnerView.episodes``).
ESTIMATORS = ("grpo", "dr_grpo", "rloo", "gdpo")


@literal_text
def group_returns(table: pd.DataFrame, *, by: str = "policy", confidence: float = 0.95) -> Figure:
    """Mean shaped return per group under each config, with its bootstrap interval.

    Args:
        table: One row per config and group: ``config``, ``group``, ``episodes``, ``mean``,
            ``low``, ``high`` (configs and groups in the order to draw).
        by: What the groups are (the axis label).
        confidence: The intervals' level (the title).

    Returns:
        The matplotlib figure.
    """
    configs = list(dict.fromkeys(table["config"]))
    groups = list(dict.fromkeys(table["group"]))
    fig, (ax,) = _figure((10.0, 1.6 + 0.55 * len(groups) * max(1, len(configs)) ** 0.5))
    spread = 0.6 / max(len(configs), 1)
    for k, (config, color) in enumerate(zip(configs, PALETTE * 4)):
        rows = table[table["config"] == config].set_index("group").reindex(groups)
        y = np.arange(len(groups)) + (k - (len(configs) - 1) / 2) * spread
        mean, low, high = (rows[c].to_numpy(dtype=float) for c in ("mean", "low", "high"))
        errors = np.nan_to_num(np.vstack([mean - low, high - mean]))
        bars = ax.errorbar(mean, y, xerr=errors, fmt="o", color=color, capsize=3, label=short_label(config, 40))
        tip(
            bars.lines[0],
            [
                f"{config} / {group}: mean {m:.4g} [{lo:.4g}, {hi:.4g}] over {int(n)} episode(s)"
                for group, m, lo, hi, n in zip(groups, mean, low, high, rows["episodes"].fillna(0))
            ],
        )
    ax.set_yticks(np.arange(len(groups)), [short_label(str(g), LABEL_CHARS) for g in groups])
    ax.invert_yaxis()
    ax.set(
        title=f"Mean shaped return per {by} ({confidence:.0%} bootstrap intervals)",
        xlabel="mean shaped return per episode",
        ylabel=by,
    )
    ax.legend(title="config", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


@literal_text
def rank_changes(ranks: pd.DataFrame, groups: pd.Series, *, by: str = "policy") -> Figure:
    """Each episode's rank (1 = highest shaped return) under each config, one line per episode.

    Args:
        ranks: Indexed by episode, one column per config (in order), ranks as numbers.
        groups: Each episode's group (colours the lines).
        by: What the groups are (the legend title).

    Returns:
        The matplotlib figure.
    """
    moved = (ranks.max(axis=1) - ranks.min(axis=1)).sort_values(ascending=False, kind="stable")
    shown = ranks.loc[moved.index[:MOST_MOVED]]
    fig, (ax,) = _figure((10.0, 4.5))
    x = np.arange(len(ranks.columns))
    colors = {g: PALETTE[k % len(PALETTE)] for k, g in enumerate(dict.fromkeys(groups.reindex(ranks.index)))}
    labelled: set[object] = set()
    for episode, row in shown.iterrows():
        group = groups.get(episode)
        label = short_label(str(group), LABEL_CHARS) if group not in labelled else "_"
        labelled.add(group)
        (line,) = ax.plot(x, row.to_numpy(dtype=float), "o-", color=colors.get(group, PALETTE[0]), label=label)
        path = " -> ".join(f"{v:g}" for v in row.to_numpy(dtype=float))
        tip(line, [f"{episode} ({group}) under {c}: rank {v:g} (ranks {path})" for c, v in row.items()])
    ax.set_xticks(x, [short_label(str(c), 2 * LABEL_CHARS) for c in ranks.columns])
    ax.set_xlim(-0.3, len(x) - 0.7 if len(x) > 1 else 0.3)
    ax.invert_yaxis()
    cut = f", the {len(shown)} that move most of {len(ranks)}" if len(shown) < len(ranks) else ""
    ax.set(title=f"Episode rank under each config{cut}", xlabel="config", ylabel="rank (1 = highest return)")
    ax.legend(title=by, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


@literal_text
def advantages(episodes: pd.DataFrame) -> Figure:
    """The advantage each rollout gets under each estimator, against its shaped return.

    Args:
        episodes: ``LearnerView.episodes`` (``episode``, ``return`` and the ``ESTIMATORS`` columns).

    Returns:
        The matplotlib figure.
    """
    fig, (ax,) = _figure((10.0, 4.0))
    title = "Advantage per rollout by estimator"
    if len(episodes) > MAX_ROLLOUTS:  # an SVG point per rollout and estimator would weigh megabytes
        order = episodes.sort_values("return", kind="stable")
        episodes = order.iloc[np.unique(np.linspace(0, len(order) - 1, MAX_ROLLOUTS).round().astype(int))]
        title += f" ({len(episodes)} of {len(order)} rollouts, spread over the returns)"
    for name, color, marker in zip(ESTIMATORS, PALETTE, "os^D"):
        points = ax.scatter(episodes["return"], episodes[name], s=22, color=color, marker=marker, label=name)
        tip(
            points,
            [
                f"{e}: {name} advantage {a:.4g} (return {r:.4g})"
                for e, a, r in zip(episodes["episode"], episodes[name], episodes["return"])
            ],
        )
    ax.axhline(0, color="0.6", linewidth=0.8)
    ax.set(title=title, xlabel="shaped return of the rollout", ylabel="advantage")
    ax.legend(title="estimator", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig
