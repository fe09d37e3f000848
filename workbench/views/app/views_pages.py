"""The Tune, Replay and Compare pages: each shows one of the notebook views, built in the background."""

from __future__ import annotations

import html
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import solara
import solara.lab

from workbench.errors import CorpusError
from workbench.views.app.common import Status, heading_html

log = logging.getLogger("workbench.views.app")

#: What a page says before a corpus is open.
NO_CORPUS = "No corpus is open yet: open one on the <b>Corpus</b> page."


class ViewSlot:
    """A session's view (``view``: a Tuner, Replayer or Compare; None until built), built in the
    background (a ``solara.lab.task``, ``build``) the first time it is ``need``-ed, from the recipe
    the last ``reset`` gave.

    What its page shows is reactive: ``shown`` (the view once built, or another one put there:
    the Live page's Replayer) and ``line`` (what the page says while there is no view). The views
    are built behind the first page rather than with it because every widget of a view is sent
    to the browser as it is made (the three views are some 390 widget models; docs/views.md has
    the figures). ``installed(view)``, if given, runs once a view is built, before the callbacks
    waiting for it. ``closed()`` says whether the browser tab has gone: a build it cuts short
    (its widgets closed under it, "Widget has no comm") is a line in the log, not a traceback."""

    def __init__(
        self,
        name: str,
        status: Status,
        installed: Callable[[Any], None] | None = None,
        closed: Callable[[], bool] = lambda: False,
    ) -> None:
        self.name, self.status, self.installed, self.closed = name, status, installed, closed
        self.view: Any = None
        self.shown: solara.Reactive[Any] = solara.Reactive(None)
        self.line = solara.Reactive(NO_CORPUS)
        self.build = solara.lab.task(self._build, check_for_render_context=False)
        self._recipe: Callable[[], Any] | None = None
        self._waiting: list[Callable[[Any], None]] = []
        self._building = False
        self._generation = 0  # a build started before the latest reset is thrown away
        self._lock = threading.Lock()

    @property
    def building(self) -> bool:
        """Whether a build of the current recipe is under way."""
        return self._building

    def reset(self, recipe: Callable[[], Any] | None) -> None:
        """Forget the view; the next ``need`` builds one with ``recipe()`` (None: there is nothing
        to build, no corpus is open).

        Args:
            recipe: Builds the view, or None.
        """
        with self._lock:
            self._generation += 1
            self.view, self._recipe, self._waiting, self._building = None, recipe, [], False
        self.shown.value = None
        self.line.value = NO_CORPUS if recipe is None else f"the {self.name} is about to be built"

    def show(self, view: Any) -> None:
        """Show ``view`` on the page (the slot's own view, or another: the Live page's Replayer).

        Args:
            view: The view widget.
        """
        self.shown.value = view

    def need(self, then: Callable[[Any], None] | None = None) -> None:
        """Make sure the view exists: build it in the background unless it is built or being
        built, then call ``then(view)``.

        Args:
            then: Called with the view once it is built, or None.

        Raises:
            CorpusError: No corpus is open.
        """
        with self._lock:
            if self._recipe is None:
                raise CorpusError(f"no {self.name} yet: open a corpus on the Corpus page first")
            view, start = self.view, False
            if view is None:
                if then is not None:
                    self._waiting.append(then)
                start, self._building = not self._building, True
            generation = self._generation
        if view is not None:
            if then is not None:
                then(view)
        elif start:
            self.line.value = f"building the {self.name} ..."
            self.build(generation)

    def _build(self, generation: int) -> Any:
        """The task's work: build the view of ``generation``'s recipe and install it, unless a
        reset came meanwhile or the tab closed under it."""
        try:
            return self._build_view(generation)
        except Exception as error:  # shown in the page, traceback in the server log
            with self._lock:
                if generation != self._generation:
                    return None
                self._building, self._waiting = False, []
            if self.closed():
                log.info("the tab closed while the %s was being built (%s: %s)", self.name, type(error).__name__, error)
                return None
            self.line.value = f"the {self.name} could not be built (the message above says why)"
            self.status.error(error, f"building the {self.name}")
            return None

    def _build_view(self, generation: int) -> Any:
        recipe, started = self._recipe, time.perf_counter()
        if recipe is None:
            raise CorpusError(f"no {self.name} yet: open a corpus on the Corpus page first")
        view = recipe()
        if generation != self._generation:
            return None
        if self.installed is not None:
            self.installed(view)
        with self._lock:
            if generation != self._generation:
                return None
            self.view, self._building = view, False
            waiting, self._waiting = self._waiting, []
        log.info("built the %s in %.2f s", self.name, time.perf_counter() - started)
        if self.shown.peek() is None:  # the page may show another view meanwhile (the Live page's Replayer)
            self.shown.value = view
        self.line.value = f"the {self.name} is ready"
        for then in waiting:
            then(view)
        return view


#: Each view page's title and note.
NOTES = {
    "Tune": "move a weight and the returns follow; click an episode to replay it",
    "Replay": "play an episode beside what each decision is paid",
    "Compare": "the session's configs side by side; click an episode to replay it",
}


@solara.component
def ViewPage(slot: ViewSlot, title: str, front: bool) -> solara.Element:
    """One view's page: its title, then the view, or a line while there is none (no corpus, or
    the view being built). Shown for the first time, it builds its view if none is built yet.

    A view enters the page only while the page is in front: a figure drawn in a hidden page has
    no size (the browser logs a negative ``<rect>`` per bar), so a view built (or replaced)
    behind another page is put in when its page comes to the front.

    Args:
        slot: The session's view.
        title: The page's title (a key of ``NOTES``).
        front: Whether the page is the one shown.

    Returns:
        The page's element.
    """
    shown = slot.shown.value
    line = slot.line.value
    placed = solara.use_ref(None)
    if front:
        placed.current = shown

    def build_when_shown() -> None:
        if front and slot.shown.peek() is None and slot.line.peek() != NO_CORPUS:
            slot.need()

    solara.use_effect(build_when_shown, [front, line == NO_CORPUS])
    with solara.Column(classes=[f"wb-app-page-{title.lower()}"], gap="0px", style={"width": "100%"}) as page:
        w.HTML.element(value=heading_html(title, NOTES[title]))
        if shown is not None and placed.current is shown:
            solara.Column(children=[shown], gap="0px", style={"width": "100%"})
        else:
            text = line if shown is None else f"the {html.escape(slot.name)} is ready"
            w.HTML.element(value=f"<p style='color:#555'>{text}</p>", _dom_classes=["wb-app-line"])
    return page
