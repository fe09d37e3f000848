"""The Tune, Replay and Compare pages: each hosts one of the notebook views, unchanged."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from workbench.views.app.common import heading

#: What a page says before a corpus is open.
NO_CORPUS = "<p style='color:#555'>No corpus is open yet: open one on the <b>Corpus</b> page.</p>"


class ViewPage:
    """A page showing one view's widget under a title (``widget``); ``show`` swaps the view in,
    ``wait`` shows a line while the view is being built.

    The view enters the page only once the page's tab is shown (``activate``): a figure drawn
    in a hidden tab has no size (the browser logs a negative ``<rect>`` per bar), and the first
    load sends only the page in front."""

    def __init__(self, title: str, note: str) -> None:
        self.title = title
        self.body = w.VBox([w.HTML(NO_CORPUS)])
        self.widget = w.VBox([heading(title, note), self.body], layout=w.Layout(width="100%"))
        self.widget.add_class(f"wb-app-page-{title.lower()}")
        self.view: Any = None
        self.active = False

    def show(self, view: Any) -> None:
        """Show ``view`` (a Tuner, Replayer or Compare: anything with a ``.widget``), at once if
        the page is in front, else when it comes to the front."""
        self.view = view
        if self.active:
            self.body.children = [view.widget]
        else:
            self.body.children = [w.HTML("<p style='color:#555'>ready</p>")]

    def activate(self) -> None:
        """The page's tab is shown: put its view in (once)."""
        self.active = True
        if self.view is not None and self.view.widget not in self.body.children:
            self.body.children = [self.view.widget]

    def wait(self, text: str) -> None:
        """Show ``text`` instead of a view (while one is built, or when there is none)."""
        self.view = None
        self.body.children = [w.HTML(f"<p style='color:#555'>{text}</p>")]


def tune_page() -> ViewPage:
    """The Tune page (a Tuner)."""
    return ViewPage("Tune", "move a weight and the returns follow; click an episode to replay it")


def replay_page() -> ViewPage:
    """The Replay page (a Replayer)."""
    return ViewPage("Replay", "play an episode beside what each decision is paid")


def compare_page() -> ViewPage:
    """The Compare page (a Compare of the session's configs)."""
    return ViewPage("Compare", "the session's configs side by side; click an episode to replay it")
