"""``CertificatePanel``: a config's shaping certificate on a corpus as a panel: what no potential explains, per component, and the positive-return cycles, each one click from its replay.

It is a widget (a ``VBox``) whose state is the views' shared traits (``traits.ViewTraits``:
``config`` certified, ``episode`` of the cycle picked, ``selection`` of the episodes its loop was
found in) plus ``decision``, the first decision of the picked cycle.
"""

from __future__ import annotations

import html
import time
from typing import Any

import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.analysis.shaping import Certificate, certify
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.util.blas import single_threaded
from workbench.views.widgets.certificate_figure import UnexplainedFigure
from workbench.views.widgets.common import lined, lines_box
from workbench.views.widgets.pick import announce
from workbench.views.widgets.traits import ViewTraits

__all__ = ["CYCLES_LISTED", "LOOPS_LISTED", "CertificatePanel", "cycle_label", "cycles_in_order"]

#: Cycles the table lists (the best-paying first; every one is in ``panel.certificate.cycles``).
CYCLES_LISTED = 200
#: Loops the summary names (the best-paying first).
LOOPS_LISTED = 4
#: Rows the cycles table shows at once (it scrolls).
TABLE_ROWS = 8
#: The summary's fixed height in lines (so the table below never moves as it changes).
SUMMARY_LINES = 8


def cycles_in_order(cycles: pd.DataFrame) -> pd.DataFrame:
    """The cycles as the table lists them: the best-paying first, ties in the certificate's order
    (by episode, then time), at most ``CYCLES_LISTED``.

    Args:
        cycles: ``Certificate.cycles``.

    Returns:
        The listed cycles, renumbered from 0.
    """
    order = np.argsort(-cycles["paid"].to_numpy(dtype=np.float64), kind="stable")
    return cycles.iloc[order[:CYCLES_LISTED]].reset_index(drop=True)


def cycle_label(row: Any) -> str:
    """A cycle as its table row reads: what it paid, episode, the decisions of the loop, the loop.

    Args:
        row: A row of ``Certificate.cycles`` (``itertuples``).

    Returns:
        ``"paid 0.150 · farm-a · decisions 4..5 · collect_stone / place_stone (+stone)"`` (what it
        paid first: a narrow table cuts the end of its rows).
    """
    return f"paid {row.paid:.3f} · {row.episode} · decisions {row.from_decision + 1}..{row.to_decision} · {row.loop}"


class CertificatePanel(w.VBox, ViewTraits):
    """The shaping certificate (``workbench.analysis.shaping.certify``, gamma 1) of ``config``
    on ``corpus``, recomputed when ``config`` changes.

    A summary (what the shaping pays, how much of it no potential explains, the cycles, what the
    config's potential-based counterpart pays per policy, the loops that pay most), a bar per component with the largest unexplained share of the shaped
    return (coloured by kind), and the positive-return cycles as a table (episode, the loop's
    decisions, what it paid, the loop): a click on a row sets ``decision`` to the loop's first
    decision, then ``episode`` to its episode and ``selection`` to the episodes its loop was
    found in. ``panel.certificate`` is the current ``Certificate``, ``panel.listed`` the cycles
    the table lists (in its order) and ``panel.last_update_ms`` the kernel's time of the last
    recompute and redraw.

    Args:
        corpus: The episodes.
        config: The config to certify.
    """

    def __init__(self, corpus: Corpus, config: RewardConfig) -> None:
        self.corpus = corpus
        self.by = "policy" if "policy" in corpus.index.columns else "episode"
        self.certificate: Certificate | None = None
        self.listed = pd.DataFrame()
        self.last_update_ms = 0.0
        self._drawing = False
        self.summary = w.HTML(layout=lines_box(SUMMARY_LINES))
        self.figure = UnexplainedFigure()
        self.table_header = w.HTML(
            lined(
                "<div style='font-size:12px'><b>positive-return cycles</b> (a state revisited after the reward "
                "paid something net positive): paid · episode · decisions · loop; click one to replay it</div>"
            )
        )
        self.table = w.Select(options=[], rows=TABLE_ROWS, layout=w.Layout(width="100%"))
        self.table.add_class("workbench-cycles")
        super().__init__(
            [self.summary, self.figure.widget, self.figure.legend, self.table_header, self.table],
            layout=w.Layout(width="100%"),
        )
        self.add_class("workbench-certificate")
        self.table.observe(self._on_pick, "value")
        self.observe(self._on_config, "config")
        self.config = config

    def _on_config(self, change: dict[str, Any]) -> None:
        start = time.perf_counter()
        with single_threaded():  # a small fit: BLAS's threads made it ~10x slower on a busy machine
            self.certificate = certify(self.corpus, change["new"], by=self.by)
        self._draw(self.certificate)
        self.last_update_ms = 1000 * (time.perf_counter() - start)

    def _draw(self, certificate: Certificate) -> None:
        self.summary.value = lined(_summary_html(certificate))
        self.figure.update(certificate.components)
        listed = cycles_in_order(certificate.cycles)
        keys = [f"{r.episode}|{r.from_decision}|{r.to_decision}" for r in listed.itertuples()]
        self._drawing = True  # the options change may move the value: no pick
        try:
            kept = self.table.value if self.table.value in keys else None
            self.table.options = [(cycle_label(r), key) for r, key in zip(listed.itertuples(), keys)]
            self.table.value = kept
        finally:
            self._drawing = False
        self.listed = listed

    def _on_pick(self, change: dict[str, Any]) -> None:
        if self._drawing or change["new"] is None:
            return
        keys = [f"{r.episode}|{r.from_decision}|{r.to_decision}" for r in self.listed.itertuples()]
        row = self.listed.iloc[keys.index(change["new"])]
        cycles = self.certificate.cycles if self.certificate is not None else self.listed
        found_in = dict.fromkeys(cycles.loc[cycles["loop"] == row["loop"], "episode"].astype(str))
        self.pick(str(row["episode"]), int(row["from_decision"]) + 1, tuple(found_in))

    def pick(self, episode: str, decision: int, selection: tuple[str, ...] = ()) -> None:
        """Focus a cycle (what a click on its row does): ``decision`` and ``selection`` become
        the loop's, then a ``Pick`` of the episode at that decision is announced.

        Args:
            episode: The cycle's episode.
            decision: The first decision of the loop (1-based).
            selection: The episodes to select (the loop's).
        """
        self.decision = decision
        self.selection = selection
        announce(self, episode, decision, source="certificate")


def _summary_html(certificate: Certificate) -> str:
    components, cycles, loops = certificate.components, certificate.cycles, certificate.loops
    total = float(certificate.counterpart["return"].sum())
    shaping = components[components["role"] == "shaping"]
    paid, unexplained = float(shaping["paid"].sum()), float(shaping["unexplained"].sum())

    def share(value: float) -> str:
        return f" ({value / total:.1%} of it)" if total else ""

    lines = [
        f"shaped return {total:.2f} over {certificate.counterpart.shape[0]} episode(s): the shaping pays "
        f"{paid:.2f}{share(paid)}, of which no potential over the state explains {unexplained:.2f}{share(unexplained)}",
        f"{len(cycles)} positive-return cycle(s) in {cycles['episode'].nunique()} episode(s); the decisions "
        f"inside them paid {certificate.cycle_paid:.2f}{share(certificate.cycle_paid)}",
    ]
    if certificate.credit_note():
        lines.append("note: " + html.escape(certificate.credit_note()))
    means = certificate.counterpart_by_group()
    lines.append(
        f"potential-based counterpart (gamma {certificate.gamma:g}), mean return per {html.escape(certificate.by)}: "
        + ", ".join(
            f"{html.escape(str(row[certificate.by]))} {row['potential_return']:.3f} (task app {row['return']:.3f})"
            for _, row in means.head(LOOPS_LISTED).iterrows()
        )
    )
    if len(loops):
        lines.append("the loops paying most:")
    for row in loops.head(LOOPS_LISTED).itertuples():
        lines.append(
            f"&nbsp;&nbsp;<b>{html.escape(str(row.loop))}</b>: {row.cycles} cycle(s) in {row.episodes} episode(s), "
            f"{row.paid_per_cycle:.3f} a cycle, {row.share_of_return:.1%} of the return"
        )
    return "<div style='font-size:12px'>" + "<br>".join(lines) + "</div>"
