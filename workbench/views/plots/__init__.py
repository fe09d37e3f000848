"""Figures for shaped rewards. Each function returns a matplotlib ``Figure`` (it never shows it).

They read the tidy tables of ``workbench.scoring.Scores`` and ``Comparison``; none computes a
reward itself. Defaults aim at reading well without tweaking: fixed sizes, titles, labelled
axes with units, legends outside the data, and the Okabe-Ito palette (colour-blind safe).
"""

# ruff: noqa: E402
# (the imports below need the optional packages checked first)
from __future__ import annotations

from workbench.util.extras import require_extra

require_extra("lab", "the figures (workbench.views.plots)", "matplotlib")

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ParamSpec

import numpy as np
import pandas as pd

from workbench.core.components import KIND_LABELS, KINDS
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus, Episode
from workbench.util.labels import short_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_Args = ParamSpec("_Args")

#: Okabe & Ito (2008), distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: One colour per reward component kind, the same in every figure.
KIND_COLORS = dict(zip(KINDS, (PALETTE[4], PALETTE[0], PALETTE[1], PALETTE[2])))
WIDE = (10.0, 4.0)
#: Names on tick labels and legends (episode ids, policies: task-app ids are 36-character UUIDs)
#: are shortened to this many characters around an ellipsis, so the axes keep their room.
LABEL_CHARS = 24
SQUARE = (6.0, 5.0)
#: The artist attribute holding hover texts a figure function attaches (``tip``), read by exports.
TIPS_ATTRIBUTE = "workbench_tips"


def tip(artist, texts: str | Sequence[str]) -> None:
    """Attach hover text to ``artist`` (one text, or one per point of a scatter), which an export
    such as the report's SVG (``workbench.views.report.svg``) shows as a tooltip.

    Args:
        artist: A matplotlib artist drawn by a figure function.
        texts: Its text, or one text per point.
    """
    setattr(artist, TIPS_ATTRIBUTE, texts if isinstance(texts, str) else [str(t) for t in texts])


def literal_text(build: Callable[_Args, Figure]) -> Callable[_Args, Figure]:
    """Make a figure function draw every text as written.

    Matplotlib reads text between two ``$`` as mathtext, so a run called ``cost $5 vs $8`` would
    lose its dollars and turn italic. Names come from users (policies, runs, configs, episode
    ids), and no figure here writes mathtext itself, so each text is drawn literally.

    Args:
        build: A function returning a ``Figure``.

    Returns:
        The same function, drawing ``$`` as a dollar sign in every text it creates.
    """

    @functools.wraps(build)
    def build_literal(*args: _Args.args, **kwargs: _Args.kwargs) -> Figure:
        import matplotlib

        # A text reads the parameter when it is made: titles, labels, legends and named ticks
        # are all made here (ticks added when drawing later carry numbers only).
        with matplotlib.rc_context({"text.parse_math": False}):
            return build(*args, **kwargs)

    return build_literal


def _figure(size: tuple[float, float] = WIDE, ncols: int = 1) -> tuple[Figure, np.ndarray]:
    # Figure() rather than plt.figure(): returned figures are not kept alive by pyplot's
    # registry, so a notebook that draws hundreds of them does not leak. Imported here: the
    # widgets and the app read this module's colours and never pay matplotlib's ~1 s import.
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, axes


def _episode_rows(table: pd.DataFrame, episode: str) -> pd.DataFrame:
    rows = table[table["episode"] == episode]
    if rows.empty:
        raise KeyError(f"no episode {episode!r} in these scores")
    return rows


@literal_text
def decision_components(scores, episode: str) -> Figure:
    """Per-decision reward (after lambda) of one episode, stacked by component kind.

    Gains stack above zero and losses (negative weights) below it; a triangle marks each
    decision that unlocked an achievement, labelled with the name.

    Args:
        scores: The ``Scores`` of a corpus holding the episode.
        episode: The episode id.

    Returns:
        The matplotlib figure.
    """
    components = _episode_rows(scores.components, episode)
    decisions = _episode_rows(scores.decisions, episode)
    by_kind = components.pivot_table(index="decision", columns="kind", values="scaled", aggfunc="sum", fill_value=0.0)
    by_kind = by_kind.reindex(decisions["decision"].to_numpy(), fill_value=0.0)
    fig, (ax,) = _figure((10.0, 5.2))
    x = by_kind.index.to_numpy()
    up = np.zeros(len(x))
    down = np.zeros(len(x))
    for kind in [k for k in KIND_COLORS if k in by_kind.columns]:
        values = by_kind[kind].to_numpy()
        positive, negative = np.clip(values, 0, None), np.clip(values, None, 0)
        ax.bar(x, positive, bottom=up, width=1.0, color=KIND_COLORS[kind], label=KIND_LABELS[kind], linewidth=0)
        ax.bar(x, negative, bottom=down, width=1.0, color=KIND_COLORS[kind], linewidth=0)
        up += positive
        down += negative
    reach = _mark_unlocks(ax, scores, episode, top=up)
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set_ylim(min(down.min(), 0.0) * 1.1, max(up.max(), 1e-9) * 1.1)
    ax.set(xlabel="decision", ylabel="reward (after lambda)")
    ax.set_title(f"Shaped reward per decision: {short_label(episode, 2 * LABEL_CHARS)}", pad=6.0 + reach)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def _mark_unlocks(ax, scores, episode: str, top: np.ndarray) -> float:
    """A triangle on each unlocking decision and its names in a row above the axes, spread so
    no two labels overlap, each tied to its decision by a thin leader line. Returns how far (in
    points) the labels reach above the axes, for the title to clear them."""
    decisions = _episode_rows(scores.decisions, episode)
    unlocking = decisions[decisions["new_achievements"] > 0]
    if unlocking.empty:
        return 0.0
    names = _unlock_names(scores, episode)
    first = int(decisions["decision"].iloc[0])
    low, high = float(decisions["decision"].min()) - 0.5, float(decisions["decision"].max()) + 0.5
    ax.set_xlim(low, high)
    marks = []
    for decision in unlocking["decision"]:
        height = top[int(decision) - first] if len(top) else 0.0
        ax.plot([decision], [height], marker="v", color="black", markersize=5, linestyle="none")
        label = ", ".join(names.get(int(decision), []))
        if label:
            marks.append((int(decision), float(height), label))
    if not marks:
        return 0.0
    # Label centres in axes fractions, at least one label height apart (7 pt text, rotated).
    width_px = ax.figure.get_figwidth() * ax.figure.dpi * 0.75
    gap = 11.0 / width_px
    wanted = [(d - low) / (high - low) for d, _, _ in marks]
    spots = list(wanted)
    for i in range(1, len(spots)):
        spots[i] = max(spots[i], spots[i - 1] + gap)
    spots[-1] = min(spots[-1], 1.0)
    for i in range(len(spots) - 2, -1, -1):
        spots[i] = min(spots[i], spots[i + 1] - gap)
    for (decision, height, label), spot in zip(marks, spots):
        ax.annotate(
            label,
            (decision, height),
            xytext=(spot, 1.02),
            textcoords="axes fraction",
            rotation=90,
            fontsize=7,
            ha="center",
            va="bottom",
            arrowprops={"arrowstyle": "-", "color": "0.65", "linewidth": 0.5, "shrinkA": 0, "shrinkB": 3},
        )
    return 10.0 + 4.2 * max(len(label) for _, _, label in marks)  # 7 pt text: ~4.2 pt per character


def _unlock_names(scores, episode: str) -> dict[int, list[str]]:
    rows = scores.unlocks[scores.unlocks["episode"] == episode]
    return rows.groupby("decision")["name"].apply(list).to_dict()


@literal_text
def cumulative_return(scores, episode: str, *, cursor: int | None = None) -> Figure:
    """Cumulative shaped return against Crafter's own return and achievements unlocked.

    ``cursor`` (a decision) draws a vertical line, as the Replayer does.

    Args:
        scores: The ``Scores`` of a corpus holding the episode.
        episode: The episode id.
        cursor: A decision to mark, or None.

    Returns:
        The matplotlib figure.
    """
    decisions = _episode_rows(scores.decisions, episode)
    x = decisions["decision"].to_numpy()
    fig, (ax,) = _figure()
    ax.step(x, decisions["return"].to_numpy(), where="post", color=PALETTE[0], label="shaped return")
    ax.step(x, decisions["env_reward"].cumsum().to_numpy(), where="post", color=PALETTE[5], label="Crafter return")
    ax.set(
        title=f"Returns over the episode: {short_label(episode, 2 * LABEL_CHARS)}",
        xlabel="decision",
        ylabel="cumulative reward",
    )
    twin = ax.twinx()
    twin.step(
        x,
        decisions["new_achievements"].cumsum().to_numpy(),
        where="post",
        color=PALETTE[2],
        linestyle="--",
        label="achievements unlocked",
    )
    twin.set_ylabel("achievements unlocked (count)")
    from matplotlib.ticker import MaxNLocator

    twin.yaxis.set_major_locator(MaxNLocator(integer=True))
    twin.set_ylim(0, len(ACHIEVEMENTS) + 0.5)  # the full scale: 22 achievements
    if cursor is not None:
        ax.axvline(cursor, color="0.2", linewidth=1.0, label="current decision")
    lines = ax.get_lines() + twin.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], loc="upper left", bbox_to_anchor=(1.08, 1.0), frameon=False)
    return fig


@literal_text
def achievement_timeline(episode: Episode) -> Figure:
    """When each achievement was first unlocked in an episode (decision on x, name on y).

    Args:
        episode: The episode.

    Returns:
        The matplotlib figure.
    """
    status = episode.achievement_status
    assert status is not None  # filled from the counts when not given
    first = {name: int(np.argmax(status[:, i])) for i, name in enumerate(ACHIEVEMENTS) if status[:, i].any()}
    ordered = sorted(first.items(), key=lambda item: item[1])
    fig, (ax,) = _figure((8.0, 0.5 + 0.3 * max(len(ordered), 3)))
    if ordered:
        names, when = zip(*ordered)
        ax.scatter(when, range(len(names)), color=PALETTE[0], zorder=3)
        ax.hlines(range(len(names)), 0, when, color="0.8", linewidth=1)
        ax.set_yticks(range(len(names)), names)
        ax.invert_yaxis()
    else:
        ax.text(0.5, 0.5, "no achievement unlocked", transform=ax.transAxes, ha="center")
        ax.set_yticks([])
    ax.set_xlim(0, episode.n_decisions + 1)
    ax.set(title=f"Achievement timeline: {short_label(episode.id, 2 * LABEL_CHARS)}", xlabel="decision of first unlock")
    return fig


@literal_text
def compare_configs(
    comparison, *, labels: Sequence[str] = ("A", "B"), top: int = 12, corpus: Corpus | None = None, by: str = "policy"
) -> Figure:
    """Two configs across a corpus: per-episode returns (left; coloured by ``by`` when the
    ``corpus`` is given) and the ``top`` per-component corpus totals that changed most (right).

    Args:
        comparison: A ``scoring.Comparison`` of two configs.
        labels: The two configs' names.
        top: How many changed components to show.
        corpus: The corpus, to colour episodes by ``by`` (None: one colour).
        by: The corpus index column to colour by.

    Returns:
        The matplotlib figure.
    """
    episodes = comparison.episodes
    fig, (left, right) = _figure((12.0, 5.0), ncols=2)
    a, b = episodes["return_a"].to_numpy(), episodes["return_b"].to_numpy()
    if corpus is not None:
        groups = episodes["episode"].map(corpus.groups(by))
        for color, (group, rows) in zip(PALETTE, episodes.groupby(groups, sort=False)):
            points = left.scatter(
                rows["return_a"], rows["return_b"], color=color, s=24, label=short_label(str(group), LABEL_CHARS)
            )
            tip(points, _return_tips(rows, labels))
    else:
        tip(left.scatter(a, b, color=PALETTE[0], s=24), _return_tips(episodes, labels))
    low, high = float(min(a.min(), b.min(), 0.0)), float(max(a.max(), b.max(), 1e-9))
    left.plot([low, high], [low, high], color="0.6", linewidth=1, label="equal")
    names = [short_label(str(label), 2 * LABEL_CHARS) for label in labels]
    left.set(title="Shaped return per episode", xlabel=f"return under {names[0]}", ylabel=f"return under {names[1]}")
    left.legend(loc="upper left", frameon=False, title=by if corpus is not None else None)
    shown = comparison.largest_changes(top)
    shown = shown[shown["difference"] != 0].iloc[::-1]
    if shown.empty:
        right.text(
            0.5,
            0.5,
            "no differences: every component\npays the same corpus total",
            transform=right.transAxes,
            ha="center",
            va="center",
        )
        right.set(title="Reward by component, corpus total", xticks=[], yticks=[])
        return fig
    y = np.arange(len(shown))
    right.barh(y - 0.2, shown["total_a"], height=0.4, color=PALETTE[0], label=names[0])
    right.barh(y + 0.2, shown["total_b"], height=0.4, color=PALETTE[1], label=names[1])
    right.set_yticks(y, shown["component"])
    right.axvline(0, color="0.3", linewidth=0.8)
    right.set(title=f"Reward by component, corpus total (top {len(shown)} changes)", xlabel="reward (after lambda)")
    right.legend(loc="lower right", frameon=False)
    return fig


def _return_tips(rows: pd.DataFrame, labels: Sequence[str]) -> list[str]:
    """Each episode's hover text in ``compare_configs``: its id and both returns."""
    return [
        f"{episode}: {labels[0]} {a:.4g}, {labels[1]} {b:.4g}"
        for episode, a, b in zip(rows["episode"], rows["return_a"], rows["return_b"])
    ]


@literal_text
def component_share(scores, *, by: str | None = "policy", corpus: Corpus | None = None) -> Figure:
    """Share of the total (absolute) shaped reward by component kind across a corpus.

    With ``by`` (an index column of ``corpus``, e.g. "policy") one bar per group: which
    component dominates for which kind of behaviour.

    Args:
        scores: The corpus's ``Scores``.
        by: An index column of ``corpus`` to group by, or None for one bar.
        corpus: The corpus (needed with ``by``).

    Returns:
        The matplotlib figure.
    """
    components = scores.components
    if by is not None and corpus is not None:
        components = components.assign(group=components["episode"].map(corpus.groups(by)))
    else:
        components = components.assign(group="corpus")
    totals = components.assign(magnitude=components["scaled"].abs()).pivot_table(
        index="group", columns="kind", values="magnitude", aggfunc="sum", fill_value=0.0
    )
    shares = totals.div(totals.sum(axis=1).replace(0, np.nan), axis=0).fillna(0.0) * 100
    fig, (ax,) = _figure((8.0, 1.2 + 0.6 * len(shares)))
    left = np.zeros(len(shares))
    y = np.arange(len(shares))
    for kind in [k for k in KIND_COLORS if k in shares.columns]:
        ax.barh(y, shares[kind], left=left, color=KIND_COLORS[kind], label=KIND_LABELS[kind])
        left += shares[kind].to_numpy()
    ax.set_yticks(y, [short_label(str(group), LABEL_CHARS) for group in shares.index])
    ax.set_xlim(0, 100)
    ax.set(title="Share of shaped reward by component", xlabel="share of |reward| (%)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


@literal_text
def return_vs_achievements(scores, corpus: Corpus, *, by: str = "policy") -> Figure:
    """Shaped return against achievements unlocked per episode: does the shaping pay for progress?

    Args:
        scores: The corpus's ``Scores``.
        corpus: The corpus.
        by: The index column that colours the points.

    Returns:
        The matplotlib figure.
    """
    index = corpus.index.set_index("episode")
    returns = scores.episodes.set_index("episode")["reward_sum"]
    frame = pd.DataFrame({"return": returns, "unlocked": index["n_unlocked"], "group": corpus.groups(by)}).dropna()
    fig, (ax,) = _figure(SQUARE)
    for color, (group, rows) in zip(PALETTE, frame.groupby("group")):
        ax.scatter(
            rows["unlocked"], rows["return"], color=color, label=short_label(str(group), LABEL_CHARS), s=30, alpha=0.85
        )
    ax.set(
        title="Shaped return vs. achievements unlocked",
        xlabel="achievements unlocked (of 22)",
        ylabel="shaped return per episode",
    )
    ax.legend(title=by, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig
