"""``PageSession``: what the Corpus, Configs and Live pages use of the session that holds them.

The session builds the pages and the pages call back into it; typing the pages against this
protocol (which ``AppSession`` satisfies) instead of ``AppSession`` keeps the import graph free of
a session <-> pages circle, ``if TYPE_CHECKING:`` imports included.
"""

from __future__ import annotations

from typing import Protocol

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.views.app.views_pages import LazyView, ViewPage
from workbench.views.app.workspace import Workspace


class PageSession(Protocol):
    """The session as its pages see it (``workbench.views.app.session.AppSession``)."""

    configs: dict[str, RewardConfig]
    sources: dict[str, str]
    corpus: Corpus | None
    workspace: Workspace
    tuner_view: LazyView
    compare_view: LazyView
    replay_page: ViewPage

    def unique_name(self, name: str) -> str:
        """``name``, or ``name-2``, ``name-3`` ... when the session has a config of that name.

        Args:
            name: The name wanted.

        Returns:
            A name no config of the session has.
        """
        ...

    def add_config(self, name: str, config: RewardConfig, source: str, *, to_compare: bool = True) -> str:
        """Keep ``config`` as ``name`` and offer it to Compare; returns the name.

        Args:
            name: The config's name.
            config: The config.
            source: Where it came from.
            to_compare: Offer it to Compare too.

        Returns:
            The name.
        """
        ...

    def show_page(self, page: int) -> None:
        """Bring page ``page`` (an index in ``common.TABS``) to the front.

        Args:
            page: The page's index.
        """
        ...

    def retune(self, config: RewardConfig) -> None:
        """Start the Tuner over from ``config`` and show the Tune page.

        Args:
            config: Where the Tuner starts.
        """
        ...

    def set_corpus(self, corpus: Corpus, label: str) -> None:
        """Make ``corpus`` the session's.

        Args:
            corpus: The corpus.
            label: What it is called in the page.
        """
        ...
