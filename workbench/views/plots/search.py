"""Figures of a weight search (``workbench.analysis.search.SearchResult``).

The objective over trials, and which achievement weights the found config leans on. Each
returns a matplotlib Figure."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.views.plots import PALETTE, WIDE, literal_text

__all__ = ["search_importance", "search_trials"]


def _figure(size: tuple[float, float] = WIDE) -> tuple[Figure, Axes]:
    # Figure() rather than plt.figure(): returned figures are not kept alive by pyplot's registry.
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplots()


@literal_text
def search_trials(result) -> Figure:
    """Each trial's cross-validated objective (dots, coloured by strategy) and the best so far
    (line), with the best config's held-out score and its interval as a band at the right.

    Args:
        result: A search result (``analysis.search.search``).

    Returns:
        The matplotlib figure.
    """
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
        ax.errorbar(
            [x],
            [held.value],
            yerr=error,
            fmt="D",
            color=PALETTE[5],
            capsize=4,
            label=f"held-out ({held.episodes} episodes, 95% interval)",
        )
    ax.set(
        title=f"Search: {result.held_out.metric} agreement with progress per trial",
        xlabel="trial",
        ylabel="objective (cross-validated on fit episodes)",
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


@literal_text
def search_importance(result, *, top: int = 22) -> Figure:
    """Per achievement of the found config, on the fit episodes (in-sample): its share of the
    shaped return (left) and the agreement lost when its weight alone is set to 0 (right), with
    the weight written beside each bar; largest loss first, then largest share. A config using
    the consistent strategy has no weights: the figure says so.

    Args:
        result: A search result (``analysis.search.search``).
        top: The most achievements shown.

    Returns:
        The matplotlib figure.
    """
    table = result.importance.head(top)
    fig = Figure(figsize=(10.0, max(3.0, 0.28 * len(table) + 1.4)), layout="constrained")
    share_ax, drop_ax = fig.subplots(1, 2, sharey=True)
    fig.suptitle("Search: weight importance (fit episodes, in-sample)")
    if table.empty:
        for ax in (share_ax, drop_ax):
            ax.text(
                0.5,
                0.5,
                f"strategy {result.config.rule.name}: no achievement weights",
                ha="center",
                va="center",
                transform=ax.transAxes,
            )
        share_ax.set(title="share of the shaped return", xlabel="share", ylabel="achievement")
        drop_ax.set(title="agreement lost without the weight", xlabel="agreement lost")
        return fig
    y = np.arange(len(table))[::-1]
    share_ax.barh(y, table["share_of_return"], color=PALETTE[0])
    share_ax.set_yticks(y, table["achievement"])
    for position, weight, share in zip(y, table["weight"], table["share_of_return"]):
        share_ax.annotate(
            f"w={weight:.2f}",
            (max(share, 0.0), position),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    share_ax.set_xlim(0, max(float(table["share_of_return"].max()), 1e-9) * 1.25)  # room for the labels
    drop_ax.barh(y, table["agreement_drop_if_zero"], color=PALETTE[5])
    drop_ax.axvline(0, color="0.3", linewidth=0.8)
    share_ax.set(title="share of the shaped return", xlabel="share of the fit episodes' return", ylabel="achievement")
    drop_ax.set(
        title="agreement lost without the weight",
        xlabel=f"{result.held_out.metric} agreement lost when the weight is 0",
    )
    return fig
