"""The views of a dashboard session are built once the browser has drawn the first page, or
sooner when first needed (a page shown, a link used): nothing of them is sent with the first
page. A build started before a reset is thrown away."""

from __future__ import annotations

import threading

import ipywidgets as w
import pytest
from helpers.polling import until

from workbench.data.sample import sample_corpus
from workbench.errors import CorpusError
from workbench.views.app.common import COMPARE, CORPUS, REPLAY, TUNE, Status
from workbench.views.app.options import AppOptions
from workbench.views.app.session import AppSession
from workbench.views.app.views_pages import LazyView, ViewPage


class _View(w.HTML):
    """The least a page can show: a widget."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _lazy(installed: list | None = None) -> tuple[LazyView, ViewPage, Status]:
    page, status = ViewPage("Tune", "note"), Status()
    return LazyView(page, status, "Tuner", (installed if installed is not None else []).append), page, status


def test_opening_a_corpus_builds_no_view_before_the_first_page_is_drawn_or_its_page_shown(tmp_path):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    assert session.corpus is not None and session.tabs.selected_index == CORPUS
    assert (session.tuner, session.replayer, session.compare) == (None, None, None)
    assert "opened" in session.corpus_page.status.text  # the corpus is open, its views wait
    assert "about to be built" in session.tune_page.note.value
    session.tabs.selected_index = TUNE
    until(lambda: session.tuner is not None)
    assert session.replayer is None and session.compare is None  # only the page shown
    assert session.tune_page.body.children == (session.tuner,)


def test_a_click_in_the_tuner_builds_the_replayer_and_opens_the_episode_there(tmp_path):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    session.tabs.selected_index = TUNE
    until(lambda: session.tuner is not None)
    tuner, episode = session.tuner, session.corpus.ids[4]
    tuner.controls.weight_sliders[
        "collect_wood"
    ].value = 3.0  # the Replayer must play under the Tuner's config, not its start
    tuner.open_episode(episode)
    assert session.tabs.selected_index == REPLAY
    until(lambda: session.replayer is not None and session.replayer.episode == episode)
    assert session.replayer.config == tuner.config
    assert session.replay_page.view is session.replayer


def test_sending_from_the_tuner_builds_compare_with_every_config_of_the_session(tmp_path):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    session.tabs.selected_index = TUNE
    until(lambda: session.tuner is not None)
    session.tuner.controls.weight_sliders["place_table"].value = 4.0
    session.tuner.send_to_compare()
    assert session.tabs.selected_index == COMPARE
    until(lambda: session.compare is not None and not session.building)
    sent = [name for name in session.configs if name.startswith("tuned")]
    assert len(sent) == 1 and set(session.compare.configs) == set(session.configs)
    assert session.compare.shown.value[0] == sent[0]  # shown first, as a send does
    assert session.compare.configs[sent[0]].weights["place_table"] == 4.0


def test_needs_while_building_share_one_build_and_run_in_order():
    release, built, order = threading.Event(), [], []
    lazy, page, _ = _lazy(built)

    def recipe() -> _View:
        release.wait(10)
        return _View("one")

    lazy.reset(recipe)
    lazy.need(lambda view: order.append(("first", view.name)))
    lazy.need(lambda view: order.append(("second", view.name)))
    assert lazy.building and lazy.view is None and "building the Tuner" in page.note.value
    release.set()
    until(lambda: not lazy.building)
    assert [view.name for view in built] == ["one"]  # one build, installed once
    assert order == [("first", "one"), ("second", "one")]
    lazy.need(lambda view: order.append(("after", view.name)))  # built: called at once
    assert order[-1] == ("after", "one")


def test_a_build_started_before_a_reset_is_thrown_away():
    release, built = threading.Event(), []
    lazy, page, _ = _lazy(built)
    lazy.reset(lambda: (release.wait(10), _View("old"))[1])
    lazy.need()
    lazy.reset(lambda: _View("new"))  # another corpus opened meanwhile
    release.set()
    for thread in threading.enumerate():  # the old build runs to its end
        if thread.name == "workbench-app: building the Tuner":
            thread.join(10)
    assert lazy.view is None and built == []  # the old view never enters the page
    lazy.need()
    until(lambda: lazy.view is not None)
    assert lazy.view.name == "new" and [view.name for view in built] == ["new"]


def test_a_failed_build_is_a_message_and_the_next_need_tries_again():
    attempts: list[int] = []
    lazy, page, status = _lazy()

    def recipe() -> _View:
        attempts.append(1)
        if len(attempts) == 1:
            raise CorpusError("the corpus folder went away")
        return _View("second try")

    lazy.reset(recipe)
    lazy.need()
    until(lambda: not lazy.building)
    assert status.level == "error" and "building the Tuner: the corpus folder went away" in status.text
    lazy.need()
    until(lambda: lazy.view is not None)
    assert lazy.view.name == "second try" and len(attempts) == 2


def test_without_a_corpus_a_need_is_a_clear_error():
    lazy, page, _ = _lazy()
    lazy.reset(None)
    assert "No corpus is open" in page.note.value and page.body.children == (page.note,)
    with pytest.raises(CorpusError, match="no Tuner yet: open a corpus on the Corpus page"):
        lazy.need()


def test_the_configs_and_live_pages_are_built_when_first_shown(tmp_path):
    from workbench.core.config import RewardConfig
    from workbench.views.app.common import CONFIGS, LIVE

    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    configs_box, live_box = session.tabs.children[CONFIGS], session.tabs.children[LIVE]
    assert configs_box.children == () and live_box.children == ()  # nothing of them sent yet
    session.add_config("mine", RewardConfig(strategy="consistent"), "a test")  # before the page exists
    session.tabs.selected_index = CONFIGS
    page = session.configs_page
    assert configs_box.children == (page.widget,)
    assert list(page.names.options) == list(session.configs) and "mine" in page.names.options
    assert live_box.children == ()
    session.tabs.selected_index = LIVE
    assert live_box.children == (session.live_page.widget,)
    session.tabs.selected_index = CONFIGS  # shown again: the same page, not a new one
    assert session.configs_page is page and configs_box.children == (page.widget,)


def test_a_replayer_the_live_page_shows_is_not_taken_over_by_the_sessions(tmp_path):
    from workbench.views.widgets import Replayer

    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    followed = Replayer(session.corpus[:2], session.baseline)
    session.replay_page.show(followed)  # what LivePage._open does, before the Replay tab was ever shown
    session.tabs.selected_index = REPLAY  # a build would start (and take the page) right here
    assert session.replay_page.view is followed and session.replay_page.body.children == (followed,)
    assert session.replayer is None and not session.building  # nothing built behind it


def _drawn(session: AppSession) -> None:
    """What the browser sends once it has drawn the Corpus page (first_paint.js)."""
    session.first_paint._message(session.first_paint, {"drawn": True}, [])


def test_once_the_first_page_is_drawn_every_view_is_built_behind_it(tmp_path):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    assert session.tuner is None and not session.first_paint.drawn
    _drawn(session)
    until(lambda: None not in (session.tuner, session.replayer, session.compare) and not session.building)
    assert session.tabs.selected_index == CORPUS  # built behind the page shown, not shown
    for page in (session.tune_page, session.replay_page, session.compare_page):
        assert page.body.children == (page.note,) and "ready" in page.note.value
    session.tabs.selected_index = TUNE
    assert session.tune_page.body.children == (session.tuner,)
    # A corpus opened later has its views built at once, in the background.
    smaller = session.corpus[:3]
    session.set_corpus(smaller, "three episodes")
    until(lambda: session.compare is not None and not session.building)
    assert session.tuner.corpus is smaller and session.replayer.corpus is smaller and session.compare.corpus is smaller


def test_the_first_paint_signal_counts_once(tmp_path):
    calls: list[int] = []
    from workbench.views.app.first_paint import FirstPaint

    signal = FirstPaint(".wb-app-page-corpus input", lambda: calls.append(1))
    assert (signal.selector, signal.timeout_ms) == (".wb-app-page-corpus input", 10_000)
    signal._message(signal, {"other": 1}, [])
    assert calls == [] and not signal.drawn
    for _ in range(2):  # a second view of the widget (or a repeated message) says nothing new
        signal._message(signal, {"drawn": True}, [])
    assert calls == [1] and signal.drawn


def test_a_tab_click_landing_while_a_build_thread_shows_its_view_is_never_undone():
    # The interleaving behind the Tune page that never drew under load (docs/views.md): the
    # build's thread finds the page hidden and starts sending the "ready" line; the tab click,
    # handled on another thread meanwhile, puts the view in; the build's thread then put the
    # line back over it, and the page said "ready" for good.
    page, view = ViewPage("Tune", "note"), _View("tuner")
    sending, clicked = threading.Event(), threading.Event()

    def line_being_sent(change: dict) -> None:
        if "ready" in change["new"] and threading.current_thread().name == "build":
            sending.set()
            clicked.wait(0.5)  # the click's thread runs while this one is inside the send

    page.note.observe(line_being_sent, names="value")
    build = threading.Thread(target=page.show, args=(view,), name="build")
    build.start()
    assert sending.wait(10)
    click = threading.Thread(target=lambda: (page.activate(), clicked.set()), name="click")
    click.start()
    build.join(10)
    click.join(10)
    assert page.active and page.view is view
    assert page.body.children == (view,)
