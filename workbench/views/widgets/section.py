"""``ViewSection``: a view's collapsed section that, opened, shows a panel of the view's config (advantages, the shaping certificate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w
import traitlets

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.views.widgets.advantages import AdvantagesPanel
from workbench.views.widgets.certificate import CertificatePanel
from workbench.views.widgets.common import LatestWins
from workbench.views.widgets.traits import ViewTraits

__all__ = ["ADVANTAGES", "CERTIFICATE", "ViewSection", "advantages_section", "certificate_section"]

#: The sections' titles, as the page shows them.
ADVANTAGES = "advantages: what a GRPO learner sees"
CERTIFICATE = "shaping certificate: what no potential explains, and the loops it pays"
#: Certificate recomputes while the view's config moves: at most one per this many seconds.
CERTIFICATE_GAP = 0.25


class ViewSection(w.Accordion):
    """A collapsed section under a view (the Tuner, Compare): opened, a panel (a widget with the
    views' traits) that follows the view's ``config`` while it is open; the panel's ``episode``
    is the view's (``traitlets.dlink``, state), and each pick in the panel is the view's
    ``picked`` (the same ``Pick``, its decision included: a Replayer linked to the view opens a
    certificate's loop at its first decision).

    The panel is built on the first opening, so the view's first show costs nothing more, and a
    closed section recomputes nothing on the view's moves. With ``gap`` the panel follows the
    config "latest wins" (``common.LatestWins``): inside the kernel's event loop a change is
    scheduled after the view's own messages have gone out, at most one recompute per ``gap``
    seconds, and changes meanwhile are folded into the next; without a loop (code, tests) at once.

    Attributes:
        panel: The panel once the section was opened, else None.

    Args:
        view: The view whose ``config`` the panel shows.
        title: The section's title.
        build: Makes the panel for a config.
        css_class: A class for the section's DOM node (pages and tests find it by it).
        gap: Seconds between recomputes while the config moves (None: every change at once).
    """

    def __init__(
        self,
        view: ViewTraits,
        title: str,
        build: Callable[[RewardConfig], ViewTraits],
        css_class: str,
        *,
        gap: float | None = None,
    ) -> None:
        super().__init__(children=[w.HTML("")], titles=(title,), selected_index=None)
        self.add_class(css_class)
        self.view, self.build = view, build
        self.panel: Any = None
        self._updates = None if gap is None else LatestWins(self._follow, gap, defer=lambda _change: True)
        self.observe(lambda _change: self._follow(), "selected_index")
        view.observe(self._config_moved, "config")

    def _config_moved(self, change: dict[str, Any]) -> None:
        if self.selected_index != 0 or self.panel is None:
            return
        if self._updates is None:
            self._follow()
        else:
            self._updates.request(change)

    def _follow(self) -> None:
        if self.selected_index != 0:
            return
        if self.panel is None:
            self.panel = self.build(self.view.config)
            self.panel.episode = self.view.episode  # first: the link below starts from the view's
            traitlets.dlink((self.panel, "episode"), (self.view, "episode"))
            self.panel.observe(self._picked, "picked")
            self.children = [self.panel]
        elif self.panel.config is not self.view.config:
            self.panel.config = self.view.config

    def _picked(self, change: dict[str, Any]) -> None:
        """A pick in the panel is the view's: its episode (the view may have moved on since the
        panel's last pick of it), then the same ``Pick``."""
        if change["new"] is not None:
            self.view.episode = change["new"].episode
            self.view.picked = change["new"]


def advantages_section(view: ViewTraits, corpus: Corpus, *, by: tuple[str, ...] | None = None) -> ViewSection:
    """The section "advantages: what a GRPO learner sees" (an ``AdvantagesPanel``), following
    every config change at once (a recompute is ~10 ms on the sample).

    Args:
        view: The view whose ``config`` the panel shows.
        corpus: The view's corpus.
        by: The group columns (default: seed, plus policy_version when the corpus has it).

    Returns:
        The section, closed.
    """
    return ViewSection(
        view, ADVANTAGES, lambda config: AdvantagesPanel(corpus, config, by=by), "workbench-advantages-section"
    )


def certificate_section(view: ViewTraits, corpus: Corpus) -> ViewSection:
    """The section "shaping certificate" (a ``CertificatePanel``), following config changes at
    most once per ``CERTIFICATE_GAP`` seconds (a certificate is ~20-50 ms on the sample, beside a
    Tuner move's ~10 ms).

    Args:
        view: The view whose ``config`` the panel shows.
        corpus: The view's corpus.

    Returns:
        The section, closed.
    """
    return ViewSection(
        view,
        CERTIFICATE,
        lambda config: CertificatePanel(corpus, config),
        "workbench-certificate-section",
        gap=CERTIFICATE_GAP,
    )
