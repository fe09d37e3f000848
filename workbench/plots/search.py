"""Figures of a weight search (``workbench.search.SearchResult``): objective over trials, and
which achievement weights the found config leans on. Each returns a matplotlib Figure."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from workbench.plots import PALETTE, WIDE

__all__ = ["search_importance", "search_trials"]


def _figure(size: tuple[float, float] = WIDE) -> tuple[Figure, object]:
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplots()


def search_trials(result) -> Figure:
    """Each trial's cross-validated objective (dots, coloured by strategy) and the best so far
    (line), with the best config's held-out score and its interval as a band at the right."""
    trials = result.trials
    fig, ax = _figure()
    if "strategy" in trials.columns:
        for colour, (strategy, rows) in zip(PALETTE, trials.groupby("strategy", sort=True)):
            ax.scatter(rows["trial"], rows["value"], s=12, color=colour, alpha=0.7, label=f"trial ({strategy})")
    ax.step(trials["trial"], trials["best_so_far"], where="post", color=PALETTE[7], linewidth=1.5, label="best so far")
    held = result.held_out
    if not np.isnan(held.value):
        x = trials["trial"].max() if len(trials) else 0
        error = None if np.isnan(held.low) else [[held.value - held.low], [held.high - held.value]]
        ax.errorbar([x], [held.value], yerr=error,
                    fmt="D", color=PALETTE[5], capsize=4, label=f"held-out ({held.episodes} episodes, 95% interval)")
    ax.set(title=f"Search: {result.held_out.metric} agreement with progress per trial",
           xlabel="trial", ylabel="objective (cross-validated on fit episodes)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def search_importance(result, *, top: int = 22) -> Figure:
    """Per achievement of the found config: the in-sample agreement lost when its weight alone
    is set to 0 (bars) and the weight itself (text), largest loss first. A config using the
    consistent strategy has no weights: the figure says so."""
    table = result.importance.head(top)
    fig, ax = _figure((8.0, max(3.0, 0.28 * len(table) + 1.2)))
    if table.empty:
        ax.text(0.5, 0.5, f"strategy {result.config.effective_strategy}: no achievement weights",
                ha="center", va="center", transform=ax.transAxes)
        ax.set(title="Search: weight importance", xlabel="agreement lost without the weight", ylabel="achievement")
        return fig
    y = np.arange(len(table))[::-1]
    ax.barh(y, table["agreement_drop_if_zero"], color=PALETTE[0])
    ax.set_yticks(y, table["achievement"])
    for position, weight in zip(y, table["weight"]):
        ax.annotate(f"w={weight:.2f}", (0, position), xytext=(3, 0), textcoords="offset points", va="center",
                    fontsize=8)
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.set(title="Search: weight importance (fit episodes, in-sample)",
           xlabel=f"{result.held_out.metric} agreement lost when the weight is 0", ylabel="achievement")
    return fig
