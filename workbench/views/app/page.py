"""The Solara components of the dashboard: one ``AppSession`` per browser tab, its pages as tabs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

import ipywidgets as w
import solara
import solara.toestand
from solara import v

from workbench.data.episodes import Corpus
from workbench.views.app import options
from workbench.views.app.common import COMPARE, CONFIGS, CORPUS, LIVE, REPLAY, TABS, TUNE
from workbench.views.app.configs_page import ConfigsPage
from workbench.views.app.corpus_page import CorpusPage
from workbench.views.app.first_paint import FirstPaint
from workbench.views.app.live_page import LivePage
from workbench.views.app.report_download import ReportDownload, compare_report, live_report
from workbench.views.app.session import AppSession
from workbench.views.app.views_pages import ViewPage

log = logging.getLogger("workbench.views.app")


def _new_session() -> AppSession:
    log.info("new page session")
    return AppSession(options.current)


CorpusTab = CorpusPage  # a Solara component drawn from the session's state
ConfigsTab = ConfigsPage  # a Solara component drawn from the session's state


def _followed(session: AppSession) -> Corpus | None:
    """The followed run's episodes so far (None while nothing was followed)."""
    run = session.live.value.run
    return run.live.corpus if run is not None else None


@solara.component
def LiveTab(session: AppSession, front: bool) -> solara.Element:
    """The Live page, with the report of the followed run under it."""
    make = solara.use_memo(lambda: partial(live_report, session, partial(_followed, session)), [])
    with solara.Column(gap="0px", style={"width": "100%"}) as page:
        LivePage(session)
        ReportDownload(make, "workbench-live-report.html")
    return page


@solara.component
def TuneTab(session: AppSession, front: bool) -> solara.Element:
    """The Tune page (the session's Tuner)."""
    return ViewPage(session.tuner_view, "Tune", front)


@solara.component
def ReplayTab(session: AppSession, front: bool) -> solara.Element:
    """The Replay page (the session's Replayer, or the one the Live page put there)."""
    return ViewPage(session.replayer_view, "Replay", front)


@solara.component
def CompareTab(session: AppSession, front: bool) -> solara.Element:
    """The Compare page (Compare of the session's configs), with the report of them under it."""
    make = solara.use_memo(lambda: partial(compare_report, session), [])
    with solara.Column(gap="0px", style={"width": "100%"}) as page:
        ViewPage(session.compare_view, "Compare", front)
        ReportDownload(make, "workbench-report.html")
    return page


#: Each tab's page, by its index in ``common.TABS``.
PAGES: dict[int, Callable[..., solara.Element]] = {
    CORPUS: CorpusTab,
    TUNE: TuneTab,
    REPLAY: ReplayTab,
    COMPARE: CompareTab,
    CONFIGS: ConfigsTab,
    LIVE: LiveTab,
}


def _clicked(session: AppSession, index: int | None) -> None:
    """A click on a tab (Vuetify sends None when the tab in front is clicked again: nothing changes)."""
    if index is not None:
        session.show_page(int(index))


@solara.component
def Dashboard(session: AppSession) -> solara.Element:
    """The whole page of one session: the title with the baseline, the status line, the tabs.

    A tab's page is made the first time the tab is shown and stays mounted (hidden) after: a
    page never shown sends nothing to the browser, and one shown again is drawn at once, its
    figures as they were (Solara's lazy tabs unmount a hidden page, and its figures are drawn
    anew each time: docs/views.md has the measurement).

    Args:
        session: The browser tab's session.

    Returns:
        The page's element.
    """
    front = session.page.value
    shown = solara.use_ref({CORPUS})  # the tabs shown so far
    shown.current.add(front)
    with solara.Column(classes=["wb-app"], gap="0px", style={"width": "100%", "padding": "4px"}) as page:
        w.HTML.element(value=session.header)
        solara.Column(children=[session.status.widget], gap="0px")
        v.Tabs(
            v_model=front,
            on_v_model=lambda index: _clicked(session, index),
            children=[v.Tab(children=[title], class_="wb-app-tab text-none") for title in TABS],  # titles as written
            class_="wb-app-tabs",
        )
        for index in range(len(TABS)):
            with solara.Div(style={"display": "block" if index == front else "none", "width": "100%"}):
                if index in shown.current:
                    PAGES[index](session, front=index == front)
    return page


@solara.component
def Page() -> None:
    """Render the workbench dashboard (its session made once per browser tab, kept across re-renders)."""
    session = solara.use_memo(_new_session, [])
    # The views are built once the browser has drawn the first page (and at once for a corpus
    # opened later): built as soon as the page had rendered in the kernel, their widgets reached
    # the browser while it was still drawing the first page (docs/views.md has the measurement).
    first_paint = solara.use_memo(lambda: FirstPaint(".wb-app-page-corpus input", session.build_views), [])
    search = solara.use_router().search  # a deep link's query (docs/dashboard.md, "Links")
    solara.use_effect(lambda: session.open_link(search), [])  # once per session, after the first render
    opened = solara.toestand.Ref(session.state.fields.opened).value  # re-run only when a corpus is opened
    solara.use_effect(lambda: _build_if_drawn(session, first_paint), [opened])
    solara.Title("Crafter Reward Workbench")
    Dashboard(session)
    solara.Div(children=[first_paint])  # draws nothing (first_paint.js hides it)


def _build_if_drawn(session: AppSession, first_paint: FirstPaint) -> None:
    """A corpus opened once the first page is drawn has its views built at once."""
    if first_paint.drawn:
        session.build_views()
