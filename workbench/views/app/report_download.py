"""The dashboard's "Download report" control: the page ``workbench report`` writes, made on demand.

``ReportDownload(make, name)`` is one small Solara component a page places where it likes (the
Compare and Live pages put it under their view): "Make report" builds the page in the
background (``make()``: a few seconds for the sample), then the "Download report" link hands the
browser the file. ``compare_report`` and ``live_report`` are the two ``make`` functions."""

from __future__ import annotations

import base64
import html
from collections.abc import Callable

import ipywidgets as w
import solara
import solara.lab

from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.views.app.session import AppSession
from workbench.views.report import build_report


def compare_report(session: AppSession) -> bytes:
    """The report of the session's corpus and configs (the Compare page's download).

    Args:
        session: The page session.

    Returns:
        The HTML, UTF-8.

    Raises:
        WorkbenchError: No corpus is open, or it holds no episodes.
    """
    if session.corpus is None:
        raise WorkbenchError("no corpus is open yet: open one on the Corpus page")
    return build_report(
        session.corpus, dict(session.configs), corpus_name=session.corpus_label, command="dashboard: Compare page"
    ).encode("utf-8")


def live_report(session: AppSession, corpus: Callable[[], Corpus | None]) -> bytes:
    """The report of a followed run so far, with the over-optimisation watch (the Live page's download).

    Args:
        session: The page session (its configs).
        corpus: The run's episodes so far (None while nothing is followed).

    Returns:
        The HTML, UTF-8.

    Raises:
        WorkbenchError: Nothing followed yet, or no episode has landed.
    """
    episodes = corpus()
    if episodes is None or not len(episodes):
        raise WorkbenchError("no run's episodes yet: follow a source first")
    return build_report(
        episodes, dict(session.configs), corpus_name="the followed run", command="dashboard: Live page", live=True
    ).encode("utf-8")


def download_link(document: bytes, name: str) -> str:
    """A "Download report" link holding the page itself (a ``data:`` address with ``download``),
    so the browser saves it without another request to the server.

    Solara's ``FileDownload`` is a Vuetify 2 template, which the dashboard's Vuetify 3 page does
    not mount; a link needs nothing.

    Args:
        document: The report's bytes.
        name: The file's name.

    Returns:
        The link's HTML.
    """
    data = base64.b64encode(document).decode("ascii")
    size = f"{len(document) / 1e6:.1f} MB"
    return (
        f'<a class="wb-report-link" style="color:#0b57d0;text-decoration:underline" download="{html.escape(name)}" '
        f'href="data:text/html;base64,{data}">'
        f"Download report</a> <span style='color:#555'>({size}; opens offline in any browser)</span>"
    )


@solara.component
def ReportDownload(make: Callable[[], bytes], name: str) -> solara.Element:
    """ "Make report" (built in a thread), then "Download report" with the page made.

    Args:
        make: Builds the report's bytes; a ``WorkbenchError`` it raises is shown as its message
            (any other error too, and logged).
        name: The file's name (``.html``).

    Returns:
        The element.
    """

    def build() -> bytes | str:  # a named function: Solara's task names itself after it (a partial has no name)
        try:
            return make()
        except WorkbenchError as error:  # the user's to fix (no corpus yet): said in the page, not logged
            return str(error)

    task = solara.lab.use_task(build, dependencies=None, raise_error=False)
    with solara.Row(classes=["wb-report-download"], style={"align-items": "center"}) as row:
        solara.Button(
            "Make report",
            icon_name="mdi-file-document-outline",
            on_click=task,
            disabled=task.pending,
            classes=["text-none"],
        )
        if task.pending:
            w.HTML.element(value="<span style='color:#555'>making the report ...</span>")
        elif task.finished and isinstance(task.value, bytes):
            w.HTML.element(value=download_link(task.value, name))
        elif task.finished and isinstance(task.value, str):
            w.HTML.element(value=f"<span style='color:#b3261e'>{html.escape(task.value)}</span>")
        elif task.error and task.exception is not None:
            w.HTML.element(value=f"<span style='color:#b3261e'>{html.escape(str(task.exception))}</span>")
    return row
