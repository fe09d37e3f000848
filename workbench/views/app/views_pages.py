"""The Tune, Replay and Compare pages: each hosts one of the notebook views, built on demand."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from workbench.errors import CorpusError
from workbench.views.app.common import Status, heading, in_background

#: What a page says before a corpus is open.
NO_CORPUS = "No corpus is open yet: open one on the <b>Corpus</b> page."


class ViewPage:
    """A page showing one view's widget under a title (``widget``); ``show`` swaps the view in,
    ``wait`` shows a line while the view is being built.

    The view enters the page only once the page's tab is shown (``activate``): a figure drawn
    in a hidden tab has no size (the browser logs a negative ``<rect>`` per bar), and the first
    load sends only the page in front.

    A build's thread calls ``show`` while a tab click's thread calls ``activate``: each change
    holds the page's lock and ends by placing what the state says then (``_place``), so one
    thread never puts back what the other replaced (under load, a click landing while the
    "ready" line was being sent left that line over the built view for good)."""

    def __init__(self, title: str, note: str) -> None:
        self.title = title
        self.note = w.HTML(f"<p style='color:#555'>{NO_CORPUS}</p>")  # what the page says without a view
        self.body = w.VBox([self.note])
        self.widget = w.VBox([heading(title, note), self.body], layout=w.Layout(width="100%"))
        self.widget.add_class(f"wb-app-page-{title.lower()}")
        self.view: Any = None
        self.active = False
        # Re-entrant: a widget observer may call back into the page while it changes.
        self._lock = threading.RLock()

    def show(self, view: Any) -> None:
        """Show ``view`` (a Tuner, Replayer or Compare widget), at once if the page is in front,
        else when it comes to the front.

        Args:
            view: The view widget.
        """
        with self._lock:
            self.view = view
            if not self.active:
                self.note.value = _line("ready")
            self._place()

    def activate(self) -> None:
        """The page's tab is shown: put its view in (once)."""
        with self._lock:
            self.active = True
            self._place()

    def wait(self, text: str) -> None:
        """Show ``text`` (HTML) instead of a view: while one is built, or when there is none.

        Args:
            text: The HTML to show.
        """
        with self._lock:
            self.view = None
            self.note.value = _line(text)
            self._place()

    def _place(self) -> None:
        """Put in the page what its state says now: the view once the page is in front, else the line."""
        view = self.view
        wanted = view if self.active and view is not None else self.note
        if self.body.children != (wanted,):
            self.body.children = [wanted]


def _line(text: str) -> str:
    return f"<p style='color:#555'>{text}</p>"


class LazyView:
    """A session's view (``view``: a Tuner, Replayer or Compare; None until built) shown on
    ``page``: built in the background the first time it is ``need``-ed, from the recipe the
    last ``reset`` gave.

    Built on demand (the session asks once the first page is drawn) because every widget of a
    view is sent to the browser as it is made: the three views are some 390 widget models, and
    sending them with the first page delayed it (docs/views.md has the figures).
    ``installed(view)``, if given, runs once a view is built, before the callbacks waiting for it."""

    def __init__(
        self, page: ViewPage, status: Status, name: str, installed: Callable[[Any], None] | None = None
    ) -> None:
        self.page, self.status, self.name, self.installed = page, status, name, installed
        self.view: Any = None
        self.building = False
        self._recipe: Callable[[], Any] | None = None
        self._waiting: list[Callable[[Any], None]] = []
        self._generation = 0  # a build started before the latest reset is thrown away

    def reset(self, recipe: Callable[[], Any] | None) -> None:
        """Forget the view; the next ``need`` builds one with ``recipe()`` (None: there is nothing
        to build, no corpus is open).

        Args:
            recipe: Builds the view, or None.
        """
        self._generation += 1
        self.view, self._recipe, self._waiting, self.building = None, recipe, [], False
        self.page.wait(NO_CORPUS if recipe is None else f"the {self.name} is about to be built")

    def need(self, then: Callable[[Any], None] | None = None) -> None:
        """Make sure the view exists: build it in the background unless it is built or being
        built, then call ``then(view)``. ``CorpusError`` when no corpus is open.

        Args:
            then: Called with the view once it is built, or None.

        Raises:
            CorpusError: No corpus is open.
        """
        if self._recipe is None:
            raise CorpusError(f"no {self.name} yet: open a corpus on the Corpus page first")
        if self.view is not None:
            if then is not None:
                then(self.view)
            return
        if then is not None:
            self._waiting.append(then)
        if self.building:
            return
        self.building, generation, recipe = True, self._generation, self._recipe
        if self.page.view is None:  # the page may show another view meanwhile (the Live page's Replayer)
            self.page.wait(f"building the {self.name} ...")

        def done(view: Any) -> None:
            if generation == self._generation:
                self._installed(view)

        def after() -> None:
            if generation == self._generation:
                self.building = False

        in_background(self.status, f"building the {self.name}", recipe, done, after=after)

    def _installed(self, view: Any) -> None:
        self.view = view
        if self.installed is not None:
            self.installed(view)
        if self.page.view is None:
            self.page.show(view)
        waiting, self._waiting = self._waiting, []
        for then in waiting:
            then(view)


def tune_page() -> ViewPage:
    """The Tune page (a Tuner).

    Returns:
        The page.
    """
    return ViewPage("Tune", "move a weight and the returns follow; click an episode to replay it")


def replay_page() -> ViewPage:
    """The Replay page (a Replayer).

    Returns:
        The page.
    """
    return ViewPage("Replay", "play an episode beside what each decision is paid")


def compare_page() -> ViewPage:
    """The Compare page (a Compare of the session's configs).

    Returns:
        The page.
    """
    return ViewPage("Compare", "the session's configs side by side; click an episode to replay it")
