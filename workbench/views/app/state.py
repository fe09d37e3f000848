"""A browser tab's app state as frozen values: the corpus and configs (``AppState``), the Live page (``LiveState``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus

if TYPE_CHECKING:
    from pathlib import Path

    from workbench.data.watch import Watcher
    from workbench.scoring.incremental import LiveScores
    from workbench.views.widgets import OveroptimisationPanel, Pick, Timeline


def _empty() -> Mapping[str, object]:
    return MappingProxyType({})


@dataclass(frozen=True, eq=False)
class AppState:
    """What a tab works on, one immutable value (held in a ``solara.Reactive``: a change is a
    new value, and the pages re-draw from it). Never equal to another value (identity), so every
    change is heard, and a corpus is never compared element by element.

    Attributes:
        corpus: The corpus open, or None.
        corpus_label: What the corpus is called in the page.
        configs: The session's configs by name (read-only; ``with_config`` makes a new state).
        sources: Where each config came from, by name.
        opened: How many corpora were opened (a corpus opened again is a change too).
        added: ``(count, name)``: how many configs were added, and the last one's name.
    """

    corpus: Corpus | None = None
    corpus_label: str = ""
    configs: Mapping[str, RewardConfig] = field(default_factory=_empty)  # type: ignore[arg-type]
    sources: Mapping[str, str] = field(default_factory=_empty)  # type: ignore[arg-type]
    opened: int = 0
    added: tuple[int, str] = (0, "")

    def with_config(self, name: str, config: RewardConfig, source: str) -> AppState:
        """This state with ``config`` kept as ``name`` (replacing one of that name).

        Args:
            name: The config's name.
            config: The config.
            source: Where it came from (shown on the Configs page).

        Returns:
            The new state.
        """
        return replace(
            self,
            configs=MappingProxyType({**self.configs, name: config}),
            sources=MappingProxyType({**self.sources, name: source}),
            added=(self.added[0] + 1, name),
        )

    def with_corpus(self, corpus: Corpus, label: str) -> AppState:
        """This state with ``corpus`` open.

        Args:
            corpus: The corpus.
            label: What it is called in the page.

        Returns:
            The new state.
        """
        return replace(self, corpus=corpus, corpus_label=label, opened=self.opened + 1)


#: The Live page's count line while nothing is followed.
NOT_FOLLOWING = "<div class='wb-live-count'>not following</div>"


@dataclass(frozen=True, eq=False)
class Followed:
    """One followed run: its scores under the session's configs (``live``), their views
    (``timeline``, ``watch``: the over-optimisation watch) and the ``watcher`` appending into
    ``into`` (closed when following stops). Equal only to itself.

    Attributes:
        live: The run's ``LiveScores``.
        timeline: Its timeline.
        watch: Its over-optimisation watch.
        watcher: The watcher appending its episodes.
        into: The target corpus folder.
    """

    live: LiveScores
    timeline: Timeline
    watch: OveroptimisationPanel
    watcher: Watcher
    into: Path


@dataclass(frozen=True)
class LiveState:
    """What the Live page of a tab shows, one immutable value (``AppSession.live``): the page is
    drawn from it, and its background work (the watcher, the redraws) is keyed on it.

    Attributes:
        run: The followed run (its ``LiveScores``, timeline, over-optimisation watch and
            watcher), kept after following stops; None before.
        following: Whether the watcher runs (its thread is cancelled when this turns False, the
            run changes or the tab closes).
        status: ``(text, level)`` of the page's status line.
        count: The count line's HTML (how many episodes, the latest, when).
        problems: ``(file, message)`` of each problem met and not resolved since, oldest first.
        resolved: How many problems a later whole read of their file resolved.
        arrivals: How many polls brought episodes: each new value redraws the timeline, the
            audit and the watch (the latest wins: arrivals meanwhile are drawn by the next round).
        audit: The audit's HTML ('' until two episodes came).
        picked: The last pick opened from the page (``Pick``), or None.
    """

    run: Followed | None = None
    following: bool = False
    status: tuple[str, str] = ("", "info")
    count: str = NOT_FOLLOWING
    problems: tuple[tuple[str, str], ...] = ()
    resolved: int = 0
    arrivals: int = 0
    audit: str = ""
    picked: Pick | None = None
