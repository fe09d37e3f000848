"""``AdvantagesSection``: a view's collapsed section that, opened, shows the advantages panel of the view's config."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from workbench.data.episodes import Corpus
from workbench.views.widgets.advantages import AdvantagesPanel
from workbench.views.widgets.traits import ViewTraits

__all__ = ["TITLE", "AdvantagesSection"]

#: The section's title, as the page shows it.
TITLE = "advantages: what a GRPO learner sees"


class AdvantagesSection(w.Accordion):
    """A collapsed section under a view (the Tuner, Compare): opened, an ``AdvantagesPanel``
    that follows the view's ``config`` while it is open; a rollout clicked in the panel becomes
    the view's ``episode`` (so a Replayer that follows the view opens it).

    The panel is built on the first opening, so the view's first show costs nothing more, and a
    closed section recomputes nothing on the view's moves.

    Attributes:
        panel: The panel once the section was opened, else None.

    Args:
        view: The view whose ``config`` the panel shows.
        corpus: The view's corpus.
        by: The group columns (default: seed, plus policy_version when the corpus has it).
    """

    def __init__(self, view: ViewTraits, corpus: Corpus, *, by: tuple[str, ...] | None = None) -> None:
        super().__init__(children=[w.HTML("")], titles=(TITLE,), selected_index=None)
        self.add_class("workbench-advantages-section")
        self.view, self.corpus, self.by = view, corpus, by
        self.panel: AdvantagesPanel | None = None
        self.observe(self._follow, "selected_index")
        view.observe(self._follow, "config")

    def _follow(self, _change: Any = None) -> None:
        if self.selected_index != 0:
            return
        if self.panel is None:
            self.panel = AdvantagesPanel(self.corpus, self.view.config, by=self.by)
            self.panel.observe(self._picked, "episode")
            self.children = [self.panel]
        elif self.panel.config is not self.view.config:
            self.panel.config = self.view.config

    def _picked(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.view.episode = change["new"]
