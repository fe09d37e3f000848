"""The dashboard's Solara components and its views' building: the views of a session are built
once the browser has drawn the first page (never with it), or sooner when first needed
(a page shown, a link used); a page is made the first time its tab is shown and kept after; a
view enters its page only while the page is in front; a build started before a reset is thrown
away. Rendered with ``solara.render`` (no browser)."""

from __future__ import annotations

import threading
import time

import ipywidgets as w
import pytest
import solara
from helpers.polling import until

from workbench.data.sample import sample_corpus
from workbench.errors import CorpusError
from workbench.views.app import options
from workbench.views.app.common import COMPARE, CONFIGS, CORPUS, LIVE, REPLAY, TUNE, Status
from workbench.views.app.first_paint import FirstPaint
from workbench.views.app.options import AppOptions
from workbench.views.app.page import Dashboard, Page
from workbench.views.app.session import AppSession
from workbench.views.app.views_pages import NO_CORPUS, ViewSlot


class _View(w.HTML):
    """The least a page can show: a widget."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _slot(installed: list | None = None) -> tuple[ViewSlot, Status]:
    status = Status()
    return ViewSlot("Tuner", status, (installed if installed is not None else []).append), status


def _widgets(root: w.Widget) -> list[w.Widget]:
    """Every widget of the rendered tree under ``root`` (through ``children``), depth first."""
    found, todo = [], [root]
    while todo:
        widget = todo.pop()
        found.append(widget)
        todo.extend(child for child in getattr(widget, "children", ()) if isinstance(child, w.Widget))
    return found


def _page_widgets(root: w.Widget, page: str) -> list[w.Widget]:
    """The widgets of the tree carrying the class ``wb-app-page-PAGE`` (an ipywidgets page)."""
    return [x for x in _widgets(root) if f"wb-app-page-{page}" in getattr(x, "_dom_classes", ())]


def _lines(root: w.Widget) -> str:
    """The text of the lines the view pages show instead of a view."""
    return " | ".join(x.value for x in _widgets(root) if "wb-app-line" in getattr(x, "_dom_classes", ()))


def test_opening_a_corpus_builds_no_view_before_the_page_is_rendered_or_its_page_shown(tmp_path):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    assert session.corpus is not None and session.page.value == CORPUS
    assert (session.tuner, session.replayer, session.compare) == (None, None, None)
    assert "about to be built" in session.tuner_view.line.value
    box, rc = solara.render(Dashboard(session), handle_error=False)  # without Page: nothing built behind
    try:
        [corpus] = _page_widgets(box, "corpus")
        assert any("opened" in x.value for x in _widgets(corpus) if isinstance(x, w.HTML))  # the corpus is open
        assert session.tuner is None and _page_widgets(box, "tune") == []  # a page not shown is not made
        session.show_page(TUNE)
        until(lambda: session.tuner is not None)
        assert session.replayer is None and session.compare is None  # only the page shown
        until(lambda: session.tuner in _widgets(box))
    finally:
        rc.close()


def _rendered_page(monkeypatch, tmp_path) -> tuple[w.Widget, object, AppSession]:
    """``Page`` rendered on the sample (as the server renders it for a browser tab), its session."""
    from workbench.views.app import page as page_module

    made: list[AppSession] = []
    monkeypatch.setattr(page_module, "_new_session", lambda: made.append(AppSession(options.current)) or made[-1])
    monkeypatch.setattr(options, "current", AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    box, rc = solara.render(Page(), handle_error=False)
    assert len(made) == 1
    return box, rc, made[0]


def _drawn(box: w.Widget) -> FirstPaint:
    """Say to the rendered page's first-paint widget what the browser says once it has drawn the
    Corpus page (first_paint.js); returns the widget."""
    [signal] = [x for x in _widgets(box) if isinstance(x, FirstPaint)]
    signal._message(signal, {"drawn": True}, [])
    return signal


def test_once_the_first_page_is_drawn_every_view_is_built_behind_it(monkeypatch, tmp_path):
    box, rc, session = _rendered_page(monkeypatch, tmp_path)
    try:
        time.sleep(0.5)
        assert (session.tuner, session.replayer, session.compare) == (None, None, None)  # rendered, not drawn yet
        assert not session.building
        _drawn(box)
        until(lambda: None not in (session.tuner, session.replayer, session.compare) and not session.building)
        assert session.page.value == CORPUS  # built behind the page shown, not shown
        assert _page_widgets(box, "tune") == []  # and not sent with it: the Tune page is not made yet
        tuner = session.tuner
        session.show_page(TUNE)
        until(lambda: tuner in _widgets(box))
        session.show_page(CORPUS)
        session.show_page(TUNE)  # shown again: the same Tuner, built once
        assert session.tuner is tuner and tuner in _widgets(box)
        # A corpus opened later has its views built at once, in the background.
        smaller = session.corpus[:3]
        session.set_corpus(smaller, "three episodes")
        until(lambda: session.compare is not None and not session.building)
        assert session.tuner.corpus is smaller and session.replayer.corpus is smaller
        assert session.compare.corpus is smaller
        until(lambda: session.tuner in _widgets(box))  # the Tune page in front shows the new Tuner
        assert tuner not in _widgets(box)
    finally:
        rc.close()


def test_a_view_built_behind_another_page_enters_its_page_when_that_page_comes_to_the_front(tmp_path):
    # A figure drawn in a hidden page has no size: the Replayer built while the Tune page is in
    # front waits, its page saying it is ready, and enters when the Replay page is shown.
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    box, rc = solara.render(Dashboard(session), handle_error=False)
    try:
        session.show_page(REPLAY)
        session.show_page(TUNE)  # the Replay page is made (and hidden) before its Replayer exists
        until(lambda: session.tuner in _widgets(box))
        session.replayer_view.need()
        until(lambda: session.replayer is not None and "the Replayer is ready" in _lines(box))
        assert session.replayer not in _widgets(box)
        session.show_page(REPLAY)
        # Polled, as the pages above are: the builder thread's last re-render (its "is ready"
        # line) may still be running, and the page's own re-render then follows it.
        until(lambda: session.replayer in _widgets(box))
    finally:
        rc.close()


def test_a_click_in_the_tuner_builds_the_replayer_and_opens_the_episode_there(tmp_path):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    session.tuner_view.need()
    until(lambda: session.tuner is not None)
    tuner, episode = session.tuner, session.corpus.ids[4]
    # The Replayer must play under the Tuner's config, not its start.
    tuner.controls.weight_sliders["collect_wood"].value = 3.0
    tuner.open_episode(episode)
    assert session.page.value == REPLAY
    until(lambda: session.replayer is not None and session.replayer.episode == episode)
    assert session.replayer.config == tuner.config
    assert session.replayer_view.shown.value is session.replayer


def test_sending_from_the_tuner_builds_compare_with_every_config_of_the_session(tmp_path):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    session.tuner_view.need()
    until(lambda: session.tuner is not None)
    session.tuner.controls.weight_sliders["place_table"].value = 4.0
    session.tuner.send_to_compare()
    assert session.page.value == COMPARE
    until(lambda: session.compare is not None and not session.building)
    sent = [name for name in session.configs if name.startswith("tuned")]
    assert len(sent) == 1 and set(session.compare.configs) == set(session.configs)
    assert session.compare.shown.value[0] == sent[0]  # shown first, as a send does
    assert session.compare.configs[sent[0]].weights["place_table"] == 4.0


def test_needs_while_building_share_one_build_and_run_in_order():
    release, built, order = threading.Event(), [], []
    slot, _ = _slot(built)

    def recipe() -> _View:
        release.wait(10)
        return _View("one")

    slot.reset(recipe)
    slot.need(lambda view: order.append(("first", view.name)))
    slot.need(lambda view: order.append(("second", view.name)))
    assert slot.building and slot.view is None and "building the Tuner" in slot.line.value
    release.set()
    until(lambda: not slot.building)
    assert [view.name for view in built] == ["one"]  # one build, installed once
    assert order == [("first", "one"), ("second", "one")]
    assert slot.shown.value is slot.view and "ready" in slot.line.value
    slot.need(lambda view: order.append(("after", view.name)))  # built: called at once
    assert order[-1] == ("after", "one")


def test_a_build_started_before_a_reset_is_thrown_away():
    release, built, threads = threading.Event(), [], []
    slot, _ = _slot(built)

    def old() -> _View:
        threads.append(threading.current_thread())
        release.wait(10)
        return _View("old")

    slot.reset(old)
    slot.need()
    until(lambda: threads)
    slot.reset(lambda: _View("new"))  # another corpus opened meanwhile
    release.set()
    threads[0].join(10)  # the old build runs to its end
    assert slot.view is None and built == [] and slot.shown.value is None  # the old view never enters the page
    slot.need()
    until(lambda: slot.view is not None)
    assert slot.view.name == "new" and [view.name for view in built] == ["new"]


def test_a_failed_build_is_a_message_and_the_next_need_tries_again():
    attempts: list[int] = []
    slot, status = _slot()

    def recipe() -> _View:
        attempts.append(1)
        if len(attempts) == 1:
            raise CorpusError("the corpus folder went away")
        return _View("second try")

    slot.reset(recipe)
    slot.need()
    until(lambda: not slot.building)
    assert status.level == "error" and "building the Tuner: the corpus folder went away" in status.text
    assert "could not be built" in slot.line.value
    slot.need()
    until(lambda: slot.view is not None)
    assert slot.view.name == "second try" and len(attempts) == 2


def test_without_a_corpus_a_need_is_a_clear_error():
    slot, _ = _slot()
    slot.reset(None)
    assert slot.line.value == NO_CORPUS and slot.shown.value is None
    with pytest.raises(CorpusError, match="no Tuner yet: open a corpus on the Corpus page"):
        slot.need()


def test_the_configs_and_live_pages_are_made_when_first_shown_and_kept(tmp_path):
    from workbench.core.config import RewardConfig

    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    box, rc = solara.render(Dashboard(session), handle_error=False)
    try:
        assert _page_widgets(box, "configs") == [] and _page_widgets(box, "live") == []  # nothing of them sent
        assert NO_CORPUS not in _lines(box)  # nor of the view pages
        session.add_config("mine", RewardConfig(strategy="consistent"), "a test")  # before the page exists
        session.show_page(CONFIGS)
        [configs] = _page_widgets(box, "configs")
        names = next(x for x in _widgets(configs) if isinstance(x, w.Select))
        assert list(names.options) == list(session.configs) and "mine" in names.options
        session.add_config("later", RewardConfig(strategy="consistent"), "a test")  # the page lists it at once
        assert names.value == "later" and "later" in names.options
        assert _page_widgets(box, "live") == []
        session.show_page(LIVE)
        assert len(_page_widgets(box, "live")) == 1
        session.show_page(CONFIGS)  # shown again: the same page, not a new one
        assert _page_widgets(box, "configs") == [configs]
        session.show_page(TUNE)  # a view page without a corpus says so
        assert NO_CORPUS in _lines(box)
    finally:
        rc.close()


def test_a_replayer_the_live_page_shows_is_not_taken_over_by_the_sessions(tmp_path):
    from workbench.views.widgets import Replayer

    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    box, rc = solara.render(Dashboard(session), handle_error=False)
    try:
        followed = Replayer(session.corpus[:2], session.baseline)
        session.replayer_view.show(followed)  # what live_page.open_pick does, before the Replay tab was ever shown
        session.show_page(REPLAY)  # a build would start (and take the page) right here
        assert session.replayer_view.shown.value is followed and followed in _widgets(box)
        assert session.replayer is None and not session.building  # nothing built behind it
    finally:
        rc.close()


def test_the_first_paint_signal_counts_once():
    calls: list[int] = []
    signal = FirstPaint(".wb-app-page-corpus input", lambda: calls.append(1))
    assert (signal.selector, signal.timeout_ms) == (".wb-app-page-corpus input", 10_000)
    signal._message(signal, {"other": 1}, [])
    assert calls == [] and not signal.drawn
    for _ in range(2):  # a second view of the widget (or a repeated message) says nothing new
        signal._message(signal, {"drawn": True}, [])
    assert calls == [1] and signal.drawn
