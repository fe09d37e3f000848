"""One page summarising a ``workbench.analysis.diagnostics.Diagnosis`` (returned as a matplotlib Figure)."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from workbench.core.components import KIND_LABELS
from workbench.util.labels import short_label
from workbench.views.plots import KIND_COLORS, LABEL_CHARS, PALETTE, literal_text

__all__ = ["diagnosis_figure"]

PAGE = (16.0, 10.0)
#: Colours of the farming panel's three parts of a return.
FARMING_PARTS = (
    ("credits", KIND_LABELS["achievement"], KIND_COLORS["achievement"]),
    ("first_time", "resource, first rise", PALETTE[2]),
    ("repeats", "resource, repeats", PALETTE[5]),
)
FLAGGED_COLOR = PALETTE[5]


@literal_text
def diagnosis_figure(diagnosis, *, max_episodes: int = 30, max_flags: int = 12) -> Figure:
    """Farming, dominance, alignment (scatter and intervals), weight sensitivity and the flags
    of ``diagnosis`` on one 16 x 10 inch page. Shows at most ``max_episodes`` episodes in the
    farming panel (the ones with the largest repeat share) and ``max_flags`` flags.

    Args:
        diagnosis: A ``Diagnosis`` (``analysis.diagnostics.diagnose``).
        max_episodes: The most episodes in the farming panel.
        max_flags: The most flags listed.

    Returns:
        The matplotlib figure.
    """
    fig = Figure(figsize=PAGE, layout="constrained")
    axes = fig.subplots(2, 3)
    fig.suptitle(
        f"Diagnosis: {len(diagnosis.scores.episodes)} episodes by {diagnosis.by}, {len(diagnosis.flags)} flag(s)",
        fontsize=14,
    )
    _farming(axes[0, 0], diagnosis, max_episodes)
    _dominance(axes[0, 1], diagnosis)
    _scatter(axes[0, 2], diagnosis)
    _intervals(axes[1, 0], diagnosis)
    _sensitivity(axes[1, 1], diagnosis)
    _flags(axes[1, 2], diagnosis, max_flags)
    return fig


def _farming(ax, diagnosis, max_episodes: int) -> None:
    table = diagnosis.farming_episodes
    if len(table) > max_episodes:
        table = table.loc[table["repeat_share"].fillna(0).nlargest(max_episodes).index].sort_index()
    y = np.arange(len(table))[::-1]
    left = np.zeros(len(table))
    for column, label, color in FARMING_PARTS:
        values = table[column].to_numpy()
        ax.barh(y, values, left=left, color=color, label=label)
        left += values
    labels = [
        f"{'! ' if flagged else ''}{short_label(str(episode), LABEL_CHARS)}{' (est.)' if estimated else ''}"
        for episode, flagged, estimated in zip(table["episode"], table["flagged"], table["count_shaping_estimated"])
    ]
    ax.set_yticks(y, labels, fontsize=7)
    for tick, flagged in zip(ax.get_yticklabels(), table["flagged"]):
        if flagged:
            tick.set_color(FLAGGED_COLOR)
    ax.set(title="Farming: where each episode's return comes from", xlabel="shaped return (after lambda)")
    ax.legend(loc="lower right", fontsize=7, frameon=False)


def _dominance(ax, diagnosis) -> None:
    by = diagnosis.by
    table = diagnosis.dominance_by_kind
    shares = table.pivot_table(index=by, columns="kind", values="share", aggfunc="sum", fill_value=0.0, sort=False)
    flagged = table.groupby(by, sort=False)["flagged"].any()
    y = np.arange(len(shares))[::-1]
    left = np.zeros(len(shares))
    for kind in [k for k in KIND_COLORS if k in shares.columns]:
        values = shares[kind].to_numpy() * 100
        ax.barh(y, values, left=left, color=KIND_COLORS[kind], label=KIND_LABELS[kind])
        left += values
    ax.axvline(100 * (1 - diagnosis.settings["dominance_threshold"]), color="black", linestyle=":", linewidth=1)
    ax.set_yticks(
        y, [f"{'! ' if flagged.get(g, False) else ''}{short_label(str(g), LABEL_CHARS)}" for g in shares.index]
    )
    ax.set_xlim(0, 100)
    ax.set(title=f"Dominance: share of reward by kind, per {by}", xlabel="share of |reward| (%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=7, frameon=False)


def _scatter(ax, diagnosis) -> None:
    by = diagnosis.by
    table = diagnosis.farming_episodes
    achievements = diagnosis.scores.episodes["unique_achievements_total"].to_numpy()
    for color, group in zip(PALETTE * 4, pd.unique(table[by])):
        rows = (table[by] == group).to_numpy()
        label = short_label(str(group), LABEL_CHARS)
        ax.scatter(achievements[rows], table["return"].to_numpy()[rows], color=color, label=label, s=28, alpha=0.85)
    if len(diagnosis.misranked):
        worst = diagnosis.misranked.iloc[0]
        ax.plot(
            [worst.achievements_paid_more, worst.achievements_progressed_more],
            [worst.return_paid_more, worst.return_progressed_more],
            color="black",
            linestyle="--",
            linewidth=1,
            label="worst misranked pair",
        )
    ax.set(
        title=f"Alignment: {len(diagnosis.misranked)} misranked pair(s)",
        xlabel="achievements unlocked (of 22)",
        ylabel="shaped return",
    )
    ax.legend(fontsize=7, frameon=False, title=by, title_fontsize=7)


def _intervals(ax, diagnosis) -> None:
    table = diagnosis.alignment
    y = np.arange(len(table))[::-1]
    estimate = table["estimate"].to_numpy()
    errors = np.vstack([estimate - table["low"].to_numpy(), table["high"].to_numpy() - estimate])
    ax.errorbar(estimate, y, xerr=np.nan_to_num(errors), fmt="o", color=PALETTE[0], capsize=4)
    ax.set_yticks(y, [f"{s} vs {p}" for s, p in zip(table["statistic"], table["progress"])])
    ax.axvline(diagnosis.settings["agreement_threshold"], color="black", linestyle=":", linewidth=1)
    ax.set_xlim(-1.05, 1.05)
    confidence = table["confidence"].iloc[0] if len(table) else 0.95
    ax.set(
        title=f"Rank agreement with {confidence:.0%} intervals (bootstrap within {diagnosis.by})",
        xlabel="rank correlation",
    )


def _sensitivity(ax, diagnosis) -> None:
    table = diagnosis.sensitivity
    table = table[table["episodes_credited"] > 0]
    y = np.arange(len(table))[::-1]
    weight = table["weight"].to_numpy()
    span = np.nanmax(np.abs(weight)) * 3 + 1 if len(table) else 1.0
    low = np.clip(table["low"].to_numpy(), weight - span, None)
    high = np.clip(table["high"].to_numpy(), None, weight + span)
    ax.hlines(y, low, high, color=PALETTE[4], linewidth=5, label="ranking unchanged")
    ax.scatter(weight, y, color="black", zorder=3, s=14, label="weight now")
    fix = table["fix_weight"].to_numpy()
    ax.scatter(fix, y, marker="x", color=FLAGGED_COLOR, zorder=3, label="fixes worst misranked pair")
    ax.set_yticks(y, table["achievement"], fontsize=7)
    ax.set(title="Sensitivity: weight interval keeping the ranking (clipped)", xlabel="achievement weight")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=7, frameon=False)


def _flags(ax, diagnosis, max_flags: int) -> None:
    ax.axis("off")
    flags = diagnosis.flags
    lines = []
    for row in flags.head(max_flags).itertuples(index=False):
        lines.append(textwrap.shorten(f"[{row.section}] {row.subject}: {row.why}", width=140, placeholder=" ..."))
    if len(flags) > max_flags:
        lines.append(f"... and {len(flags) - max_flags} more (Diagnosis.flags)")
    text = "\n".join(textwrap.fill(line, width=80, subsequent_indent="   ") for line in lines) or "no flags"
    ax.text(0.0, 1.0, text, va="top", ha="left", fontsize=6.5, family="monospace", transform=ax.transAxes)
    ax.set_title(f"Flags ({len(flags)}; each says why)")
