"""The app's Live page without a browser, rendered in Python (``solara.render``) and drawn from the
session's ``LiveState``: the Follow button watches a folder into a target corpus (on the page's
``use_thread``), scores each new episode under the session's configs, names a corrupt file and
goes on, refuses a missing source with a message, and stops; unmounting the page stops the watcher."""

from __future__ import annotations

import json
from pathlib import Path

import ipyvuetify as v
import ipywidgets as w
import solara
from helpers import REPO
from helpers.polling import until

from workbench.data.storage import load_corpus
from workbench.views.app.live_page import LivePage
from workbench.views.app.options import AppOptions
from workbench.views.app.session import AppSession

TASKAPP = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "taskapp"


def _write(folder: Path, run_id: str) -> None:
    document = json.loads((TASKAPP / "per_achievement_env_lambda_half.json").read_text())
    document["run_id"] = run_id
    (folder / f".{run_id}").write_text(json.dumps(document))
    (folder / f".{run_id}").rename(folder / f"{run_id}.json")


class Follow:
    """The Follow button: its label, and a click."""

    def __init__(self, button: v.Btn) -> None:
        self.button = button
        self.description = "".join(str(child) for child in button.children if isinstance(child, str))

    def click(self) -> None:
        self.button.click()


class Page:
    """The rendered page's controls and what it shows, as the old widget page named them."""

    def __init__(self, session: AppSession) -> None:
        self.session = session
        _, self.rc = solara.render(LivePage(session), handle_error=False)
        self.source = self.rc.find(w.Text, description="source").widget
        self.target = self.rc.find(w.Text, description="into").widget
        self.kind = self.rc.find(w.Dropdown, description="kind").widget

    @property
    def follow(self) -> Follow:
        return Follow(self.rc.find(v.Btn, class_="wb-live-follow text-none").widget)

    def html(self, css: str) -> str:
        return self.rc.find(w.HTML, _dom_classes=(css,)).widget.value

    @property
    def state(self):
        return self.session.live.value

    @property
    def live(self):
        return None if self.state.run is None else self.state.run.live


def test_follow_switch_watches_scores_and_reports(tmp_path):
    run, target = tmp_path / "run", tmp_path / "corpus"
    run.mkdir()
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    page = Page(session)  # what the Live tab draws when first shown
    page.source.value, page.target.value, page.kind.value = str(run), str(target), "rollouts"
    page.follow.click()
    try:
        assert page.follow.description == "Following" and page.live is not None
        _write(run, "first-run")
        until(lambda: page.live is not None and len(page.live) == 1, "the first episode")
        (run / "broken.json").write_text("{ not json")
        _write(run, "second-run")
        until(lambda: len(page.live) == 2 and page.state.problems, "the second episode and the problem")
        assert "broken.json" in page.state.problems[0][1] and "broken.json" in page.html("wb-live-problems")
        table = page.live.episodes()
        assert set(table["config"]) == set(session.configs) and len(table) == 2 * len(session.configs)
        until(lambda: "second-run" in page.state.count and page.state.run.timeline.redraws >= 2, "the redraw")
        until(lambda: "audit</b> of the latest episodes (0-1" in page.html("wb-live-audit"), "the audit")
    finally:
        page.follow.click()
    assert page.follow.description == "Follow" and "stopped following" in page.html("wb-app-status")
    assert sorted(load_corpus(target).ids) == ["first-run", "second-run"]
    until(lambda: _free(run, target), "the watcher's thread ended and let the target go")
    page.rc.close()


def test_closing_the_tab_stops_the_watcher(tmp_path):
    """The page unmounted (the tab closed) while following: its watcher's thread is cancelled
    and lets the target go; a file landing after is not read."""
    run, target = tmp_path / "run", tmp_path / "corpus"
    run.mkdir()
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    page = Page(session)
    page.source.value, page.target.value, page.kind.value = str(run), str(target), "rollouts"
    page.follow.click()
    _write(run, "first-run")
    until(lambda: page.live is not None and len(page.live) == 1, "the first episode")
    assert not _free(run, target)  # followed: the target is held
    page.rc.close()
    until(lambda: _free(run, target), "the watcher's thread ended and let the target go")
    _write(run, "late-run")
    assert len(page.live) == 1 and load_corpus(target).ids == ["first-run"]


def _free(run: Path, target: Path) -> bool:
    """Whether a watcher can take ``target`` (none holds it)."""
    from workbench.data.watch import Watcher, open_source
    from workbench.errors import WorkbenchError

    try:
        Watcher(open_source(run, "rollouts"), target).close()
    except WorkbenchError:
        return False
    return True


def test_a_bad_source_is_a_message_and_nothing_follows(tmp_path):
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    page = Page(session)  # what the Live tab draws when first shown
    (tmp_path / "no-such-run.txt").write_text("a file, not a run folder nor a trace database")
    page.source.value, page.target.value = str(tmp_path / "no-such-run.txt"), str(tmp_path / "corpus")
    page.follow.click()
    assert page.follow.description == "Follow" and page.live is None and not page.state.following
    assert "no-such-run.txt" in page.state.status[0] and "no-such-run.txt" in page.html("wb-app-status")
    page.source.value = ""
    page.follow.click()
    assert "give a source folder" in page.state.status[0]
    page.rc.close()


def test_replay_page_goes_back_to_the_session_replayer(tmp_path):
    """A click in the Live timeline shows a Replayer of the followed corpus; a click in the Tuner
    afterwards brings the session's own Replayer back to the Replay page."""
    from workbench.data.sample import sample_corpus
    from workbench.views.widgets import Replayer

    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    corpus = session.corpus
    session.replayer_view.need()  # what the Replay page does when first shown
    until(lambda: session.replayer is not None, "the Replayer built")
    own = session.replayer
    followed = Replayer(corpus[:2], next(iter(session.configs.values())))
    session.replayer_view.show(followed)  # what live_page.open_pick does
    session.show_replay(corpus.ids[3])
    assert session.replayer_view.shown.value is own and own.episode == corpus.ids[3]


def test_the_over_optimisation_watch_is_on_the_page_and_marks_the_timeline(tmp_path):
    """The watch follows with the timeline (too few episodes: how many more it needs), its
    declines are ruled on the timeline, and an episode opened in it shows on the Replay page
    under the config it was opened for."""
    from workbench.views.app.common import REPLAY

    run, target = tmp_path / "run", tmp_path / "corpus"
    run.mkdir()
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    page = Page(session)  # what the Live tab draws when first shown
    page.source.value, page.target.value, page.kind.value = str(run), str(target), "rollouts"
    page.follow.click()
    try:
        watch, timeline = page.state.run.watch, page.state.run.timeline
        [root] = page.rc.find(w.VBox, _dom_classes=("wb-app-page-live",)).widgets
        assert list(root.children[-1].children) == [timeline, watch]  # drawn under the audit
        _write(run, "first-run")
        _write(run, "second-run")
        until(lambda: "2 episode(s) so far" in watch.summary.value, "the watch redrawn")
        assert "it needs at least 12 in arrival order (10 more)" in watch.summary.value
        last = list(session.configs)[-1]
        watch.declines = {last: "second-run"}  # what an alarm on the last config sets
        until(lambda: timeline.decline_lines.visible, "the rule on the timeline")
        assert "the decline began at episode <code>second-run</code>" in timeline.legend.value
        watch.buttons[last].click()  # its button opens the episode where the decline began
        until(lambda: session.page.value == REPLAY, "the Replay page")
        shown = session.replayer_view.shown.value
        assert shown.episode == "second-run" and shown.config is session.configs[last]
        assert page.state.picked is not None and page.state.picked.episode == "second-run"  # the pick is state
    finally:
        page.follow.click()
    page.rc.close()
