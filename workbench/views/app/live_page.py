"""The Live page: follow a run while it trains, a Solara component drawn from the tab's ``LiveState``.

Pick a source (a folder rollout files land in, a synth-ai trace database, a crafter.Recorder
folder, a corpus being recorded) and a target corpus folder; "Follow" opens the run
(``live_follow.open_run``) and the page runs its ``Watcher`` on the app's background path
(``solara.use_thread``, cancelled when following stops, another run is followed or the tab
closes): each new episode is appended once into the target and scored under every config of the
session (``LiveScores``); the timeline, the audit and the over-optimisation watch (which marks,
on the timeline, where a config's decline began) redraw on threads of the same hook, keyed on
the state's arrivals; problems (a corrupt file) are named in the page's report while the watcher
goes on. A pick in the timeline or the watch goes through the shared ``link``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import ipywidgets as w
import solara

from workbench.core.config import RewardConfig
from workbench.data.watch import KINDS, WatchReport
from workbench.scoring.incremental import LiveScores
from workbench.views.app.common import REPLAY, error_text, heading_html, kernel_context_of_session, status_html
from workbench.views.app.live_follow import audit_html, count_html, open_run, problems_html, reported
from workbench.views.app.session import AppSession
from workbench.views.app.state import Followed, LiveState
from workbench.views.widgets import Pick, Replayer, link

#: Seconds between polls when no file event wakes the watcher.
POLL_SECONDS = 0.5
#: The kind dropdown's options: telling from the folder, then each kind.
KIND_OPTIONS = [("tell from the folder", ""), *((kind, kind) for kind in KINDS)]


def update(session: AppSession, change: Callable[[LiveState], LiveState]) -> None:
    """Set the tab's Live state to ``change(state)`` (one change at a time: the watcher and the
    redraws change it from their threads).

    Args:
        session: The page session.
        change: The new state from the current one.
    """
    with session.live_lock:
        session.live.value = change(session.live.value)


def start(session: AppSession, source: str, target: str, kind: str | None = None) -> None:
    """Follow ``source`` into the corpus folder ``target`` (created when absent): its episodes
    so far, then each new one as it lands (the page's watcher thread starts on the new state).
    A run followed before stops first.

    Args:
        session: The page session (its configs score the run).
        source: The folder (or file) to watch.
        target: The corpus folder to append into.
        kind: The source's kind, or None to tell from the folder.

    Raises:
        WorkbenchError: A bad source or target (nothing starts then).
    """
    stop(session)
    run = open_run(source, target, kind, dict(session.configs))
    context = kernel_context_of_session()  # the views redraw from the page's threads
    run.timeline.context = run.watch.context = lambda: context
    link(replayer=partial(open_pick, session, run.live), pickers=(run.timeline, run.watch))
    where = f"following {run.watcher.source.path} into {run.into}"
    update(session, lambda _: LiveState(run, True, (where, "ok"), count_html(run.live, None)))


def stop(session: AppSession) -> None:
    """Stop watching (the watcher's thread ends and closes it; the timeline stays as it is);
    nothing happens when not following.

    Args:
        session: The page session.
    """
    update(
        session,
        lambda state: (
            replace(state, following=False, status=("stopped following", "info")) if state.following else state
        ),
    )


def open_pick(session: AppSession, live: LiveScores, pick: Pick, config: RewardConfig) -> None:
    """Replay a pick of the timeline or the watch on the Replay page (a Replayer on the followed
    corpus, under the picking view's config, at the decision every view opens a pick at).

    Args:
        session: The page session.
        live: The followed run's scores (its episodes so far, read at the pick).
        pick: The pick.
        config: The picking view's config at the pick.
    """
    replayer = Replayer(live.corpus, config, episode=pick.episode)
    replayer.open_pick(pick)
    update(session, lambda state: replace(state, picked=pick))
    session.replayer_view.show(replayer)
    session.show_page(REPLAY)


def _toggle(session: AppSession, source: str, target: str, kind: str) -> None:
    """The Follow button: start following, or stop; a bad source is a message in the page."""
    if session.live.value.following:
        stop(session)
        return
    try:
        start(session, source, target, kind or None)
    except Exception as error:  # shown in the page, traceback in the server log
        text = error_text(error, "following the source")
        update(session, lambda state: replace(state, status=(text, "error")))


def _watching(session: AppSession, run: Followed | None) -> Callable[[threading.Event], None]:
    """The watcher's thread of ``run`` (None: nothing to follow), until its ``cancel`` is set."""

    def watch(cancel: threading.Event) -> None:
        if run is None:
            return

        def heard(report: WatchReport) -> None:
            update(session, lambda state: reported(state, report) if state.run is run else state)

        try:
            run.watcher.run(interval=POLL_SECONDS, stop=cancel, on_report=heard)
        except Exception as error:  # shown in the page, traceback in the server log
            text = error_text(error, "following the source")
            update(session, lambda state: replace(state, following=False, status=(text, "error")))
        finally:
            run.watcher.close()

    return watch


def _redrawing(
    session: AppSession, run: Followed | None, arrivals: int, work: Callable[[Followed], None]
) -> Callable[[], None]:
    """One redraw after ``arrivals`` (use_thread runs the latest only: arrivals meanwhile are
    drawn by the next round, not queued)."""

    def redraw() -> None:
        if run is None or not arrivals:
            return
        try:
            work(run)
        except Exception as error:  # shown in the page, traceback in the server log
            text = error_text(error, "drawing the timeline, the audit and the watch")
            update(session, lambda state: replace(state, status=(text, "error")))

    return redraw


def _draw_timeline(run: Followed) -> None:
    run.timeline.refresh()


def _draw_watch(run: Followed) -> None:
    run.watch.refresh()


def _draw_audit(session: AppSession, run: Followed) -> None:
    drawn = audit_html(run.live)
    if drawn:
        update(session, lambda state: replace(state, audit=drawn) if state.run is run else state)


@solara.component
def LivePage(session: AppSession) -> solara.Element:
    """The Live page of ``session``, drawn from ``session.live``.

    Args:
        session: The page session.

    Returns:
        The page's element.
    """
    state = session.live.value
    source, kind, target = solara.use_reactive(""), solara.use_reactive(""), solara.use_reactive("")
    run = state.run
    solara.use_thread(
        _watching(session, run if state.following else None), [run, state.following], intrusive_cancel=False
    )
    # The timeline, the audit and the watch each redraw on a thread of their own, so the watcher
    # never waits for them (the count of a new episode is painted first) and a slow audit never
    # holds the timeline back.
    keys = [run, state.arrivals]
    solara.use_thread(_redrawing(session, run, state.arrivals, _draw_timeline), keys, intrusive_cancel=False)
    solara.use_thread(
        _redrawing(session, run, state.arrivals, partial(_draw_audit, session)), keys, intrusive_cancel=False
    )
    solara.use_thread(_redrawing(session, run, state.arrivals, _draw_watch), keys, intrusive_cancel=False)
    note = "watch a run while it trains: each new episode scored under every config of the session"
    following = state.following
    with w.VBox.element(_dom_classes=["wb-app-page-live"], layout=w.Layout.element(width="100%")) as page:
        w.HTML.element(value=heading_html("Live", note))
        with w.HBox.element(layout=w.Layout.element(flex_flow="row wrap")):
            w.Text.element(
                value=source.value,
                on_value=source.set,
                placeholder="/path/to/run-folder",
                description="source",
                layout=w.Layout.element(width="520px"),
            )
            w.Dropdown.element(
                options=KIND_OPTIONS,
                value=kind.value,
                on_value=kind.set,
                description="kind",
                layout=w.Layout.element(width="300px"),
            )
        with w.HBox.element(layout=w.Layout.element(flex_flow="row wrap")):
            w.Text.element(
                value=target.value,
                on_value=target.set,
                placeholder="/path/to/target-corpus",
                description="into",
                layout=w.Layout.element(width="520px"),
            )
            solara.Button(
                "Following" if following else "Follow",
                icon_name="mdi-stop" if following else "mdi-play",
                on_click=lambda: _toggle(session, source.value, target.value, kind.value),
                classes=["wb-live-follow", "text-none"],
                outlined=following,
            )
        w.HTML.element(
            value=status_html(*state.status), _dom_classes=["wb-app-status"], layout=w.Layout.element(min_height="24px")
        )
        w.HTML.element(value=state.count)
        w.HTML.element(value=problems_html(state), _dom_classes=["wb-live-problems"])
        w.HTML.element(value=state.audit, _dom_classes=["wb-live-audit"])
        w.VBox.element(children=[] if run is None else [run.timeline, run.watch])
    return page
